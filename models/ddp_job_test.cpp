#include "models/ddp_job.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ddpsim;
using sim::Time;

namespace {

// The seed chapter's all-reduce scaling lab (scenarios/scaling_lab.yaml).
models::DdpJob scaling_lab() {
  models::DdpJob job;
  job.model = models::block_model(Time::from_ms(40), Time::from_ms(80), Time::from_ms(0.25), 4'000'000);
  job.iterations = 6;
  job.warmup_iterations = 2;  // iteration 1 rebuilds the buckets
  job.network = {Time::from_us(180), 25.0, Time::from_us(50)};
  job.straggler = models::Log2Straggler{Time::from_ms(4.9), -1};
  return job;
}

}  // namespace

TEST_CASE("single-block step: compute + un-overlapped ring all-reduce + straggler") {
  const models::DdpJob job = scaling_lab();
  for (int w : {1, 2, 3, 4, 8, 16}) {
    const models::RunResult r = models::simulate_ddp(job, w, 0);
    REQUIRE(r.outcome == models::Outcome::kCompleted);
    const double ring = models::ring_all_reduce_time(job.network, 4'000'000, w).ms();
    const double strag = 4.9 * std::log2(w);
    CAPTURE(w);
    CHECK(*r.step_ms == doctest::Approx(120.25 + ring + strag).epsilon(1e-8));
    CHECK(r.global_batch == 32 * w);
    CHECK(r.measured_iterations == 4);
  }
}

TEST_CASE("the seed's scaling-lab table comes out of the model") {
  const models::DdpJob job = scaling_lab();
  const double seed_table[][2] = {{1, 120.3}, {2, 125.7}, {4, 131.4}, {8, 137.8}, {16, 145.6}};
  for (const auto& [w, step] : seed_table) {
    const models::RunResult r = models::simulate_ddp(job, static_cast<int>(w), 0);
    CAPTURE(w);
    CHECK(std::round(*r.step_ms * 10) / 10 == doctest::Approx(step));
  }
}

TEST_CASE("per-rank accounting: the straggler computes, the others wait") {
  const models::DdpJob job = scaling_lab();
  const models::RunResult r = models::simulate_ddp(job, 4, 0);
  REQUIRE(r.ranks.size() == 4);
  const double ring = models::ring_all_reduce_time(job.network, 4'000'000, 4).ms();
  for (const models::RankStats& s : r.ranks) {
    CAPTURE(s.rank);
    CHECK(s.collective_ms == doctest::Approx(ring));
    CHECK(s.exposed_comm_ms == doctest::Approx(ring));  // one bucket after backward: nothing hidden
    if (s.rank == 3) {
      CHECK(s.compute_ms == doctest::Approx(120.25 + 9.8));
      CHECK(s.wait_ms == doctest::Approx(0));
    } else {
      CHECK(s.compute_ms == doctest::Approx(120.25));
      CHECK(s.wait_ms == doctest::Approx(9.8));
    }
  }
}

TEST_CASE("data loading sits on the critical path of a synchronous loop") {
  models::DdpJob job = scaling_lab();
  job.data_load = Time::from_ms(7);
  const models::RunResult with = models::simulate_ddp(job, 2, 0);
  job.data_load = Time::zero();
  const models::RunResult without = models::simulate_ddp(job, 2, 0);
  CHECK(*with.step_ms - *without.step_ms == doctest::Approx(7));
  CHECK(with.ranks[0].data_ms == doctest::Approx(7));
}

TEST_CASE("warm-up iterations are excluded from the step time") {
  models::DdpJob job = scaling_lab();
  job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}};
  job.iterations = 3;
  job.warmup_iterations = 2;
  const models::RunResult r = models::simulate_ddp(job, 4, 9);
  CHECK(r.measured_iterations == 1);
  // The measured step is the last iteration alone: compare with a full run's last step.
  job.warmup_iterations = 0;
  const models::RunResult all = models::simulate_ddp(job, 4, 9);
  CHECK(*all.step_ms * 3 == doctest::Approx(all.end.ms()));
  CHECK(*r.step_ms < all.end.ms());
  CHECK_THROWS_AS(([&] {
                    job.warmup_iterations = 3;
                    return models::simulate_ddp(job, 4, 9);
                  })(),
                  std::invalid_argument);
}

TEST_CASE("same seed, same result; the stochastic form depends on the seed") {
  models::DdpJob job = scaling_lab();
  job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}};
  const auto a = models::simulate_ddp(job, 8, 5);
  const auto b = models::simulate_ddp(job, 8, 5);
  const auto c = models::simulate_ddp(job, 8, 6);
  CHECK(*a.step_ms == *b.step_ms);
  CHECK(a.end == b.end);
  CHECK(*a.step_ms != *c.step_ms);
}
