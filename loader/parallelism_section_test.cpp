// The parallelism, fsdp, optimizer and memory keys: what they load, and one
// located error per bad input.

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "models/fsdp_program.hpp"
#include "loader/memory_plan.hpp"
#include "loader/scenario.hpp"
#include "loader/test_scenarios.hpp"

using namespace ddpsim;
using scenarios::parse_scenario;
using scenarios::testing::error_of;

namespace {

const std::string kBase = R"(world_size: [1, 4]
model:
  parameters:
    - {name: emb.weight, shape: [500]}
    - {name: blocks.0.w, shape: [1000]}
    - {name: blocks.1.w, shape: [2000]}
  forward_ms: 1
  backward_ms: 2
collective: {latency_us: 5, bandwidth_GBps: 10}
)";

}  // namespace

TEST_CASE("parallelism fsdp and its section load with PyTorch's defaults") {
  const auto s = parse_scenario(kBase + "parallelism: fsdp\noptimizer: adam\n", "s.yaml");
  REQUIRE(s.fsdp);
  CHECK(s.parallelism == scenarios::Parallelism::kFsdp);
  CHECK(s.fsdp->sharding == models::ShardingStrategy::kFullShard);
  CHECK(s.fsdp->backward_prefetch == models::BackwardPrefetch::kBackwardPre);
  CHECK(s.fsdp->limit_all_gathers);
  CHECK_FALSE(s.fsdp->forward_prefetch);
  CHECK_FALSE(s.fsdp->param_dtype);
  CHECK(s.fsdp->gradient_accumulation == 1);
  CHECK(s.memory.inputs.optimizer == models::OptimizerKind::kAdam);
  CHECK_FALSE(s.memory.device_bytes);
}

TEST_CASE("the fsdp section's keys reach the memory model") {
  const auto s = parse_scenario(kBase + R"(parallelism: fsdp
fsdp:
  sharding_strategy: SHARD_GRAD_OP
  auto_wrap_policy: {module_classes: [blocks.*]}
  backward_prefetch: none
  limit_all_gathers: false
  gradient_accumulation: 4
  mixed_precision: {param_dtype: bfloat16, reduce_dtype: float32}
device: {memory_GB: 0.5}
)",
                                "s.yaml");
  CHECK(s.fsdp->sharding == models::ShardingStrategy::kShardGradOp);
  CHECK(s.fsdp->wrap.modules == std::vector<std::string>{"blocks.*"});
  CHECK(s.fsdp->param_dtype == models::DType::kBFloat16);
  CHECK(s.fsdp->reduce_dtype == models::DType::kFloat32);
  CHECK(s.fsdp->gradient_accumulation == 4);
  CHECK(s.memory.device_bytes == std::int64_t{1} << 29);
  // 4 ranks: shards of 125, 250 and 500 fp32 elements.
  const models::MemoryEstimate m = scenarios::predict_memory(s, 4);
  CHECK(m.parameters == 3500);
  CHECK(scenarios::describe_program(s) ==
        "FSDP SHARD_GRAD_OP, 3 units (module_classes blocks.*), none, bfloat16 compute, sgd");
}

TEST_CASE("activations: the whole model's spread by forward time, or per layer") {
  SUBCASE("whole model, forward time in proportion to size") {
    const auto s = parse_scenario(kBase + "parallelism: fsdp\n" + "device: {memory_GB: 1}\n", "s.yaml");
    CHECK(s.job.model.activations.empty());
    std::string text = kBase;
    text.replace(text.find("  forward_ms: 1"), 15, "  forward_ms: 1\n  activation_MB: 3.5");
    const auto a = parse_scenario(text, "s.yaml");
    // 3.5 MiB in proportion to forward time (1 ms spread by size, in whole
    // nanoseconds): 1/7, 2/7, 4/7 to within the rounding, adding up exactly.
    const auto& act = a.job.model.activations;
    REQUIRE(act.size() == 3);
    CHECK(act[0] + act[1] + act[2] == 3670016);
    CHECK(std::abs(act[0] - 524288) <= 2);
    CHECK(std::abs(act[1] - 1048576) <= 2);
  }
  SUBCASE("per layer") {
    std::string text = kBase;
    text.replace(text.find("  forward_ms: 1\n  backward_ms: 2\n"), 32,
                 "  layers:\n    - {params: [emb.weight], forward_ms: 1, backward_ms: 2, activation_MB: 1}\n"
                 "    - {params: [blocks.0.w, blocks.1.w], forward_ms: 1, backward_ms: 2}\n");
    const auto s = parse_scenario(text, "s.yaml");
    CHECK(s.job.model.activations == std::vector<std::int64_t>{1048576, 0, 0});
  }
}

TEST_CASE("DDP's memory keys") {
  const auto s = parse_scenario(kBase + "ddp: {gradient_as_bucket_view: true}\noptimizer: sgd_momentum\n", "s.yaml");
  CHECK(s.parallelism == scenarios::Parallelism::kDdp);
  CHECK(s.memory.inputs.gradient_as_bucket_view);
  const models::MemoryEstimate m = scenarios::predict_memory(s, 4);
  CHECK(m.model_states() == 3 * 3500 * 4);
}

TEST_CASE("bad parallelism and fsdp input: a located error each") {
  SUBCASE("an fsdp section under ddp") {
    CHECK(error_of(kBase + "fsdp: {sharding_strategy: FULL_SHARD}\n") ==
          "s.yaml:10:1: key 'fsdp': is given, but parallelism is ddp; set parallelism: fsdp to use it");
  }
  SUBCASE("a ddp section under fsdp") {
    CHECK(error_of(kBase + "parallelism: fsdp\nddp: {bucket_cap_mb: 25}\n").find("key 'ddp': does not apply") !=
          std::string::npos);
  }
  SUBCASE("a link that slows mid-run: the world group's collectives only, not hybrid sharding's groups") {
    const std::string slow = "faults: [{type: slow_link, rank: 0, factor: 4, at_ms: 5}]\n";
    CHECK(parse_scenario(kBase + "parallelism: fsdp\n" + slow, "s.yaml").job.faults.size() == 1);
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {sharding_strategy: HYBRID_SHARD}\n" + slow) ==
          "s.yaml:12:48: key 'faults[0].at_ms': a link that slows mid-run is modelled on the world group's collectives "
          "only: expected no at_ms under a hybrid sharding strategy (slow the link from the start instead)");
  }
  SUBCASE("an unknown strategy") {
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {sharding_strategy: ZERO3}\n")
              .find("key 'fsdp.sharding_strategy': value 'ZERO3': expected one of: FULL_SHARD") != std::string::npos);
  }
  SUBCASE("both wrap policies") {
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {auto_wrap_policy: {min_num_params: 10, module_classes: [a]}}\n")
              .find("give min_num_params or module_classes, not both") != std::string::npos);
  }
  SUBCASE("an empty wrap policy") {
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {auto_wrap_policy: {}}\n")
              .find("key 'fsdp.auto_wrap_policy.min_num_params': missing") != std::string::npos);
  }
  SUBCASE("a zero min_num_params") {
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {auto_wrap_policy: {min_num_params: 0}}\n")
              .find("key 'fsdp.auto_wrap_policy.min_num_params': value '0'") != std::string::npos);
  }
  SUBCASE("no micro-steps") {
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {gradient_accumulation: 0}\n")
              .find("key 'fsdp.gradient_accumulation': value '0'") != std::string::npos);
  }
  SUBCASE("an unknown optimizer") {
    CHECK(error_of(kBase + "optimizer: lamb\n").find("key 'optimizer': value 'lamb': expected one of: sgd") !=
          std::string::npos);
  }
  SUBCASE("a non-positive device memory") {
    CHECK(error_of(kBase + "device: {memory_GB: 0}\n").find("key 'device.memory_GB': value '0'") != std::string::npos);
  }
  SUBCASE("activations for the whole model and per layer") {
    std::string text = kBase;
    text.replace(text.find("  forward_ms: 1\n  backward_ms: 2\n"), 32,
                 "  activation_MB: 2\n  layers:\n    - {params: [emb.weight, blocks.0.w, blocks.1.w], forward_ms: 1, "
                 "backward_ms: 2, activation_MB: 1}\n");
    CHECK(error_of(text).find("key 'model.activation_MB': give it per layer or for the whole model, not both") !=
          std::string::npos);
  }
  SUBCASE("a bad mixed-precision dtype") {
    CHECK(error_of(kBase + "parallelism: fsdp\nfsdp: {mixed_precision: {param_dtype: int8}}\n")
              .find("key 'fsdp.mixed_precision.param_dtype': value 'int8'") != std::string::npos);
  }
}

TEST_CASE("faults under FSDP: its own kinds load, the other program's are refused") {
  std::string two = kBase;
  two.replace(0, 19, "world_size: [2, 4]\n");
  const std::string fsdp = two + "parallelism: fsdp\nfsdp: {auto_wrap_policy: {module_classes: [blocks.*]}}\n";
  SUBCASE("skip_unit names a unit by its module path; micro_batches a count") {
    const auto s = parse_scenario(fsdp + R"(faults:
  - {type: skip_unit, rank: 1, iteration: 2, unit: blocks.1}
  - {type: micro_batches, rank: 0, iteration: 3, count: 2}
)",
                                  "s.yaml");
    REQUIRE(s.job.faults.size() == 2);
    const auto* skip = s.job.faults[0].as<models::fault::SkipUnit>();
    REQUIRE(skip != nullptr);
    CHECK(skip->unit == 1);  // blocks.0, blocks.1, the root
    CHECK(skip->module == "blocks.1");
    CHECK(s.job.faults[1].as<models::fault::MicroBatches>()->count == 2);
  }
  SUBCASE("an unknown unit: the units it could be") {
    CHECK(error_of(fsdp + "faults: [{type: skip_unit, rank: 1, iteration: 2, unit: blocks}]\n") ==
          "s.yaml:12:57: key 'faults[0].unit': value 'blocks': expected the module path of a unit other than the root: "
          "blocks.0, blocks.1");
  }
  SUBCASE("the root cannot be skipped") {
    CHECK(error_of(two + "parallelism: fsdp\nfaults: [{type: skip_unit, rank: 1, iteration: 2, unit: emb}]\n")
              .find("expected a unit other than the root, but the wrap policy makes only the root") != std::string::npos);
  }
  SUBCASE("FSDP's kinds under DDP") {
    CHECK(error_of(two + "faults: [{type: micro_batches, rank: 1, iteration: 2, count: 1}]\n")
              .find("key 'faults[0].type': value 'micro_batches': expected parallelism: fsdp for it") != std::string::npos);
  }
  SUBCASE("DDP's kinds under FSDP") {
    CHECK(error_of(fsdp + "faults: [{type: skip_backward, rank: 1, iteration: 2}]\n")
              .find("value 'skip_backward': expected a fault the FSDP program runs") != std::string::npos);
  }
  SUBCASE("a straggler model under FSDP") {
    CHECK(error_of(fsdp + "straggler: {model: log2, penalty_ms: 1}\n")
              .find("key 'straggler.model': value 'log2': expected model none with parallelism: fsdp") !=
          std::string::npos);
  }
}

TEST_CASE("activation checkpointing: the outermost matching module, its forward again in backward") {
  const auto plain = parse_scenario(kBase, "s.yaml");
  std::string text = kBase;
  text.replace(text.find("  forward_ms: 1"), 15, "  forward_ms: 1\n  activation_checkpointing: [blocks.*]");
  const auto s = parse_scenario(text, "s.yaml");
  CHECK(s.job.model.checkpointed == std::vector<int>{-1, 0, 1});
  CHECK(s.job.model.backward[0] == plain.job.model.backward[0]);
  CHECK(s.job.model.backward[2] == plain.job.model.backward[2] + plain.job.model.forward[2]);
  std::string whole = kBase;
  whole.replace(whole.find("  forward_ms: 1"), 15, "  forward_ms: 1\n  activation_checkpointing: [blocks, blocks.*]");
  CHECK(parse_scenario(whole, "s.yaml").job.model.checkpointed == std::vector<int>{-1, 0, 0});
  std::string bad = kBase;
  bad.replace(bad.find("  forward_ms: 1"), 15, "  forward_ms: 1\n  activation_checkpointing: [blocks.*, layers.*]");
  CHECK(error_of(bad) ==
        "s.yaml:8:40: key 'model.activation_checkpointing': value 'layers.*': expected a pattern matching a module of "
        "the parameters' names (`*` is one path component)");
}

TEST_CASE("the trace's memory counter reaches the predicted peak at the predicted unit") {
  std::string text = kBase;
  text.replace(text.find("  forward_ms: 1"), 15, "  forward_ms: 1\n  activation_MB: 1");
  for (const char* strategy : {"FULL_SHARD", "SHARD_GRAD_OP"}) {
    CAPTURE(strategy);
    const auto s = parse_scenario(
        text + "parallelism: fsdp\nfsdp: {sharding_strategy: " + strategy + ", auto_wrap_policy: {module_classes: [blocks.*]}}\n",
        "s.yaml");
    const models::MemoryEstimate m = scenarios::predict_memory(s, 4);
    const auto track = scenarios::memory_track(s, 4);
    std::int64_t highest = 0;
    std::string where;
    for (std::uint32_t u = 0; u < 3; ++u) {
      for (auto tag : {models::FsdpTag::kForward, models::FsdpTag::kBackward}) {
        sim::OpRecord r{};
        r.label = {static_cast<std::uint32_t>(tag), 0, u};
        const std::int64_t bytes = *track(r);
        if (bytes > highest) highest = bytes, where = models::fsdp_op_name(r.label);
      }
    }
    sim::OpRecord opt{};
    opt.label = {static_cast<std::uint32_t>(models::FsdpTag::kOptimizer), 0, 0};
    CHECK(*track(opt) == m.model_states());
    CHECK(highest == m.peak());
    CHECK(where == "backward unit 1");  // blocks.1, as peak_at says
    CHECK(m.peak_at.unit == "blocks.1");
  }
}
