#pragma once
// Simulated time: an integer count of nanoseconds. Used both for instants
// (nanoseconds since the simulation started) and for spans.

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace ddpsim::sim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ns(std::int64_t n) { return Time(n); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  /// Rounds a finite span in milliseconds to the nearest nanosecond (ties away from zero).
  static Time from_ms(double ms) { return from_scaled(ms, 1e6); }
  /// Rounds a finite span in microseconds to the nearest nanosecond.
  static Time from_us(double us) { return from_scaled(us, 1e3); }

  constexpr std::int64_t count_ns() const { return ns_; }
  constexpr double ms() const { return static_cast<double>(ns_) / 1e6; }
  constexpr double us() const { return static_cast<double>(ns_) / 1e3; }

  friend constexpr auto operator<=>(Time, Time) = default;
  friend constexpr Time operator+(Time a, Time b) { return Time(a.ns_ + b.ns_); }
  friend constexpr Time operator-(Time a, Time b) { return Time(a.ns_ - b.ns_); }
  friend constexpr Time operator*(Time a, std::int64_t k) { return Time(a.ns_ * k); }
  constexpr Time& operator+=(Time b) {
    ns_ += b.ns_;
    return *this;
  }
  constexpr Time& operator-=(Time b) {
    ns_ -= b.ns_;
    return *this;
  }

 private:
  constexpr explicit Time(std::int64_t n) : ns_(n) {}
  static Time from_scaled(double value, double ns_per_unit) {
    const double n = std::round(value * ns_per_unit);
    // 2^62 ns is about 146 years: far past any simulation, far from overflow.
    if (!std::isfinite(n) || std::fabs(n) > 4.6e18) {
      throw std::out_of_range("time value out of range");
    }
    return Time(static_cast<std::int64_t>(n));
  }
  std::int64_t ns_ = 0;
};

constexpr Time max(Time a, Time b) { return a < b ? b : a; }
constexpr Time min(Time a, Time b) { return a < b ? a : b; }

}  // namespace ddpsim::sim
