#include "models/straggler.hpp"

#include <doctest/doctest.h>


using namespace ddpsim;
using models::JitterDistribution;
using models::JitterStraggler;
using models::Log2Straggler;
using sim::Time;

TEST_CASE("log2 straggler: penalty * log2 W on one rank only") {
  const models::StragglerModel m = Log2Straggler{Time::from_ms(4.9), -1};
  CHECK(models::straggler_delay(m, 15, 0, 16, 1) == Time::from_ms(19.6));
  CHECK(models::straggler_delay(m, 0, 0, 16, 1) == Time::zero());
  CHECK(models::straggler_delay(m, 0, 0, 1, 1) == Time::zero());
  const models::StragglerModel first = Log2Straggler{Time::from_ms(2), 0};
  CHECK(models::straggler_delay(first, 0, 3, 8, 1) == Time::from_ms(6));
}

TEST_CASE("jitter draws are a pure function of (seed, rank, iteration)") {
  const models::StragglerModel m = JitterStraggler{JitterDistribution::kExponential, Time::from_ms(1), {}};
  CHECK(models::straggler_delay(m, 3, 7, 8, 42) == models::straggler_delay(m, 3, 7, 8, 42));
  CHECK(models::straggler_delay(m, 3, 7, 8, 42) != models::straggler_delay(m, 3, 8, 8, 42));
  CHECK(models::straggler_delay(m, 3, 7, 8, 42) != models::straggler_delay(m, 3, 7, 8, 43));
}
