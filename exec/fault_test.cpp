// When the collective contract breaks: each fault, what the backends do, and
// what the failure report says (../shared/reference/ddp_semantics.md section 3).

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>

#include "exec/evaluate.hpp"
#include "models/ddp_job.hpp"

using namespace ddpsim;
using models::Fault;
using models::FaultType;
using sim::Time;

namespace {

// The seed's job: one 36-byte gradient bucket, 4 ranks, 4 iterations x 2 epochs.
models::DdpJob seed_job() {
  models::DdpJob job;
  job.model = models::block_model(Time::from_ms(1), Time::from_ms(2), Time::from_ms(1), 36);
  job.iterations = 4;
  job.epochs = 2;
  job.warmup_iterations = 1;
  job.network = {Time::from_us(5), 100, Time::from_us(10)};
  return job;
}

Fault fault(models::FaultKind kind, std::vector<int> ranks) { return Fault{std::move(ranks), std::move(kind)}; }

}  // namespace

TEST_CASE("skip_backward: silent misalignment, then a hang at the final barrier, culprit named") {
  auto job = seed_job();
  job.faults = {fault(models::fault::SkipBackward{3}, {1})};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kHang);
  REQUIRE(r.failure.has_value());
  const auto& f = *r.failure;
  CHECK(f.waiting_ranks == std::vector<int>{0, 2, 3});
  CHECK(f.missing_ranks == std::vector<int>{1});
  CHECK(f.culprit_rank == 1);
  CHECK(f.ranks[1].op == "barrier after the loop");
  CHECK(f.ranks[0].op == "all_reduce bucket 0 of iteration 7");
  CHECK(f.fix.find("fix_symmetric_skip") != std::string::npos);
  REQUIRE(f.detected_at_ms.has_value());
  CHECK(*f.detected_at_ms > 600'000);
  CHECK(*f.detected_at_ms < 600'100);
  REQUIRE_FALSE(r.misalignments.empty());
  CHECK(r.misalignments[0].rank == 1);
  CHECK(r.misalignments[0].iteration == 4);
  CHECK(r.misalignments[0].with_iteration == 3);
}

TEST_CASE("skip_iteration hangs the same way; agreeing on the skip completes") {
  auto job = seed_job();
  job.faults = {fault(models::fault::SkipIteration{5}, {2})};
  CHECK(exec::simulate_ddp(job, 4, 0).failure->culprit_rank == 2);
  job.faults = {fault(models::fault::SkipBackward{3}, {1})};
  job.agree_on_skip = true;
  const auto fixed = exec::simulate_ddp(job, 4, 0);
  CHECK(fixed.outcome == models::Outcome::kCompleted);
  CHECK_FALSE(fixed.failure.has_value());
  CHECK(fixed.misalignments.empty());
}

TEST_CASE("uneven batches hang; Join shadows the missing iterations and completes") {
  auto job = seed_job();
  Fault uneven = fault(models::fault::UnevenBatches{1}, {0});
  job.faults = {uneven};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kHang);
  CHECK(r.failure->culprit_rank == 0);
  // Rank 0 runs 3 + 3 iterations then its barrier, which meets the others' 7th bucket all-reduce.
  CHECK(r.iterations_run == std::vector<int>{6, 7, 7, 7});
  job.join = true;
  const auto joined = exec::simulate_ddp(job, 4, 0);
  CHECK(joined.outcome == models::Outcome::kCompleted);
  CHECK(joined.misalignments.empty());
  // Per epoch rank 0 shadows one iteration: the count and one zero-filled bucket.
  CHECK(joined.shadow_collectives == std::vector<int>{4, 0, 0, 0});
}

TEST_CASE("rank 0's extra all-reduce: nccl hangs at the mismatch, gloo aborts the smaller side") {
  auto job = seed_job();
  Fault extra = fault(models::fault::ExtraCollective{2, {sim::CollectiveKind::kAllReduce, 4}}, {0});
  job.faults = {extra};
  const auto nccl = exec::simulate_ddp(job, 4, 0);
  CHECK(nccl.outcome == models::Outcome::kHang);
  CHECK(nccl.failure->culprit_rank == 0);
  CHECK(nccl.failure->ranks[0].bytes == 4);
  CHECK(nccl.failure->ranks[1].bytes == 36);
  CHECK(nccl.failure->fix.find("fix_rank0_logging") != std::string::npos);
  job.backend = models::Backend::kGloo;
  job.watchdog_timeout = Time::from_ms(1'800'000);
  const auto gloo = exec::simulate_ddp(job, 4, 0);
  CHECK(gloo.outcome == models::Outcome::kCrash);
  REQUIRE(gloo.errors.size() == 4);
  CHECK(gloo.errors[0].rank == 0);
  CHECK(gloo.errors[0].message.find("op.preamble.length <= op.nbytes") != std::string::npos);
  CHECK(gloo.errors[3].message.find("Connection closed by peer (rank 0 exited)") != std::string::npos);
  CHECK(*gloo.failure->detected_at_ms < 100);
  // Every rank joining the metric's all-reduce: no mismatch.
  extra.ranks = {0, 1, 2, 3};
  job.faults = {extra};
  CHECK(exec::simulate_ddp(job, 4, 0).outcome == models::Outcome::kCompleted);
}

TEST_CASE("unused parameters on one rank: its next forward raises; the others wait for its bucket") {
  auto job = seed_job();
  Fault unused = fault(models::fault::UnusedParameters{2, {0}}, {1});
  job.faults = {unused};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kCrash);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].rank == 1);
  CHECK(r.errors[0].message.find("Expected to have finished reduction in the prior iteration") != std::string::npos);
  REQUIRE(r.failure.has_value());
  CHECK(r.failure->waiting_ranks == std::vector<int>{0, 2, 3});
  CHECK(r.failure->missing_ranks == std::vector<int>{1});
  CHECK(r.failure->ranks[1].state == models::RankState::kCrashed);
  job.ddp.find_unused_parameters = true;
  CHECK(exec::simulate_ddp(job, 4, 0).outcome == models::Outcome::kCompleted);
}

TEST_CASE("a crash at a time: reported at once; without a watchdog nothing else would end the job") {
  auto job = seed_job();
  Fault crash = fault(models::fault::Crash{-1, Time::from_ms(20)}, {3});
  job.faults = {crash};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kCrash);
  CHECK(*r.failure->detected_at_ms == doctest::Approx(20));
  CHECK(r.failure->culprit_rank == 3);
  job.faults = {fault(models::fault::SkipBackward{3}, {1})};
  job.watchdog_timeout = Time::zero();
  const auto forever = exec::simulate_ddp(job, 4, 0);
  CHECK(forever.outcome == models::Outcome::kHang);
  CHECK_FALSE(forever.failure->detected_at_ms.has_value());
}

TEST_CASE("stragglers: a slow rank waits least, the others' wait is its cost; a slow link slows everyone") {
  auto job = seed_job();
  job.epochs = 1;
  job.iterations = 6;
  // forward + backward + optimizer: 4 ms -> 8 ms, from iteration 0 to the end
  Fault slow = fault(models::fault::Slowdown{2, 0, -1, false}, {2});
  job.faults = {slow};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.ranks[2].wait_ms == doctest::Approx(0));
  // Rank 2 reaches the all-reduce 3 ms late (forward and backward doubled);
  // its optimizer step (2 ms instead of 1) delays the next iteration's start by 1 ms more.
  CHECK(r.ranks[0].wait_ms == doctest::Approx(3 + 1));
  auto fast = seed_job();
  Fault link = fault(models::fault::SlowLink{4, std::nullopt}, {0});
  fast.model = models::block_model(Time::from_ms(1), Time::from_ms(2), Time::from_ms(1), 400'000'000);
  const double base = exec::simulate_ddp(fast, 4, 0).ranks[0].collective_ms;
  fast.faults = {link};
  const double slowed = exec::simulate_ddp(fast, 4, 0).ranks[0].collective_ms;
  // 1.5 * 400 MB at 100 GB/s is 6 ms; at 25 GB/s, 24 ms; latency and launch are unchanged.
  CHECK(slowed - base == doctest::Approx(18).epsilon(1e-6));
}

TEST_CASE("rank 0 writing an artifact makes the others wait at the next collective") {
  auto job = seed_job();
  Fault artifact = fault(models::fault::Rank0Artifact{4, 0, Time::from_ms(50)}, {0});
  job.faults = {artifact};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kCompleted);
  CHECK(r.ranks[0].wait_ms == doctest::Approx(0));
  CHECK(r.ranks[1].wait_ms * 7 == doctest::Approx(50));  // one 50 ms wait over 7 measured iterations
}

TEST_CASE("debug fingerprints: fail at the first divergent collective, at a priced cost") {
  auto job = seed_job();
  job.fingerprint = true;
  const double clean = *exec::simulate_ddp(seed_job(), 4, 0).step_ms;
  const double checked = *exec::simulate_ddp(job, 4, 0).step_ms;
  // One extra all-gather of 4 x 64 bytes per collective: 10 us launch + 3 x 5 us + 192 B at 100 GB/s.
  CHECK(checked - clean == doctest::Approx(0.010 + 0.015 + 0.00192).epsilon(0.01));
  job.faults = {fault(models::fault::SkipBackward{3}, {1})};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kCrash);
  REQUIRE(r.errors.size() == 4);
  CHECK(r.errors[0].message.find("Detected mismatch between collectives on ranks") != std::string::npos);
  CHECK(r.errors[0].message.find("OpType=barrier") != std::string::npos);
  CHECK(*r.failure->detected_at_ms < 1000);  // at once, not after the 600 s watchdog
  CHECK(r.failure->culprit_rank == 1);
}

TEST_CASE("a link that slows mid-run: the same as from the start at 0, as none after the end, between the two between") {
  auto job = seed_job();
  job.epochs = 1;
  job.iterations = 6;
  job.model = models::block_model(Time::from_ms(1), Time::from_ms(2), Time::from_ms(1), 400'000'000);
  const auto run = [&](std::optional<models::fault::SlowLink> link) {
    job.faults.clear();
    if (link) job.faults.push_back(fault(*link, {0}));
    const models::RunResult r = exec::simulate_ddp(job, 4, 0);
    REQUIRE(r.outcome == models::Outcome::kCompleted);
    return r;
  };
  const models::RunResult none = run(std::nullopt);
  const models::RunResult from_start = run(models::fault::SlowLink{4, std::nullopt});
  const models::RunResult at_zero = run(models::fault::SlowLink{4, Time::zero()});
  const models::RunResult after_end = run(models::fault::SlowLink{4, none.end + Time::from_ms(1)});
  const models::RunResult midway = run(models::fault::SlowLink{4, Time::ns(none.end.count_ns() / 2)});
  CHECK(at_zero.end == from_start.end);
  CHECK(*at_zero.step_ms == doctest::Approx(*from_start.step_ms));
  CHECK(after_end.end == none.end);
  CHECK(none.end < midway.end);
  CHECK(midway.end < from_start.end);
  CHECK_FALSE(midway.levelized);
  CHECK_FALSE(midway.fast_path);
}
