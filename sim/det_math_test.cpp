#include "sim/det_math.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "sim/digest.hpp"
#include "sim/random.hpp"

using namespace ddpsim::sim;

namespace {

// Units in the last place between a and b (both finite, same sign).
double ulps(double a, double b) {
  if (a == b) return 0;
  return std::fabs(a - b) / std::fabs(std::nextafter(b, 2 * b) - b);
}

// The bytes of doubles, for a digest.
void append(std::string& out, double v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  out.append(b, sizeof v);
}

}  // namespace

TEST_CASE("det_log, det_log2 and det_exp are within 2 ulp of libm's") {
  Rng rng(11);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    const double u = rng.uniform01();
    const double x = std::ldexp(0.5 + u, static_cast<int>(rng.next_u64() % 200) - 100);
    worst = std::max(worst, ulps(det_log(x), std::log(x)));
    if (std::fabs(std::log2(x)) > 0.5) worst = std::max(worst, ulps(det_log2(x), std::log2(x)));
    const double y = 40 * (u - 0.5);
    worst = std::max(worst, ulps(det_exp(y), std::exp(y)));
    if (u > 1e-3) worst = std::max(worst, ulps(det_log1m(u), std::log1p(-u)));
  }
  MESSAGE("largest difference from libm: " << worst << " ulp");
  CHECK(worst <= 2);
  for (int k = -60; k <= 60; ++k) CHECK(det_log2(std::ldexp(1.0, k)) == k);  // exact at powers of two
  CHECK(det_log1m(0) == 0);
  CHECK(det_exp(0) == 1);
  CHECK(std::isinf(det_exp(800)));
  CHECK(det_exp(-1100) == 0);
}

TEST_CASE("the straggler draws are a fixed function of the seed, on any machine and libm") {
  // A digest of 100,000 exponential draws and 1,000 log2 values: these bits are the simulator's
  // stochastic output, and they must not depend on the machine's libm (README.md, byte-identical).
  std::string bytes;
  Rng rng(2026);
  for (int i = 0; i < 100000; ++i) append(bytes, draw_exponential(rng, 2e6));
  for (int w = 1; w <= 1000; ++w) append(bytes, det_log2(w));
  CHECK(to_hex(sha256(bytes)) == "5407fd7ff8d11dd1684364d024bcb5ae5201515d55c0a827751a7f0c614c3644");
}
