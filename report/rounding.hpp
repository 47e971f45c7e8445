#pragma once
// Results carry nanosecond resolution: the JSON renderings round
// milliseconds and ratios to 6 decimals so they hold no floating-point noise.

#include <cmath>

namespace ddpsim::report {

inline double ms6(double ms) { return std::round(ms * 1e6) / 1e6; }
inline double ratio6(double x) { return std::round(x * 1e6) / 1e6; }

}  // namespace ddpsim::report
