#include "sim/det_math.hpp"

#include <cmath>
#include <stdexcept>

namespace ddpsim::sim {
namespace {

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (Cody and Waite).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kSqrtHalf = 0.70710678118654752440;

// ln(m) for m in [sqrt(1/2), sqrt(2)): 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716;
// the series in s^2 to s^28 leaves under 1e-22 out.
double log_near_one(double m) {
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  double sum = 0;
  for (int k = 14; k >= 1; --k) sum = sum * s2 + 1.0 / (2 * k + 1);
  return 2 * s + 2 * s * s2 * sum;
}

// x = m 2^e with m in [sqrt(1/2), sqrt(2)): frexp and a doubling are exact.
double split(double x, int& e) {
  if (!(x > 0) || !std::isfinite(x)) throw std::domain_error("det_log: expected a finite number > 0");
  double m = std::frexp(x, &e);
  if (m < kSqrtHalf) {
    m *= 2;
    --e;
  }
  return m;
}

}  // namespace

double det_log(double x) {
  int e = 0;
  const double m = split(x, e);
  return e * kLn2Hi + (e * kLn2Lo + log_near_one(m));
}

double det_log2(double x) {
  int e = 0;
  const double m = split(x, e);
  return e + log_near_one(m) / kLn2;
}

double det_log1m(double u) {
  if (!(u >= 0 && u < 1)) throw std::domain_error("det_log1m: expected u in [0, 1)");
  // 1 - u is exact for the uniform draws (multiples of 2^-53); for others it is one rounding.
  return u == 0 ? 0.0 : det_log(1 - u);
}

double det_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 1000) return HUGE_VAL;  // past 709.78 the result overflows, as libm's does
  if (x < -1000) return 0;
  const double k = std::nearbyint(x / kLn2);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;  // |r| <= ln(2)/2 + a rounding
  // e^r by its Taylor series to r^20 / 20! (under 1e-22 left out at |r| = 0.35).
  double sum = 1;
  for (int n = 20; n >= 1; --n) sum = 1 + sum * r / n;
  return std::ldexp(sum, static_cast<int>(k));
}

}  // namespace ddpsim::sim
