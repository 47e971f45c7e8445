#pragma once
// Simulated time: an integer count of nanoseconds. Used both for instants
// (nanoseconds since the simulation started) and for spans.
//
// Every way into Time is checked: from a double (from_ns, from_us, from_ms)
// a value that is not finite or lies outside +-2^62 ns (about 146 years)
// throws TimeRangeError naming the quantity it was to hold; +, - and * throw
// the same on int64 overflow. A run never turns an overflow into a number.

#include <cmath>
#include <compare>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace ddpsim::sim {

/// A time outside what Time holds. quantity() says what was being computed,
/// in words that name the scenario keys it came from where the caller knows them.
class TimeRangeError : public std::out_of_range {
 public:
  TimeRangeError(std::string quantity, double value_ns)
      : std::out_of_range(quantity + " is " + describe(value_ns) +
                          ", outside simulated time's range (2^62 ns, about 146 years)"),
        quantity_(std::move(quantity)),
        value_ns_(value_ns) {}
  const std::string& quantity() const { return quantity_; }
  double value_ns() const { return value_ns_; }

 private:
  static std::string describe(double ns) {
    if (std::isnan(ns)) return "not a number";
    if (std::isinf(ns)) return ns > 0 ? "infinite" : "minus infinity";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g s", ns / 1e9);
    return buf;
  }
  std::string quantity_;
  double value_ns_;
};

class Time {
 public:
  /// The largest span a double converts to: 2^62 ns, so that the sum of two stays representable.
  static constexpr double kMaxNs = 4611686018427387904.0;

  constexpr Time() = default;
  static constexpr Time ns(std::int64_t n) { return Time(n); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  /// Rounds a span in nanoseconds to the nearest nanosecond (ties away from
  /// zero); throws TimeRangeError naming `quantity` when it is not finite or past kMaxNs.
  static Time from_ns(double ns, const char* quantity = "a simulated time") {
    const double n = std::round(ns);
    if (!std::isfinite(n) || std::fabs(n) > kMaxNs) throw TimeRangeError(quantity, ns);
    return Time(static_cast<std::int64_t>(n));
  }
  static Time from_ms(double ms, const char* quantity = "a simulated time") { return from_ns(ms * 1e6, quantity); }
  static Time from_us(double us, const char* quantity = "a simulated time") { return from_ns(us * 1e3, quantity); }

  constexpr std::int64_t count_ns() const { return ns_; }
  constexpr double ms() const { return static_cast<double>(ns_) / 1e6; }
  constexpr double us() const { return static_cast<double>(ns_) / 1e3; }

  friend constexpr auto operator<=>(Time, Time) = default;
  friend constexpr Time operator+(Time a, Time b) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a.ns_, b.ns_, &r)) overflow("a sum of simulated times", a, b, 1.0);
    return Time(r);
  }
  friend constexpr Time operator-(Time a, Time b) {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a.ns_, b.ns_, &r)) overflow("a difference of simulated times", a, b, -1.0);
    return Time(r);
  }
  friend constexpr Time operator*(Time a, std::int64_t k) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a.ns_, k, &r)) {
      throw TimeRangeError("a multiple of a simulated time", static_cast<double>(a.ns_) * static_cast<double>(k));
    }
    return Time(r);
  }
  /// k times this span; throws TimeRangeError naming `quantity` on overflow.
  constexpr Time times(std::int64_t k, const char* quantity) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(ns_, k, &r)) throw TimeRangeError(quantity, static_cast<double>(ns_) * static_cast<double>(k));
    return Time(r);
  }
  constexpr Time& operator+=(Time b) { return *this = *this + b; }
  constexpr Time& operator-=(Time b) { return *this = *this - b; }

 private:
  constexpr explicit Time(std::int64_t n) : ns_(n) {}
  [[noreturn]] static void overflow(const char* what, Time a, Time b, double sign) {
    throw TimeRangeError(what, static_cast<double>(a.ns_) + sign * static_cast<double>(b.ns_));
  }
  std::int64_t ns_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

}  // namespace ddpsim::sim
