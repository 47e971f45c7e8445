#include "exec/evaluate.hpp"
#include "models/ddp_job.hpp"
#include "models/baseline.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/random.hpp"

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
    const models::RunResult r = exec::simulate_ddp(job, w, 0);
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
    const models::RunResult r = exec::simulate_ddp(job, static_cast<int>(w), 0);
    CAPTURE(w);
    CHECK(std::round(*r.step_ms * 10) / 10 == doctest::Approx(step));
  }
}

TEST_CASE("per-rank accounting: the straggler computes, the others wait") {
  const models::DdpJob job = scaling_lab();
  const models::RunResult r = exec::simulate_ddp(job, 4, 0);
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
  const models::RunResult with = exec::simulate_ddp(job, 2, 0);
  job.data_load = Time::zero();
  const models::RunResult without = exec::simulate_ddp(job, 2, 0);
  CHECK(*with.step_ms - *without.step_ms == doctest::Approx(7));
  CHECK(with.ranks[0].data_ms == doctest::Approx(7));
}

TEST_CASE("warm-up iterations are excluded from the step time") {
  models::DdpJob job = scaling_lab();
  job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}};
  job.iterations = 3;
  job.warmup_iterations = 2;
  const models::RunResult r = exec::simulate_ddp(job, 4, 9);
  CHECK(r.measured_iterations == 1);
  // The measured step is the last iteration alone: compare with a full run's last step.
  job.warmup_iterations = 0;
  job.final_barrier = false;  // so the run ends with the last iteration
  const models::RunResult all = exec::simulate_ddp(job, 4, 9);
  CHECK(*all.step_ms * 3 == doctest::Approx(all.end.ms()));
  CHECK(*r.step_ms < all.end.ms());
  CHECK_THROWS_AS(([&] {
                    job.warmup_iterations = 3;
                    return exec::simulate_ddp(job, 4, 9);
                  })(),
                  std::invalid_argument);
}

TEST_CASE("same seed, same result; the stochastic form depends on the seed") {
  models::DdpJob job = scaling_lab();
  job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}};
  const auto a = exec::simulate_ddp(job, 8, 5);
  const auto b = exec::simulate_ddp(job, 8, 5);
  const auto c = exec::simulate_ddp(job, 8, 6);
  CHECK(*a.step_ms == *b.step_ms);
  CHECK(a.end == b.end);
  CHECK(*a.step_ms != *c.step_ms);
}

namespace {

// Four 1 MB fp32 parameters, 10 ms of backward each; each in its own bucket
// after the rebuild; on 2 ranks at 1 GB/s each bucket's all-reduce takes
// 2(W-1)/W * 1 MB / (1 B/ns) = 1 ms.
models::DdpJob four_buckets(double bucket_ms) {
  models::DdpJob job;
  for (const char* n : {"a", "b", "c", "d"}) job.model.parameters.push_back({n, {250'000}, models::DType::kFloat32});
  job.model.ready_order = {3, 2, 1, 0};
  job.model.forward.assign(4, Time::from_ms(5));
  job.model.backward.assign(4, Time::from_ms(10));
  job.model.optimizer = Time::from_ms(2);
  job.ddp.bucket_cap_bytes = models::kMiB / 2;
  job.ddp.first_bucket_bytes = models::kMiB / 2;
  job.iterations = 5;
  job.warmup_iterations = 2;
  job.network = {Time::zero(), 1.0 / bucket_ms, Time::zero()};
  return job;
}

}  // namespace

TEST_CASE("bucket all-reduces overlap the rest of backward; only the tail is exposed") {
  const auto r = exec::simulate_ddp(four_buckets(1), 2, 0);
  REQUIRE(r.outcome == models::Outcome::kCompleted);
  // forward 20 + backward 40 + last bucket 1 + optimizer 2.
  CHECK(*r.step_ms == doctest::Approx(63));
  const auto& s = r.ranks[0];
  CHECK(s.collective_ms == doctest::Approx(4));
  CHECK(s.exposed_comm_ms == doctest::Approx(1));
  CHECK(s.forward_compute_ms == doctest::Approx(20));
  CHECK(s.backward_compute_ms == doctest::Approx(40));
  CHECK(s.backward_comm_ms == doctest::Approx(31));     // first launch at 10 ms into backward, done at 41
  CHECK(s.backward_overlap_ms == doctest::Approx(30));  // launch to end of backward compute
}

TEST_CASE("buckets launch in index order: slow communication queues up behind backward") {
  // 15 ms per bucket: 10-25, 25-40, 40-55, 55-70 ms into backward; compute ends at 40.
  const auto r = exec::simulate_ddp(four_buckets(15), 2, 0);
  CHECK(*r.step_ms == doctest::Approx(20 + 70 + 2));
  CHECK(r.ranks[1].exposed_comm_ms == doctest::Approx(30));
}

TEST_CASE("the construction bucket holds everything: no overlap before the rebuild") {
  auto job = four_buckets(1);
  job.iterations = 3;
  job.warmup_iterations = 0;
  const auto r = exec::simulate_ddp(job, 2, 0);
  // Iteration 0: one 4 MB bucket after backward (4 ms); the construction broadcast of the
  // 4 MB of parameters (4 ms) comes first. Iteration 1 adds the rebuild's two
  // broadcasts (20 and 20 bytes: 40 ns). Iteration 2 is steady: 63 ms.
  CHECK(r.end.ms() == doctest::Approx(4 + (20 + 40 + 4 + 2) + 63 + 63).epsilon(1e-6));
}

TEST_CASE("buffers are broadcast before every syncing forward") {
  auto job = four_buckets(1);
  job.model.buffers.push_back({"running_mean", {250'000}, models::DType::kFloat32});  // 1 MB: 1 ms
  const auto r = exec::simulate_ddp(job, 2, 0);
  CHECK(*r.step_ms == doctest::Approx(64));
  CHECK(r.ranks[0].exposed_comm_ms == doctest::Approx(2));
  job.ddp.broadcast_buffers = false;
  CHECK(*exec::simulate_ddp(job, 2, 0).step_ms == doctest::Approx(63));
}

TEST_CASE("gradient accumulation: no_sync micro-steps, one all-reduce set, one buffer broadcast") {
  auto job = four_buckets(1);
  job.model.buffers.push_back({"running_mean", {250'000}, models::DType::kFloat32});
  job.ddp.gradient_accumulation = 3;
  const auto r = exec::simulate_ddp(job, 2, 0);
  // 1 ms broadcast + 3 x (20 + 40) + last bucket 1 + optimizer 2.
  CHECK(*r.step_ms == doctest::Approx(1 + 180 + 1 + 2));
  CHECK(r.global_batch == 32 * 2 * 3);
  CHECK(r.ranks[0].collective_ms == doctest::Approx(5));
}

TEST_CASE("find_unused_parameters: no rebuild, traversal, and the used-map all-reduce") {
  auto job = four_buckets(1);
  job.ddp.find_unused_parameters = true;
  job.ddp.traversal_per_tensor = Time::from_us(250);  // 4 tensors: 1 ms
  const auto r = exec::simulate_ddp(job, 2, 0);
  // Construction buckets with [0.5 MiB, 0.5 MiB]: one per parameter, reversed: the same
  // overlap as the rebuilt ones here. The used map is 16 bytes: ~0 ms.
  CHECK(*r.step_ms == doctest::Approx(20 + 1 + 40 + 1 + 2).epsilon(1e-4));
  job.ddp.unused_parameters = {1};  // b: no gradient, no backward time, ready at the first hook
  const auto u = exec::simulate_ddp(job, 2, 0);
  CHECK(u.outcome == models::Outcome::kCompleted);
  CHECK(*u.step_ms == doctest::Approx(20 + 1 + 30 + 1 + 2).epsilon(1e-4));
}

TEST_CASE("ddp.bucket_copy_GBps: copy-in at each hook, copy-out after each bucket's all-reduce") {
  auto job = four_buckets(1);
  job.ddp.bucket_copy_bytes_per_s = 1e9;  // 1 MB a parameter: 1 ms each way
  for (int w : {1, 2}) {
    CAPTURE(w);
    const auto r = exec::simulate_ddp(job, w, 0);
    // forward 20 + backward 4 x (10 + 1 copy-in); the buckets' all-reduces (1 ms at
    // W = 2) end by 65, under the copy-outs 64..68 that follow backward; optimizer 2.
    CHECK(*r.step_ms == doctest::Approx(20 + 44 + 4 + 2));
    CHECK(r.ranks[0].backward_compute_ms == doctest::Approx(44));
  }
  // A copy-out waits for its bucket: with 15 ms buckets the last ends at
  // 20 + 11 + 4 x 15 = 91, its copy-out 92, the optimizer 94.
  auto slow = four_buckets(15);
  slow.ddp.bucket_copy_bytes_per_s = 1e9;
  CHECK(*exec::simulate_ddp(slow, 2, 0).step_ms == doctest::Approx(94));
  // The closed form adds both copies serially: 20 + 40 + 2 + 2 x 4 + 4 all-reduces.
  CHECK(models::closed_form_step_ms(job, 2) == doctest::Approx(74));
  // Unset: no copy, no extra op.
  CHECK(*exec::simulate_ddp(four_buckets(1), 2, 0).step_ms == doctest::Approx(63));
}

TEST_CASE("contention.compute_slowdown: backward slows while a bucket's all-reduce is in flight") {
  auto job = four_buckets(1);
  job.compute_slowdown = 1;  // half speed beside a collective
  // Bucket 0's all-reduce (30..31) halves the speed of the next backward piece
  // for 1 ms: it ends at 40.5; likewise 50.5 + 0.5 = 51 and 61.5. The last
  // bucket (61.5..62.5) overlaps no compute: the optimizer follows it, 64.5.
  exec::ExecutionPolicy per_rank;
  per_rank.fast_path = false;
  for (const exec::ExecutionPolicy& policy : {exec::ExecutionPolicy{}, per_rank}) {
    const auto r = exec::simulate_ddp(job, 2, 0, policy);
    CHECK(*r.step_ms == doctest::Approx(64.5));
    CHECK(r.ranks[1].backward_compute_ms == doctest::Approx(41.5));
  }
  // One rank: nothing to wait for, nothing in flight for long; zero: as before.
  CHECK(*exec::simulate_ddp(job, 1, 0).step_ms == doctest::Approx(62));
  job.compute_slowdown = 0;
  CHECK(*exec::simulate_ddp(job, 2, 0).step_ms == doctest::Approx(63));
}

TEST_CASE("contention.comm_slowdown: a bucket's all-reduce slows while backward computes beside it") {
  // 15 ms a bucket, launched 10, 20, 30 and 40 ms into backward, which
  // computes until 40. Alone: 10-25, 25-40, 40-55, 55-70. With c = 1 the
  // first runs beside compute for all of 10..40 at half speed, 15 ms of work
  // in 30: it ends at 40, and the rest run alone: 40-55, 55-70, 70-85.
  auto job = four_buckets(15);
  job.comm_slowdown = 1;
  exec::ExecutionPolicy per_rank;
  per_rank.fast_path = false;
  for (const exec::ExecutionPolicy& policy : {exec::ExecutionPolicy{}, per_rank}) {
    const auto r = exec::simulate_ddp(job, 2, 0, policy);
    CHECK(*r.step_ms == doctest::Approx(20 + 85 + 2));
    CHECK(r.ranks[1].backward_compute_ms == doctest::Approx(40));  // compute is not slowed
    CHECK(r.ranks[1].exposed_comm_ms == doctest::Approx(45));
  }
  job.comm_slowdown = 0;
  CHECK(*exec::simulate_ddp(job, 2, 0).step_ms == doctest::Approx(20 + 70 + 2));
}

TEST_CASE("a link that goes down: every rank waits in the next collective; the watchdog names the cut rank") {
  // Steps of 63 ms (forward 20, backward 40, the last bucket 1, the optimizer 2); rank 1's link goes
  // down 100 ms in, in step 1: its next bucket never completes, and under a 1 s watchdog the job ends
  // 1 s after the first rank reached it.
  auto job = four_buckets(1);
  job.watchdog_timeout = Time::from_ms(1000);
  job.faults.push_back(models::Fault{{1}, models::fault::LinkDown{Time::from_ms(100)}});
  const models::RunResult r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kHang);
  REQUIRE(r.failure);
  CHECK(r.failure->culprit_rank == 1);
  CHECK(r.failure->reason.find("rank 1's network link went down at 100.000 ms (fault: link_down)") != std::string::npos);
  CHECK(r.failure->missing_ranks.empty());  // everyone issued it
  CHECK(r.failure->fix.find("bring the host's link back") != std::string::npos);
  CHECK(r.failure->detection.find("watchdog") != std::string::npos);
  REQUIRE(r.failure->detected_at_ms);
  CHECK(*r.failure->detected_at_ms > 1100);  // reached after the cut (100 ms) ...
  CHECK(*r.failure->detected_at_ms < 1163);  // ... within the step it came in
  // Without a watchdog it waits forever.
  job.watchdog_timeout = Time::zero();
  const models::RunResult forever = exec::simulate_ddp(job, 4, 0);
  CHECK(forever.outcome == models::Outcome::kHang);
  CHECK(forever.failure->detection.find("never") != std::string::npos);
}

TEST_CASE("unused parameters without find_unused_parameters: PyTorch's error at the next forward") {
  auto job = four_buckets(1);
  job.ddp.unused_parameters = {1, 2};
  const auto r = exec::simulate_ddp(job, 4, 0);
  CHECK(r.outcome == models::Outcome::kCrash);
  REQUIRE(r.errors.size() == 4);
  CHECK(r.errors[0].at_ms > 0);
  REQUIRE(r.failure.has_value());
  CHECK(r.failure->reason.find("crashed") != std::string::npos);
  CHECK(r.errors[3].message.find("Expected to have finished reduction in the prior iteration") != std::string::npos);
  CHECK(r.errors[3].message.find("did not receive grad for rank 3: 1 2") != std::string::npos);
  CHECK(r.blocked.empty());
}

namespace {

models::Fault fault_on(models::FaultKind kind, int rank) { return models::Fault{{rank}, std::move(kind)}; }

}  // namespace

TEST_CASE("the schedule: rank-major for jitter, or for lockstep once it has two threads") {
  exec::ExecutionPolicy policy;
  models::DdpJob job = scaling_lab();
  job.straggler = models::NoStraggler{};
  const int two = 2 * exec::kRanksPerEngineThread;
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), two, policy) == sim::Schedule::kTimeOrder);  // one thread: time order is faster
  policy.threads = 2;
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), two, policy) == sim::Schedule::kRankMajor);
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), two - 1, policy) == sim::Schedule::kTimeOrder);  // too few ranks for a second thread
  job.faults.push_back(fault_on(models::fault::Slowdown{}, 3));
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), two, policy) == sim::Schedule::kRankMajor);  // a slow rank keeps lockstep
  job.faults.push_back(fault_on(models::fault::SkipBackward{}, 1));
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), two, policy) == sim::Schedule::kTimeOrder);  // a hang: time order at once
  job.faults.clear();
  policy.threads = 1;
  job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}};
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), 64, policy) == sim::Schedule::kRankMajor);
  policy.schedule = sim::Schedule::kTimeOrder;
  CHECK(exec::choose_schedule(models::DdpProgram(job).traits(), 64, policy) == sim::Schedule::kTimeOrder);
}

TEST_CASE("a lockstep job: time order and rank-major on two threads give the same result") {
  exec::ExecutionPolicy policy;
  models::DdpJob job = scaling_lab();
  job.faults.push_back(fault_on(models::fault::Slowdown{1.5}, 5));
  const int w = 2 * exec::kRanksPerEngineThread;
  const models::RunResult t = exec::simulate_ddp(job, w, 7, policy);  // one thread: time order
  policy.threads = 2;
  REQUIRE(exec::choose_schedule(models::DdpProgram(job).traits(), w, policy) == sim::Schedule::kRankMajor);
  const models::RunResult m = exec::simulate_ddp(job, w, 7, policy);
  REQUIRE(t.outcome == models::Outcome::kCompleted);
  CHECK(m.step_ms == t.step_ms);
  CHECK(m.end == t.end);
  CHECK(m.rank_ops == t.rank_ops);
  REQUIRE(m.ranks.size() == t.ranks.size());
  for (std::size_t i = 0; i < t.ranks.size(); i += 389) {
    CAPTURE(i);
    CHECK(m.ranks[i].wait_ms == t.ranks[i].wait_ms);
    CHECK(m.ranks[i].exposed_comm_ms == t.ranks[i].exposed_comm_ms);
    CHECK(m.ranks[i].compute_ms == t.ranks[i].compute_ms);
    CHECK(m.ranks[i].backward_overlap_ms == t.ranks[i].backward_overlap_ms);
  }
}

TEST_CASE("a jitter job: time order, rank-major and rank-major on threads give the same result") {
  exec::ExecutionPolicy policy;
  models::DdpJob job = scaling_lab();
  job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}};
  const int w = 2 * exec::kRanksPerEngineThread;  // two threads
  policy.schedule = sim::Schedule::kTimeOrder;
  const models::RunResult t = exec::simulate_ddp(job, w, 7, policy);
  policy.schedule = sim::Schedule::kRankMajor;  // unset: levelized (no fault)
  policy.threads = 2;
  const models::RunResult m = exec::simulate_ddp(job, w, 7, policy);
  policy.threads = 1;
  const models::RunResult one = exec::simulate_ddp(job, w, 7, policy);
  REQUIRE(t.outcome == models::Outcome::kCompleted);
  for (const models::RunResult* r : {&m, &one}) {
    CHECK(r->step_ms == t.step_ms);
    CHECK(r->end == t.end);
    CHECK(r->rank_ops == t.rank_ops);
    REQUIRE(r->ranks.size() == t.ranks.size());
    for (std::size_t i = 0; i < t.ranks.size(); i += 389) {
      CAPTURE(i);
      CHECK(r->ranks[i].wait_ms == t.ranks[i].wait_ms);
      CHECK(r->ranks[i].exposed_comm_ms == t.ranks[i].exposed_comm_ms);
      CHECK(r->ranks[i].compute_ms == t.ranks[i].compute_ms);
      CHECK(r->ranks[i].backward_overlap_ms == t.ranks[i].backward_overlap_ms);
    }
  }
}

namespace {

// Six parameters of 1 M floats, a 4 MB bucket each once rebuilt, and a
// BatchNorm-like buffer: bucket all-reduces that overlap backward.
models::DdpJob layered_job() {
  models::DdpJob job = scaling_lab();
  models::ModelSpec m;
  for (int i = 0; i < 6; ++i) {
    m.parameters.push_back(models::Tensor{"layer" + std::to_string(i), {1'000'000}, models::DType::kFloat32});
    m.ready_order.push_back(5 - i);
    m.forward.push_back(Time::from_ms(3 + i));
    m.backward.push_back(Time::from_ms(6 + 2 * i));
  }
  m.buffers.push_back(models::Tensor{"running_mean", {4096}, models::DType::kFloat32});
  m.optimizer = Time::from_ms(1.5);
  job.model = m;
  job.ddp.bucket_cap_bytes = 4'000'000;
  job.data_load = Time::from_ms(2);
  return job;
}

void check_same(const models::RunResult& a, const models::RunResult& b) {
  CHECK(a.outcome == b.outcome);
  CHECK(a.step_ms == b.step_ms);
  CHECK(a.measured_iterations == b.measured_iterations);
  CHECK(a.end == b.end);
  CHECK(a.rank_ops == b.rank_ops);
  CHECK(a.iterations_run == b.iterations_run);
  CHECK(a.shadow_collectives == b.shadow_collectives);
  REQUIRE(a.ranks.size() == b.ranks.size());
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    const models::RankStats &x = a.ranks[i], &y = b.ranks[i];
    CAPTURE(i);
    CHECK(x.data_ms == y.data_ms);
    CHECK(x.compute_ms == y.compute_ms);
    CHECK(x.collective_ms == y.collective_ms);
    CHECK(x.exposed_comm_ms == y.exposed_comm_ms);
    CHECK(x.wait_ms == y.wait_ms);
    CHECK(x.forward_compute_ms == y.forward_compute_ms);
    CHECK(x.backward_compute_ms == y.backward_compute_ms);
    CHECK(x.backward_comm_ms == y.backward_comm_ms);
    CHECK(x.backward_overlap_ms == y.backward_overlap_ms);
  }
}

}  // namespace

TEST_CASE("levelized evaluation gives the engine's result, exactly") {
  using Change = void (*)(models::DdpJob&);
  const std::pair<const char*, Change> variants[] = {
      {"one bucket, log2 straggler", [](models::DdpJob& j) { j = scaling_lab(); }},
      {"buckets overlapping backward", [](models::DdpJob&) {}},
      {"no straggler", [](models::DdpJob& j) { j.straggler = models::NoStraggler{}; }},
      {"exponential jitter",
       [](models::DdpJob& j) { j.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(3), {}}; }},
      {"uniform jitter",
       [](models::DdpJob& j) { j.straggler = models::JitterStraggler{models::JitterDistribution::kUniform, {}, Time::from_ms(9)}; }},
      {"gradient accumulation", [](models::DdpJob& j) { j.ddp.gradient_accumulation = 3; }},
      {"find_unused_parameters", [](models::DdpJob& j) {
         j.ddp.find_unused_parameters = true;
         j.ddp.unused_parameters = {2};
         j.ddp.traversal_per_tensor = Time::from_us(40);
       }},
      {"static graph", [](models::DdpJob& j) { j.ddp.static_graph = true; }},
      {"Join, even inputs, two epochs", [](models::DdpJob& j) {
         j.join = true;
         j.epochs = 2;
       }},
      {"agree_on_skip", [](models::DdpJob& j) { j.agree_on_skip = true; }},
      {"no final barrier, no buffer broadcast", [](models::DdpJob& j) {
         j.final_barrier = false;
         j.ddp.broadcast_buffers = false;
       }},
      {"gloo", [](models::DdpJob& j) { j.backend = models::Backend::kGloo; }},
      {"debug fingerprint", [](models::DdpJob& j) { j.fingerprint = true; }},
      {"no watchdog", [](models::DdpJob& j) { j.watchdog_timeout = Time{}; }},
      {"a slow link", [](models::DdpJob& j) {
         j.faults.push_back(fault_on(models::fault::SlowLink{4, std::nullopt}, 2));
       }},
  };
  for (const auto& [name, change] : variants) {
    for (int w : {1, 5, 64}) {
      CAPTURE(name);
      CAPTURE(w);
      models::DdpJob job = layered_job();
      job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_ms(1), {}};
      change(job);
      exec::ExecutionPolicy policy;
      policy.fast_path = false;
      REQUIRE(models::uniform_program(job));
      const models::RunResult lev = exec::simulate_ddp(job, w, 11, policy);
      policy.schedule = sim::Schedule::kTimeOrder;
      const models::RunResult eng = exec::simulate_ddp(job, w, 11, policy);
      CHECK(lev.levelized);
      CHECK_FALSE(eng.levelized);
      REQUIRE(eng.outcome == models::Outcome::kCompleted);
      check_same(lev, eng);
    }
  }
}

TEST_CASE("the symmetric fast path is levelized too, and equals every rank evaluated") {
  exec::ExecutionPolicy policy;
  models::DdpJob job = layered_job();
  job.straggler = models::NoStraggler{};
  const models::RunResult fast = exec::simulate_ddp(job, 256, 3, policy);
  policy.fast_path = false;
  const models::RunResult all = exec::simulate_ddp(job, 256, 3, policy);
  CHECK(fast.fast_path);
  CHECK(fast.levelized);
  CHECK(all.levelized);
  check_same(fast, all);
}

TEST_CASE("a job the watchdog would end goes to the engine") {
  exec::ExecutionPolicy policy;
  models::DdpJob job = layered_job();
  // Rank 3 is 40 ms late every iteration; the watchdog allows 10.
  job.straggler = models::Log2Straggler{Time::from_ms(20), 3};
  job.watchdog_timeout = Time::from_ms(10);
  policy.fast_path = false;
  const models::RunResult r = exec::simulate_ddp(job, 4, 1, policy);
  CHECK_FALSE(r.levelized);
  CHECK(r.outcome == models::Outcome::kHang);
  policy.schedule = sim::Schedule::kTimeOrder;
  check_same(r, exec::simulate_ddp(job, 4, 1, policy));
}

TEST_CASE("a uniform program: no fault, and no unused parameter that stops a rank") {
  exec::ExecutionPolicy policy;
  models::DdpJob job = layered_job();
  CHECK(models::uniform_program(job));
  job.ddp.unused_parameters = {1};
  CHECK_FALSE(models::uniform_program(job));  // PyTorch's error at the next forward, on every rank
  job.ddp.find_unused_parameters = true;
  CHECK(models::uniform_program(job));
  job.faults.push_back(fault_on(models::fault::SlowLink{}, 0));
  CHECK(models::uniform_program(job));  // it prices collectives, which all members share
  job.faults.push_back(fault_on(models::fault::Slowdown{}, 0));
  CHECK_FALSE(models::uniform_program(job));
  job.faults.clear();
  policy.fast_path = false;
  policy.schedule = sim::Schedule::kRankMajor;  // asked for the engine: the engine runs it
  CHECK_FALSE(exec::simulate_ddp(job, 4, 1, policy).levelized);
}

TEST_CASE("levelized evaluation equals the engine on random jobs without faults") {
  sim::Rng rng(2026);
  const auto pick = [&rng](int n) { return static_cast<int>(rng.next_u64() % static_cast<std::uint64_t>(n)); };
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    models::DdpJob job = pick(3) == 0 ? scaling_lab() : layered_job();
    job.iterations = 3 + pick(4);
    job.epochs = 1 + pick(2);
    job.warmup_iterations = pick(job.iterations);
    job.ddp.gradient_accumulation = 1 + pick(3);
    job.ddp.bucket_cap_bytes = std::int64_t{1'000'000} * (1 + pick(12));
    job.ddp.broadcast_buffers = pick(2) == 0;
    job.ddp.static_graph = pick(4) == 0;
    job.ddp.find_unused_parameters = pick(4) == 0;
    job.join = pick(3) == 0;
    job.agree_on_skip = pick(4) == 0;
    job.final_barrier = pick(4) != 0;
    job.backend = pick(2) == 0 ? models::Backend::kNccl : models::Backend::kGloo;
    job.data_load = Time::from_us(pick(3000));
    switch (pick(4)) {
      case 0: job.straggler = models::NoStraggler{}; break;
      case 1: job.straggler = models::Log2Straggler{Time::from_us(100 + pick(5000)), pick(3) - 1}; break;
      case 2: job.straggler = models::JitterStraggler{models::JitterDistribution::kExponential, Time::from_us(50 + pick(4000)), {}}; break;
      default: job.straggler = models::JitterStraggler{models::JitterDistribution::kUniform, {}, Time::from_us(50 + pick(8000))}; break;
    }
    exec::ExecutionPolicy policy;
      policy.fast_path = false;
    const int w = 1 + pick(40);
    CAPTURE(w);
    const std::uint64_t seed = rng.next_u64();
    const models::RunResult lev = exec::simulate_ddp(job, w, seed, policy);
    policy.schedule = sim::Schedule::kTimeOrder;
    const models::RunResult eng = exec::simulate_ddp(job, w, seed, policy);
    REQUIRE(lev.levelized);
    check_same(lev, eng);
  }
}

TEST_CASE("a rank-major run that reaches a crash, a hang or a disagreement is run again in time order") {
  struct Case {
    const char* name;
    models::FaultKind kind;
  };
  for (const Case& c : {Case{"crash", models::fault::Crash{3, std::nullopt}},
                        Case{"link down", models::fault::LinkDown{Time::from_ms(30)}},
                        Case{"skip backward", models::fault::SkipBackward{3}},
                        Case{"extra collective", models::fault::ExtraCollective{3, {sim::CollectiveKind::kAllReduce, 4}}}}) {
    CAPTURE(c.name);
    models::DdpJob job = layered_job();
    job.faults.push_back(fault_on(c.kind, 1));
    exec::ExecutionPolicy policy;
    policy.schedule = sim::Schedule::kRankMajor;
    const models::RunResult major = exec::simulate_ddp(job, 4, 5, policy);
    policy.schedule = sim::Schedule::kTimeOrder;
    const models::RunResult time_order = exec::simulate_ddp(job, 4, 5, policy);
    CHECK(major.outcome != models::Outcome::kCompleted);
    CHECK(major.outcome == time_order.outcome);
    CHECK(major.events == time_order.events);  // the same engine run, not the abandoned one
    check_same(major, time_order);
  }
}
