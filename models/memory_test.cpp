// The memory model against hand-computed values, the ZeRO paper's formulas
// and DeepSpeed's estimators (../shared/reference/fsdp_semantics.md section 2;
// derivations: docs/fsdp.md#memory).

#include "models/memory.hpp"

#include <doctest/doctest.h>

using namespace ddpsim;
using models::DType;
using models::FsdpConfig;
using models::MemoryInputs;
using models::OptimizerKind;
using models::ShardingStrategy;
using models::Tensor;
using models::WrapPolicy;

namespace {

// Root "emb" 500, blocks.0 1000, blocks.1 2000 elements of fp32; activations
// 50, 100 and 200 bytes.
models::ModelSpec three_units() {
  models::ModelSpec m;
  m.parameters = {Tensor{"emb.weight", {500}}, Tensor{"blocks.0.w", {1000}}, Tensor{"blocks.1.w", {2000}}};
  m.activations = {50, 100, 200};
  return m;
}

// One tensor of `numel` fp32 elements: one unit, the root.
models::ModelSpec one_tensor(std::int64_t numel) {
  models::ModelSpec m;
  m.parameters = {Tensor{"w", {numel}}};
  return m;
}

models::MemoryEstimate fsdp(const models::ModelSpec& m, FsdpConfig cfg, int w, MemoryInputs in = {}) {
  const auto units = models::build_units(m, cfg.wrap);
  return models::fsdp_memory(m, units, cfg, w, 8, in);
}

FsdpConfig blocks(ShardingStrategy s, models::BackwardPrefetch p = models::BackwardPrefetch::kBackwardPre) {
  FsdpConfig c;
  c.sharding = s;
  c.wrap.modules = {"blocks.*"};
  c.backward_prefetch = p;
  return c;
}

}  // namespace

TEST_CASE("FULL_SHARD on 4 ranks, by hand") {
  // Shards 125, 250, 500 elements: 3,500 bytes of parameters, as many of gradients.
  // Gathered: root 2,000, blocks.0 4,000, blocks.1 8,000 bytes; a unit's gradient
  // in backward: its gathered size while it computes; after its free, that
  // and the shard it reduces to (2,000 bytes for blocks.1).
  SUBCASE("BACKWARD_PRE: blocks.1's backward holds the root, itself, blocks.0 prefetched and its gradient") {
    const auto m = fsdp(three_units(), blocks(ShardingStrategy::kFullShard), 4);
    CHECK(m.parameters == 3500);
    CHECK(m.gradients == 3500);
    CHECK(m.optimizer_states == 0);
    CHECK(m.buckets == 0);
    // Computing: 2,000 + 8,000 + 4,000 + 8,000 = 22,000; after the free: 2,000 + 4,000 + 8,000 + 2,000 = 16,000.
    CHECK(m.unsharded == 2000 + 8000 + 4000 + 8000);
    CHECK(m.activations == 350);
    CHECK(m.peak_at.phase == "backward");
    CHECK(m.peak_at.unit == "blocks.1");
    CHECK(m.peak() == 3500 + 3500 + 22000 + 350);
  }
  SUBCASE("BACKWARD_POST: no prefetch while blocks.1 computes") {
    const auto m = fsdp(three_units(), blocks(ShardingStrategy::kFullShard, models::BackwardPrefetch::kBackwardPost), 4);
    // Computing: root, itself, its gradient: 18,000; after the free, blocks.0 gathered: 2,000 + 4,000 + 10,000.
    CHECK(m.unsharded == 2000 + 8000 + 8000);
    CHECK(m.peak_at.unit == "blocks.1");
  }
  SUBCASE("Adam: two fp32 states over the shards") {
    const auto m = fsdp(three_units(), blocks(ShardingStrategy::kFullShard), 4, {OptimizerKind::kAdam, false});
    CHECK(m.optimizer_states == 7000);
  }
  SUBCASE("mixed precision: bf16 gathers and gradients, fp32 shards") {
    FsdpConfig c = blocks(ShardingStrategy::kFullShard);
    c.param_dtype = DType::kBFloat16;
    const auto m = fsdp(three_units(), c, 4);
    CHECK(m.parameters == 3500);
    CHECK(m.unsharded == (1000 + 4000 + 2000) + 4000);
  }
}

TEST_CASE("a root whose parameters its units took holds nothing (ddpsim-real's MLP, a unit per layer)") {
  models::ModelSpec m;
  m.parameters = {Tensor{"blocks.0.w", {1000}}, Tensor{"blocks.1.w", {2000}}};
  m.activations = {100, 200};
  const auto e = fsdp(m, blocks(ShardingStrategy::kFullShard), 4);
  CHECK(e.parameters == (250 + 500) * 4);
  CHECK(e.gradients == (250 + 500) * 4);
  // blocks.1's backward: itself, blocks.0 prefetched, its gradient.
  CHECK(e.unsharded == 8000 + 4000 + 8000);
  CHECK(e.peak_at.unit == "blocks.1");
}

TEST_CASE("SHARD_GRAD_OP keeps every unit gathered from its forward to its backward") {
  const auto full = fsdp(three_units(), blocks(ShardingStrategy::kFullShard), 4);
  const auto grad_op = fsdp(three_units(), blocks(ShardingStrategy::kShardGradOp), 4);
  CHECK(grad_op.model_states() == full.model_states());
  // The same backward peak here (blocks.0 is prefetched anyway), and no unit
  // has been freed when the last forward runs: 14,000 bytes against 10,000.
  CHECK(grad_op.unsharded == full.unsharded);
  FsdpConfig none = blocks(ShardingStrategy::kShardGradOp, models::BackwardPrefetch::kNone);
  none.limit_all_gathers = false;
  const auto m = fsdp(three_units(), none, 4);
  CHECK(m.unsharded == 2000 + 4000 + 8000 + 8000);  // blocks.0 still gathered, blocks.1 and its gradient
  none.sharding = ShardingStrategy::kFullShard;
  CHECK(fsdp(three_units(), none, 4).unsharded == 2000 + 8000 + 8000);
}

TEST_CASE("no_sync keeps every unit's unsharded gradient until the syncing backward reduces it") {
  FsdpConfig c = blocks(ShardingStrategy::kFullShard);
  c.gradient_accumulation = 2;
  // blocks.1's backward as before (22,000) plus the kept gradients of the
  // units not reduced yet: the root's 2,000 and blocks.0's 4,000 bytes.
  const auto m = fsdp(three_units(), c, 4);
  CHECK(m.unsharded == 22000 + 2000 + 4000);
  CHECK(m.peak_at.phase == "backward");
  CHECK(m.model_states() == 7000);
  // SHARD_GRAD_OP: the same peak, every unit gathered at blocks.1's backward
  // either way.
  c.sharding = ShardingStrategy::kShardGradOp;
  CHECK(fsdp(three_units(), c, 4).unsharded == 28000);
  // One rank: the gradients are whole anyway, nothing is added.
  CHECK(fsdp(three_units(), c, 1).unsharded == 0);
}

TEST_CASE("activation checkpointing keeps no activations of a checkpointed module but while it recomputes") {
  models::ModelSpec m = three_units();
  m.checkpointed = {-1, 0, 1};  // blocks.0 and blocks.1 each checkpointed
  SUBCASE("DDP: the root's 50 bytes kept, and blocks.1's 200 recomputed as backward starts") {
    CHECK(models::ddp_memory(m, {}).activations == 50 + 200);
  }
  SUBCASE("FULL_SHARD: blocks.1's backward as before, with 50 + 200 bytes of activations instead of 350") {
    const auto f = fsdp(m, blocks(ShardingStrategy::kFullShard), 4);
    CHECK(f.unsharded == 22000);
    CHECK(f.activations == 250);
    CHECK(f.peak_at.unit == "blocks.1");
  }
  SUBCASE("one checkpointed module over both blocks: all 300 bytes recomputed at once") {
    m.checkpointed = {-1, 0, 0};
    CHECK(models::ddp_memory(m, {}).activations == 50 + 300);
  }
}

TEST_CASE("one rank runs NO_SHARD: full states, nothing gathered") {
  const auto m = fsdp(three_units(), blocks(ShardingStrategy::kFullShard), 1);
  CHECK(m.parameters == 14000);
  CHECK(m.gradients == 14000);
  CHECK(m.unsharded == 0);
  CHECK(m.activations == 350);
}

TEST_CASE("the ZeRO paper's 7.5 B parameters on 64 GPUs with Adam") {
  const std::int64_t psi = 7'500'000'000;
  const auto model = one_tensor(psi);
  SUBCASE("DDP: 16 bytes a parameter with gradient_as_bucket_view (ZeRO's 120 GB), 20 without") {
    CHECK(models::ddp_memory(model, {OptimizerKind::kAdam, true}).model_states() == 16 * psi);
    CHECK(models::ddp_memory(model, {OptimizerKind::kAdam, false}).model_states() == 20 * psi);
  }
  SUBCASE("FULL_SHARD: 16 bytes a parameter over 64 (ZeRO-3's 1.9 GB)") {
    const auto m = fsdp(model, FsdpConfig{}, 64, {OptimizerKind::kAdam, false});
    CHECK(m.model_states() == 16 * psi / 64);
    CHECK(m.model_states() == 1'875'000'000);
  }
}

TEST_CASE("DeepSpeed's estimators, one layer of 1 B parameters on 8 GPUs, bf16") {
  const std::int64_t psi = 1'000'000'000;
  FsdpConfig cfg;
  cfg.param_dtype = DType::kBFloat16;
  SUBCASE("estimate_zero3_model_states_mem_needs: 4 x largest layer + 18 psi / GPUs, less DeepSpeed's fp16 shard") {
    // FSDP keeps 16 psi / W of fp32 states and, while the unit computes its
    // gradient, 2 psi gathered + 2 psi of gradient (after it is freed, the
    // gradient and the 2 psi / W shard it reduces to: less). DeepSpeed also
    // counts a 2 psi / W fp16 parameter shard FSDP does not keep.
    const std::int64_t deepspeed = 4 * psi + 18 * psi / 8;
    CHECK(fsdp(one_tensor(psi), cfg, 8, {OptimizerKind::kAdam, false}).peak() == deepspeed - 2 * psi / 8);
  }
  SUBCASE("estimate_zero2_model_states_mem_needs: 2 psi + 18 psi / GPUs, and FSDP's whole bf16 gradient") {
    cfg.sharding = ShardingStrategy::kShardGradOp;
    const std::int64_t deepspeed = 2 * psi + 18 * psi / 8;
    // DeepSpeed's ZeRO-2 reduces gradients in buckets; FSDP holds the unit's
    // whole unsharded gradient (2 psi) before its reduce-scatter.
    CHECK(fsdp(one_tensor(psi), cfg, 8, {OptimizerKind::kAdam, false}).peak() == deepspeed + 2 * psi - 2 * psi / 8);
  }
}

TEST_CASE("hybrid sharding shards over a node's GPUs") {
  FsdpConfig c = blocks(ShardingStrategy::kHybridShard);
  const auto m = models::fsdp_memory(three_units(), models::build_units(three_units(), c.wrap), c, 16, 4, {});
  CHECK(m.parameters == 3500);
}

TEST_CASE("the out-of-memory message names the rank, the phase and the unit") {
  const std::string msg = models::out_of_memory_message(3, std::int64_t{90} << 30, std::int64_t{80} << 30,
                                                          {"backward", "transformer.h.11"});
  CHECK(msg ==
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Rank 3 needs 90.00 GiB at its peak (backward of unit "
        "transformer.h.11) on a device of 80.00 GiB (device.memory_GB)");
}
