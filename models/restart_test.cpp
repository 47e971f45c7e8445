#include "models/restart.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "models/sampler.hpp"

using namespace ddpsim::models;
using ddpsim::sim::Time;

TEST_CASE("Daly's worked examples (FGCS 2006): R = 10 min, C = 5 min") {
  CHECK(daly_interval(5, 24 * 60) == doctest::Approx(117).epsilon(0.005));
  CHECK(daly_interval(5, 6 * 60) == doctest::Approx(57).epsilon(0.01));
  CHECK(daly_interval(5, 15) == doctest::Approx(9.1).epsilon(0.01));
  CHECK(young_interval(5, 24 * 60) == doctest::Approx(120));
  CHECK(daly_interval(40, 15) == 15);  // C >= 2M: checkpoint every M
}

TEST_CASE("Daly's optimum maximises his expected goodput") {
  const double c = 5, r = 10, m = 360;
  const double best = daly_interval(c, m);
  for (double tau : {best * 0.7, best * 0.9, best * 1.1, best * 1.4}) {
    CHECK(expected_goodput(best, c, r, m) > expected_goodput(tau, c, r, m));
  }
}

TEST_CASE("recovery = detection + relaunch + reload + recomputation since the checkpoint") {
  FailureSpec f;
  f.mtbf_hours = 8 * 3;  // per GPU: the job's MTBF is 3 h on 8 GPUs
  f.watchdog = Time::from_ms(600'000);
  f.heartbeat = Time::from_ms(30'000);
  f.relaunch = Time::from_ms(120'000);
  f.horizon_hours = 240;
  CheckpointSpec ck;
  ck.interval = Time::from_ms(30 * 60'000);
  ck.size_gb = 60;
  ck.write_gbps = 2;  // 30 s
  ck.read_gbps = 4;   // 15 s
  const RestartReport r = simulate_restarts(f, ck, 8, 1);
  CHECK(r.job_mtbf_minutes == doctest::Approx(180));
  REQUIRE(r.recoveries.size() > 40);  // ~80 expected over 240 h
  for (const Recovery& rec : r.recoveries) {
    CHECK(rec.detection == Time::from_ms(600'000));
    CHECK(rec.reload == Time::from_ms(15'000));
    CHECK(rec.recompute <= ck.interval);  // never more than one interval of work lost
  }
  CHECK(r.goodput > 0.7);
  CHECK(r.goodput < 1.0);
  // Simulated goodput agrees with Daly's expectation within sampling noise.
  CHECK(r.goodput == doctest::Approx(r.expected_goodput_at_interval).epsilon(0.03));
  // A heartbeat detects in 30 s instead of 10 minutes: more goodput.
  f.detection = Detection::kHeartbeat;
  CHECK(simulate_restarts(f, ck, 8, 1).goodput > r.goodput);
  // Same seed, same failures.
  f.detection = Detection::kWatchdog;
  CHECK(simulate_restarts(f, ck, 8, 1).recoveries.size() == r.recoveries.size());
}

TEST_CASE("a corrupt latest checkpoint falls back to the previous one and pays an interval more") {
  FailureSpec f;
  f.mtbf_hours = 1000;
  f.per_gpu = false;
  f.relaunch = Time::from_ms(60'000);
  f.horizon_hours = 20000;
  f.corrupt_latest = true;
  CheckpointSpec ck;
  ck.interval = Time::from_ms(60 * 60'000);
  ck.size_gb = 1;
  const RestartReport r = simulate_restarts(f, ck, 8, 3);
  REQUIRE(r.recoveries.size() >= 2);
  CHECK(r.recoveries[0].fell_back);
  CHECK(r.recoveries[0].reload == Time::from_ms(2000));  // read the corrupt one, then the previous
  CHECK(r.recoveries[0].recompute >= ck.interval);
  CHECK_FALSE(r.recoveries[1].fell_back);
}

TEST_CASE("elastic resume mid-epoch: every example exactly once over the epoch") {
  const SamplerConfig c{1000, 8, true, 5, false};
  const auto order = epoch_order(c, 2);
  // 8 ranks consumed 3 steps of batch 16: the first 384 positions.
  const ElasticResume e = resume_epoch(order, 1000, 3 * 16 * 8, 6);
  CHECK(e.duplicates.empty());
  CHECK(e.omissions.empty());
  std::size_t rest = 0;
  for (const auto& r : e.ranks) rest += r.size();
  CHECK(rest == 1000 - 384);
  CHECK(e.ranks[0].size() - e.ranks[5].size() <= 1);
}
