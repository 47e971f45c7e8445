// `parallelism`, the fsdp section, `optimizer` and what memory reads
// (docs/scenario-format.md; meanings: docs/fsdp.md#units and #memory).

#include <cmath>

#include "models/fsdp.hpp"
#include "models/memory.hpp"
#include "loader/scenario_sections.hpp"

namespace ddpsim::scenarios {
namespace {

models::WrapPolicy read_wrap_policy(const Section& fsdp) {
  models::WrapPolicy policy;
  if (!fsdp.has("auto_wrap_policy")) return policy;
  const Section p = fsdp.child("auto_wrap_policy");
  if (p.has("min_num_params") && p.has("module_classes")) {
    p.fail("module_classes", "give min_num_params or module_classes, not both");
  }
  if (p.has("min_num_params")) {
    policy.min_num_params = p.integer("min_num_params", std::nullopt);
  } else if (p.has("module_classes")) {
    for (const auto& [pattern, node] : p.strings("module_classes")) policy.modules.push_back(pattern);
    if (policy.modules.empty()) p.fail_value("module_classes", "expected at least one module path pattern");
  } else {
    p.missing("min_num_params", "min_num_params: N, or module_classes: [module path patterns]");
  }
  return policy;
}

models::DType read_dtype(const Section& s, std::string_view key) {
  return *models::parse_dtype(s.choice(key, std::nullopt));
}

models::FsdpConfig read_fsdp(const Section& top) {
  const Section s = top.child("fsdp");
  models::FsdpConfig cfg;
  cfg.sharding = *models::parse_sharding_strategy(s.choice("sharding_strategy", "FULL_SHARD"));
  cfg.wrap = read_wrap_policy(s);
  const std::string prefetch = s.choice("backward_prefetch", "BACKWARD_PRE");
  cfg.backward_prefetch = prefetch == "BACKWARD_PRE"    ? models::BackwardPrefetch::kBackwardPre
                          : prefetch == "BACKWARD_POST" ? models::BackwardPrefetch::kBackwardPost
                                                        : models::BackwardPrefetch::kNone;
  cfg.forward_prefetch = s.boolean("forward_prefetch", false);
  cfg.limit_all_gathers = s.boolean("limit_all_gathers", true);
  cfg.gradient_accumulation = static_cast<int>(s.integer("gradient_accumulation", 1));
  const Section mp = s.child("mixed_precision");
  if (mp.has("param_dtype")) cfg.param_dtype = read_dtype(mp, "param_dtype");
  if (mp.has("reduce_dtype")) cfg.reduce_dtype = read_dtype(mp, "reduce_dtype");
  return cfg;
}

}  // namespace

void read_parallelism(const Section& top, Scenario& out) {
  const std::string program = top.choice("parallelism", "ddp");
  out.parallelism_at = top.has("parallelism") ? top.location_of(top.value("parallelism")) : top.location();
  if (program == "fsdp") {
    out.parallelism = Parallelism::kFsdp;
    top.forbid("ddp", "does not apply with parallelism: fsdp (its settings are in the fsdp section)");
    out.fsdp = read_fsdp(top);
    const Section f = top.child("fsdp");
    out.fsdp_strategy_at = f.has("sharding_strategy") ? f.location_of(f.value("sharding_strategy")) : out.parallelism_at;
  } else {
    top.forbid("fsdp", "is given, but parallelism is ddp; set parallelism: fsdp to use it");
    out.memory.inputs.gradient_as_bucket_view = top.child("ddp").boolean("gradient_as_bucket_view", false);
  }
  out.memory.inputs.optimizer = *models::parse_optimizer(top.choice("optimizer", "sgd"));
  const Section device = top.child("device");
  if (device.has("memory_GB")) {
    const double gib = device.number("memory_GB", std::nullopt);
    out.memory.device_bytes = std::llround(gib * 1024.0 * 1024.0 * 1024.0);
  }
}

}  // namespace ddpsim::scenarios
