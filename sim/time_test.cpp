#include "sim/time.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using ddpsim::sim::Time;

TEST_CASE("time is integer nanoseconds, rounded to nearest from milliseconds") {
  CHECK(Time::from_ms(1.5).count_ns() == 1'500'000);
  CHECK(Time::from_us(0.0004).count_ns() == 0);
  CHECK(Time::from_us(0.0006).count_ns() == 1);
  CHECK(Time::from_ms(0.18).count_ns() == 180'000);
  CHECK((Time::from_ms(2) - Time::from_ms(0.5)).ms() == doctest::Approx(1.5));
  CHECK(Time::ns(3) < Time::ns(4));
}

TEST_CASE("non-finite or huge spans are refused") {
  CHECK_THROWS(Time::from_ms(std::numeric_limits<double>::quiet_NaN()));
  CHECK_THROWS(Time::from_ms(std::numeric_limits<double>::infinity()));
  CHECK_THROWS(Time::from_ms(1e20));
}
