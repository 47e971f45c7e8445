// The straggler models through a simulated DDP job (exec/ evaluates it).

#include <doctest/doctest.h>

#include "exec/evaluate.hpp"
#include "models/ddp_job.hpp"
#include "models/straggler.hpp"

using namespace ddpsim;
using models::JitterDistribution;
using models::JitterStraggler;
using sim::Time;

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
    const models::RunResult r = exec::simulate_ddp(job, c.world, 2024);
    REQUIRE(r.step_ms.has_value());
    const double overhead = *r.step_ms - 30.0;
    const double expected = models::expected_slowest_delay_ms(c.jitter, c.world);
    // 20,000 iterations: the standard error is under 0.5% of the expectation
    // for these cases; 2% is about five standard errors.
    CAPTURE(c.world);
    CHECK(overhead == doctest::Approx(expected).epsilon(0.02));
  }
}
