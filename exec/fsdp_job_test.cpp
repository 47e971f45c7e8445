// The FSDP program on the engine against timelines worked out by hand
// (docs/fsdp.md#the-step), and every evaluator giving the same result.

#include <doctest/doctest.h>

#include "exec/evaluate.hpp"
#include "models/fsdp_program.hpp"
#include "sim/levelized.hpp"

using namespace ddpsim;
using models::BackwardPrefetch;
using models::FsdpConfig;
using models::ShardingStrategy;
using sim::Time;

namespace {

// Root "emb" and two blocks of 1,000 fp32 elements each: forward 1 ms and
// backward 2 ms per unit. On 2 ranks an all-gather or a reduce-scatter of a
// unit (4,000 bytes, half of it sent) takes 1 ms at 2,000 bytes a ms, an
// all-reduce 2 ms; no latency, no launch cost.
models::DdpJob three_units() {
  models::DdpJob job;
  job.model.parameters = {models::Tensor{"emb.weight", {1000}}, models::Tensor{"blocks.0.w", {1000}},
                          models::Tensor{"blocks.1.w", {1000}}};
  job.model.ready_order = {2, 1, 0};
  job.model.forward.assign(3, Time::from_ms(1));
  job.model.backward.assign(3, Time::from_ms(2));
  job.iterations = 4;
  job.warmup_iterations = 1;
  job.network = {Time{}, 2e-3, Time{}};
  return job;
}

FsdpConfig blocks(ShardingStrategy s, BackwardPrefetch p = BackwardPrefetch::kBackwardPre) {
  FsdpConfig c;
  c.sharding = s;
  c.wrap.modules = {"blocks.*"};
  c.backward_prefetch = p;
  return c;
}

double step_ms(const FsdpConfig& cfg, const exec::ExecutionPolicy& policy = {}) {
  const models::DdpJob job = three_units();
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, cfg), 2, 0, policy);
  REQUIRE(r.outcome == models::Outcome::kCompleted);
  REQUIRE(r.measured_iterations == 3);
  return *r.step_ms;
}

}  // namespace

TEST_CASE("FULL_SHARD, BACKWARD_PRE: only the root's all-gather and reduce-scatter are exposed") {
  // Forward: AG root 0-1, root 1-2 | AG b0 1-2, b0 2-3 | AG b1 2-3, b1 3-4.
  // Backward: AG b1 3-4 (the limiter waits for b0's free at 3), AG b0 4-5
  // (prefetched), b1 4-6, RS b1 6-7, b0 6-8, RS b0 8-9, root 8-10, RS root 10-11.
  CHECK(step_ms(blocks(ShardingStrategy::kFullShard)) == doctest::Approx(11.0));
  const models::DdpJob job = three_units();
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, blocks(ShardingStrategy::kFullShard)), 2, 0);
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.ranks[0].compute_ms == doctest::Approx(9.0));
  CHECK(r.ranks[0].collective_ms == doctest::Approx(8.0));  // 3 + 2 all-gathers, 3 reduce-scatters
  CHECK(r.ranks[0].exposed_comm_ms == doctest::Approx(2.0));
}

TEST_CASE("without backward prefetch each block's all-gather waits behind the previous reduce-scatter") {
  // b1: AG 3-4, b1 4-6, RS 6-7; b0: AG 7-8, b0 8-10, RS 10-11; root 10-12, RS 12-13.
  CHECK(step_ms(blocks(ShardingStrategy::kFullShard, BackwardPrefetch::kNone)) == doctest::Approx(13.0));
}

TEST_CASE("SHARD_GRAD_OP keeps the blocks gathered: no all-gather in backward") {
  CHECK(step_ms(blocks(ShardingStrategy::kShardGradOp)) == doctest::Approx(11.0));
  const models::DdpJob job = three_units();
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, blocks(ShardingStrategy::kShardGradOp)), 2, 0);
  CHECK(r.ranks[0].collective_ms == doctest::Approx(6.0));
}

TEST_CASE("NO_SHARD all-reduces each unit's gradient as it is ready") {
  // Forward 0-3; b1 3-5, AR 5-7; b0 5-7, AR 7-9; root 7-9, AR 9-11.
  CHECK(step_ms(blocks(ShardingStrategy::kNoShard)) == doctest::Approx(11.0));
}

TEST_CASE("no_sync accumulation: reductions only in the last micro-step") {
  const auto accumulating = [](ShardingStrategy s) {
    FsdpConfig c = blocks(s);
    c.gradient_accumulation = 2;
    return c;
  };
  SUBCASE("FULL_SHARD gathers again in every micro-step") {
    // Micro-step 1 as above without reduce-scatters: backward b1 4-6, b0 6-8,
    // root 8-10 (the root freed too). Micro-step 2 loads its batch at 10:
    // AG root 10-11, root 11-12 | AG b0 11-12, b0 12-13 | AG b1 12-13, b1 13-14;
    // AG b1 13-14, AG b0 14-15, b1 14-16, RS b1 16-17, b0 16-18, RS b0 18-19,
    // root 18-20, RS root 20-21.
    const FsdpConfig c = accumulating(ShardingStrategy::kFullShard);
    CHECK(step_ms(c) == doctest::Approx(21.0));
    const models::DdpJob job = three_units();
    const models::RunResult r = exec::evaluate(models::FsdpProgram(job, c), 2, 0);
    CHECK(r.ranks[0].compute_ms == doctest::Approx(18.0));
    CHECK(r.ranks[0].collective_ms == doctest::Approx(13.0));  // 10 all-gathers, 3 reduce-scatters
    CHECK(r.ranks[0].forward_compute_ms == doctest::Approx(3.0));  // the syncing micro-step's, as DDP's timers
    CHECK(r.global_batch == 2 * 2 * job.local_batch_size);
  }
  SUBCASE("SHARD_GRAD_OP keeps its units gathered into the next micro-step") {
    // Micro-step 1: forward 0-4 as FULL_SHARD's, backward 4-10 with nothing
    // freed; micro-step 2: forward 10-13 without an all-gather, b1 13-15,
    // RS 15-16, b0 15-17, RS 17-18, root 17-19, RS 19-20.
    const FsdpConfig c = accumulating(ShardingStrategy::kShardGradOp);
    CHECK(step_ms(c) == doctest::Approx(20.0));
    const models::DdpJob job = three_units();
    CHECK(exec::evaluate(models::FsdpProgram(job, c), 2, 0).ranks[0].collective_ms == doctest::Approx(6.0));
  }
  SUBCASE("NO_SHARD all-reduces in the last micro-step only") {
    // Micro-step 1: 0-9; micro-step 2: forward 9-12, b1 12-14, AR 14-16,
    // b0 14-16, AR 16-18, root 16-18, AR 18-20.
    CHECK(step_ms(accumulating(ShardingStrategy::kNoShard)) == doctest::Approx(20.0));
  }
}

TEST_CASE("the rate limiter: the third all-gather waits for the oldest free") {
  // Units: blocks.0 (0), blocks.1 (1), the root (2). Forward frees b0 and b1;
  // backward's all-gather of b1 is the third since then, so with
  // limit_all_gathers it depends on b0's forward, the oldest free.
  const models::DdpJob job = three_units();
  const auto backward_gather_of_b1 = [&](bool limit) {
    FsdpConfig c = blocks(ShardingStrategy::kFullShard);
    c.limit_all_gathers = limit;
    const models::FsdpProgram program(job, c);
    const sim::UniformProgram p = program.evaluation(1, 2, 0)->record();
    int seen = 0;
    for (const sim::ProgramOp& op : p.ops) {
      if (op.label.tag == static_cast<std::uint32_t>(models::FsdpTag::kAllGather) && op.label.index == 1 &&
          op.label.iteration == 0 && ++seen == 2) {
        return op.after < 0 ? std::string("none") : models::op_name(p.ops[static_cast<std::size_t>(op.after)].label);
      }
    }
    return std::string("not found");
  };
  CHECK(backward_gather_of_b1(true) == "forward unit 0");
  CHECK(backward_gather_of_b1(false) == "none");
}

TEST_CASE("FSDP: the fast path, levelized evaluation and both schedules agree") {
  for (ShardingStrategy s : {ShardingStrategy::kFullShard, ShardingStrategy::kShardGradOp, ShardingStrategy::kNoShard}) {
    for (BackwardPrefetch p : {BackwardPrefetch::kBackwardPre, BackwardPrefetch::kBackwardPost, BackwardPrefetch::kNone}) {
      FsdpConfig cfg = blocks(s, p);
      cfg.gradient_accumulation = p == BackwardPrefetch::kBackwardPost ? 3 : 1;
      const double fast = step_ms(cfg);
      CAPTURE(models::to_string(s));
      CAPTURE(models::to_string(p));
      CHECK(step_ms(cfg, {false, std::nullopt, 1, nullptr}) == fast);
      CHECK(step_ms(cfg, {false, sim::Schedule::kTimeOrder, 1, nullptr}) == fast);
      CHECK(step_ms(cfg, {false, sim::Schedule::kRankMajor, 1, nullptr}) == fast);
    }
  }
}

namespace {

models::RunResult run_with(models::Fault fault, FsdpConfig cfg = blocks(ShardingStrategy::kFullShard),
                           const exec::ExecutionPolicy& policy = {}) {
  models::DdpJob job = three_units();
  job.faults = {std::move(fault)};
  return exec::evaluate(models::FsdpProgram(job, cfg), 2, 0, policy);
}

}  // namespace

TEST_CASE("FSDP faults: a rank that skips a unit shifts its collectives, then the job hangs") {
  // Units: blocks.0 (0), blocks.1 (1), the root (2). Rank 1 does not call
  // blocks.0 in iteration 1: its all-gather of blocks.1 meets rank 0's of
  // blocks.0 (same size: it runs, on the wrong data), and later an
  // all-gather meets a reduce-scatter, which never completes.
  const models::RunResult r = run_with({{1}, models::fault::SkipUnit{1, 0, "blocks.0"}});
  CHECK(r.outcome == models::Outcome::kHang);
  REQUIRE_FALSE(r.misalignments.empty());
  CHECK(r.misalignments[0].rank == 1);
  CHECK(r.misalignments[0].op == "all_gather unit 1 (blocks.1)");
  CHECK(r.misalignments[0].with_op == "all_gather unit 0 (blocks.0)");
  CHECK(r.misalignments[0].iteration == 1);
  REQUIRE(r.failure);
  CHECK(r.failure->culprit_rank == 1);
  CHECK(r.failure->fix.find("call every FSDP unit's module on every rank") != std::string::npos);
}

TEST_CASE("FSDP faults: TORCH_DISTRIBUTED_DEBUG=DETAIL turns the skipped unit's hang into c10d's error") {
  models::DdpJob job = three_units();
  job.faults = {{{1}, models::fault::SkipUnit{1, 0, "blocks.0"}}};
  job.fingerprint = true;
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, blocks(ShardingStrategy::kFullShard)), 2, 0);
  CHECK(r.outcome == models::Outcome::kCrash);
  REQUIRE_FALSE(r.errors.empty());
  CHECK(r.errors[0].message.find("Detected mismatch between collectives on ranks") != std::string::npos);
  REQUIRE(r.failure);
  CHECK(r.failure->culprit_rank == 1);
  // Before it hangs, rank 1's forward-order check warns on its own: after
  // the root it expected blocks.0 and is gathering blocks.1. Rank 0 did
  // what it did in the first iteration and prints nothing.
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].rank == 1);
  CHECK(r.warnings[0].iteration == 1);
  CHECK(r.warnings[0].message ==
        "UserWarning: Forward order differs from that of the first iteration on rank 1. Collectives are unchecked and "
        "may give incorrect results or hang.\nExpected to all-gather for [blocks.0] but trying to all-gather "
        "parameters for [blocks.1]");
}

TEST_CASE("DETAIL's later-iteration order check: silent without DETAIL, in the first iteration, or for a last unit") {
  models::DdpJob job = three_units();
  const FsdpConfig cfg = blocks(ShardingStrategy::kFullShard);
  SUBCASE("without TORCH_DISTRIBUTED_DEBUG=DETAIL nothing checks") {
    job.faults = {{{1}, models::fault::SkipUnit{1, 0, "blocks.0"}}};
    job.fingerprint = false;
  }
  SUBCASE("a skip in the first iteration is the first iteration's order: the collective check fails instead") {
    job.faults = {{{1}, models::fault::SkipUnit{0, 0, "blocks.0"}}};
    job.fingerprint = true;
  }
  SUBCASE("the last unit missing: no later pre-forward compares it") {
    job.faults = {{{1}, models::fault::SkipUnit{1, 1, "blocks.1"}}};
    job.fingerprint = true;
  }
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, cfg), 2, 0);
  CHECK(r.outcome != models::Outcome::kCompleted);
  CHECK(r.warnings.empty());
}

TEST_CASE("FSDP faults: under DETAIL a unit skipped in the first iteration fails FSDP's forward-order check") {
  // Forward order: the root (2), blocks.0 (0), blocks.1 (1). Rank 1 skips
  // blocks.0 in iteration 0: after the root's check, rank 0 all-gathers
  // blocks.0's index while rank 1 all-gathers blocks.1's.
  models::DdpJob job = three_units();
  job.faults = {{{1}, models::fault::SkipUnit{0, 0, "blocks.0"}}};
  job.fingerprint = true;
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, blocks(ShardingStrategy::kFullShard)), 2, 0);
  CHECK(r.outcome == models::Outcome::kCrash);
  REQUIRE_FALSE(r.errors.empty());
  CHECK(r.errors[0].message ==
        "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering parameters for [blocks.0] while rank 1 "
        "is all-gathering parameters for [blocks.1]");
  REQUIRE(r.failure);
  CHECK(r.failure->culprit_rank == 1);
}

TEST_CASE("DETAIL's forward-order check: two small all-gathers per unit, first iteration only") {
  models::DdpJob job = three_units();
  job.fingerprint = true;
  const FsdpConfig cfg = blocks(ShardingStrategy::kFullShard);  // the program keeps a reference
  const sim::UniformProgram p = models::FsdpProgram(job, cfg).evaluation(1, 2, 0)->record();
  std::vector<int> units;
  int counts = 0;
  for (const sim::ProgramOp& op : p.ops) {
    counts += op.label.tag == static_cast<std::uint32_t>(models::FsdpTag::kOrderCount);
    if (op.label.tag != static_cast<std::uint32_t>(models::FsdpTag::kOrderCheck)) continue;
    CHECK(op.label.iteration == 0);
    CHECK(op.collective.bytes == 8);  // one int32 from each of 2 ranks
    units.push_back(static_cast<int>(op.label.index));
  }
  CHECK(counts == 3);
  CHECK(units == std::vector<int>{2, 0, 1});
  job.fingerprint = false;
  const sim::UniformProgram plain = models::FsdpProgram(job, cfg).evaluation(1, 2, 0)->record();
  CHECK(plain.ops.size() + 6 == p.ops.size());
}

TEST_CASE("FSDP faults: a unit every rank skips costs nothing and hangs nothing") {
  // Iteration 1 without blocks.0 on both ranks: compute 2 + 4 ms instead of
  // 3 + 6, no all-gather or reduce-scatter for it; the measured mean over
  // iterations 1 to 3 is (6 + 9 + 9) / 3.
  const models::RunResult r = run_with({{0, 1}, models::fault::SkipUnit{1, 0, "blocks.0"}});
  REQUIRE(r.outcome == models::Outcome::kCompleted);
  CHECK(r.misalignments.empty());
  CHECK(r.ranks[0].compute_ms == doctest::Approx(8.0));
}

TEST_CASE("FSDP faults: a rank with fewer micro-batches reduces while the others gather") {
  FsdpConfig c = blocks(ShardingStrategy::kFullShard);
  c.gradient_accumulation = 2;
  // Rank 1 syncs in its first micro-batch of iteration 1: its reduce-scatter
  // of blocks.1 meets rank 0's all-gather of blocks.0 for the next micro-batch.
  const models::RunResult r = run_with({{1}, models::fault::MicroBatches{1, 1}}, c);
  CHECK(r.outcome == models::Outcome::kHang);
  REQUIRE(r.failure);
  CHECK(r.failure->culprit_rank == 1);
  CHECK(r.failure->reason.find("reduce_scatter unit 1 (blocks.1)") != std::string::npos);
  CHECK(r.failure->fix.find("same number of micro-batches") != std::string::npos);
  // The same count as the others' changes nothing.
  CHECK(run_with({{1}, models::fault::MicroBatches{1, 2}}, c).outcome == models::Outcome::kCompleted);
}

TEST_CASE("FSDP faults: one slow rank sets everyone's pace; a crash ends the job") {
  // Rank 1 computes twice as slowly: forward root 1-3, b0 3-5, b1 5-7 (the
  // all-gathers ahead); backward AG b1 5-6 (after b0's free at 5), AG b0
  // 6-7, b1 7-11, RS 11-12, b0 11-15, RS 15-16, root 15-19, RS 19-20.
  const models::Fault slow{{1}, models::fault::Slowdown{2.0, 0, -1, false}};
  const models::RunResult r = run_with(slow);
  REQUIRE(r.outcome == models::Outcome::kCompleted);
  CHECK(*r.step_ms == doctest::Approx(20.0));
  CHECK(r.ranks[1].compute_ms == doctest::Approx(18.0));
  CHECK(*run_with(slow, blocks(ShardingStrategy::kFullShard), {false, sim::Schedule::kRankMajor, 1, nullptr}).step_ms ==
        *r.step_ms);
  const models::RunResult crashed = run_with({{0}, models::fault::Crash{2, std::nullopt}});
  CHECK(crashed.outcome == models::Outcome::kCrash);
  REQUIRE(crashed.failure);
  CHECK(crashed.failure->culprit_rank == 0);
}

namespace {

// three_units on 2 nodes x 2 GPUs, 2,000 bytes a ms inside a node and across.
models::DdpJob two_by_two() {
  models::DdpJob job = three_units();
  models::ClusterSpec c;
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.intra.bandwidth_GBps = 2e-3;
  c.inter.bandwidth_GBps = 2e-3;
  job.cluster = c;
  return job;
}

}  // namespace

TEST_CASE("HYBRID_SHARD: shard groups inside each node, the replica all-reduce across nodes on its own stream") {
  // 2 nodes x 2 GPUs: inside a node as the other tests (a unit's all-gather
  // or reduce-scatter 1 ms); across, one 2,000 bytes/ms NIC a node that both
  // replica groups share, so each gets 1,000 bytes/ms. A unit's gradient
  // shard (500 fp32 elements) all-reduced over two replicas sends 2,000
  // bytes: 2 ms.
  const models::DdpJob job = two_by_two();
  // As FULL_SHARD to 11 ms; then AR b1 7-9, AR b0 9-11 (the replica stream
  // is FIFO), AR root 11-13 after its reduce-scatter at 10-11.
  const FsdpConfig cfg = blocks(ShardingStrategy::kHybridShard);
  const models::RunResult r = exec::evaluate(models::FsdpProgram(job, cfg), 4, 0);
  REQUIRE(r.outcome == models::Outcome::kCompleted);
  CHECK(*r.step_ms == doctest::Approx(13.0));
  CHECK(r.ranks[3].collective_ms == doctest::Approx(8.0 + 6.0));  // 5 all-gathers, 3 reduce-scatters, 3 all-reduces
  CHECK_FALSE(r.fast_path);
  // Closed form: compute 9 + 5 all-gathers + 3 reduce-scatters + 3 all-reduces.
  auto timer = models::analytic_timer(job, 4);
  CHECK(models::fsdp_closed_form_ms(job, cfg, 4, 2, *timer) == doctest::Approx(9.0 + 5 + 3 + 6));
  // _HYBRID_SHARD_ZERO2 keeps the blocks: no all-gather in backward.
  const models::RunResult zero2 = exec::evaluate(models::FsdpProgram(job, blocks(ShardingStrategy::kHybridShardZero2)), 4, 0);
  CHECK(zero2.ranks[3].collective_ms == doctest::Approx(6.0 + 6.0));
}

TEST_CASE("HYBRID_SHARD around a slow link: its node's shard group and its replica group slow, wherever the rank is") {
  // two_by_two with a slow link (factor 2) on rank 3, node 1's second GPU:
  // node 1's all-gathers and reduce-scatters take 2 ms instead of 1 (both
  // hops of a 2-rank ring touch rank 3); node 0's keep 1 ms; replica group
  // {1, 3} all-reduces at 500 bytes/ms beside {0, 2} (1,000 alone), {0, 2}
  // at 1,000 (2,000 alone). Node 1 sets the pace: forward AG root 0-2,
  // b0 2-4, b1 4-6; backward AG b1 6-8, AG b0 8-10, RS b1 10-12, RS b0
  // 12-14, RS root 14-16. Replica all-reduces (2,000 bytes each): b1 from
  // 12, {1, 3} half done when {0, 2}'s ends at 14, then alone to 15; b0
  // from 15 ({0, 2}'s from 14) to 18; root 18-21.
  const FsdpConfig cfg = blocks(ShardingStrategy::kHybridShard);
  const auto slow_on = [&](int rank) {
    models::DdpJob job = two_by_two();
    job.faults = {{{rank}, models::fault::SlowLink{2.0, std::nullopt}}};
    const models::RunResult r = exec::evaluate(models::FsdpProgram(job, cfg), 4, 0);
    REQUIRE(r.outcome == models::Outcome::kCompleted);
    REQUIRE(r.ranks.size() == 4);
    return r;
  };
  const models::RunResult node1 = slow_on(3);
  CHECK(*node1.step_ms == doctest::Approx(21.0));
  // 5 all-gathers and 3 reduce-scatters at 1 ms (node 0) or 2 (node 1),
  // and 3 all-reduces at 2 ms ({0, 2}) or 3 ({1, 3}).
  const double expected[] = {8.0 + 6.0, 8.0 + 9.0, 16.0 + 6.0, 16.0 + 9.0};
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(node1.ranks[static_cast<std::size_t>(r)].collective_ms == doctest::Approx(expected[r]));
  }
  // Rank 1 is rank 3's mirror image: the same step, node for node.
  const models::RunResult node0 = slow_on(1);
  CHECK(*node0.step_ms == doctest::Approx(21.0));
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(node0.ranks[static_cast<std::size_t>((r + 2) % 4)].collective_ms == doctest::Approx(expected[r]));
  }
}
