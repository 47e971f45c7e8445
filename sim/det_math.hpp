#pragma once
// The logarithm and exponential a simulation's output depends on, computed
// with IEEE-754 +, -, *, / only (each correctly rounded, the same on every
// machine; the project compiles with -ffp-contract=off so none is fused).
// libm's log1p, log2 and exp differ in their last bits between libm versions
// and architectures; a straggler draw that goes through them could round to
// another nanosecond on another machine. These are within 2 ulp of libm's
// (sim/det_math_test.cpp) and bit for bit the same everywhere.

namespace ddpsim::sim {

/// ln(x) for finite x > 0.
double det_log(double x);
/// log2(x) for finite x > 0; exact at powers of two.
double det_log2(double x);
/// ln(1 - u) for u in [0, 1): -det_log1m(u) is an exponential draw's scale factor.
double det_log1m(double u);
/// e^x: +inf past 709.78, 0 (or a subnormal) below -708, as libm's.
double det_exp(double x);

}  // namespace ddpsim::sim
