#include "models/straggler.hpp"

#include <doctest/doctest.h>

#include "models/ddp_job.hpp"

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

// The oracle test of the stochastic form: simulate a job whose only variable
// cost is the jitter and compare the mean step overhead with the expected
// maximum of W draws.
TEST_CASE("stochastic straggler: the slowest-rank delay matches order statistics") {
  struct Case {
    JitterStraggler jitter;
    int world;
  };
  const Case cases[] = {
      {{JitterDistribution::kExponential, Time::from_ms(1), {}}, 8},   // 1 ms * H_8 = 2.718 ms
      {{JitterDistribution::kExponential, Time::from_ms(2), {}}, 32},  // 2 ms * H_32 = 8.116 ms
      {{JitterDistribution::kUniform, {}, Time::from_ms(4)}, 8},       // 4 ms * 8/9 = 3.556 ms
  };
  for (const Case& c : cases) {
    models::DdpJob job;
    job.model = models::block_model(Time::from_ms(10), Time::from_ms(20), Time::zero(), 1024);
    job.iterations = 20001;
    job.warmup_iterations = 1;
    job.network = {Time::zero(), 1e9, Time::zero()};  // effectively free communication
    job.straggler = c.jitter;
    const models::RunResult r = models::simulate_ddp(job, c.world, 2024);
    REQUIRE(r.step_ms.has_value());
    const double overhead = *r.step_ms - 30.0;
    const double expected = models::expected_slowest_delay_ms(c.jitter, c.world);
    // 20,000 iterations: the standard error is under 0.5% of the expectation
    // for these cases; 2% is about five standard errors.
    CAPTURE(c.world);
    CHECK(overhead == doctest::Approx(expected).epsilon(0.02));
  }
}
