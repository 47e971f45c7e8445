// ddp.comm_hook: a hook's name, or a mapping with `name`, PowerSGDState's
// options and the rates its compute is priced at (models/comm_hook.hpp).

#include <fmt/format.h>

#include "loader/scenario_sections.hpp"

namespace ddpsim::scenarios {

namespace {

constexpr std::string_view kPowerSgdKeys[] = {"matrix_approximation_rank", "start_powerSGD_iter",
                                              "min_compression_rate",      "use_error_feedback",
                                              "warm_start",                "orthogonalization_epsilon"};
constexpr std::string_view kCastKeys[] = {"cast_GBps"};
constexpr std::string_view kPowerSgdCostKeys[] = {"pass_GBps", "matmul_GFLOPs"};

models::PowerSgdOptions read_powersgd(const Section& h) {
  models::PowerSgdOptions o;
  o.matrix_approximation_rank = static_cast<int>(h.integer("matrix_approximation_rank", 1));
  o.start_powerSGD_iter = static_cast<int>(h.integer("start_powerSGD_iter", 1000));
  o.min_compression_rate = h.number("min_compression_rate", 2.0);
  o.use_error_feedback = h.boolean("use_error_feedback", true);
  o.warm_start = h.boolean("warm_start", true);
  o.orthogonalization_epsilon = h.number("orthogonalization_epsilon", 0.0);
  if ((o.use_error_feedback || o.warm_start) && o.start_powerSGD_iter <= 1) {
    // PowerSGDState.__init__ raises ValueError here.
    h.fail_value("start_powerSGD_iter",
                 "expected > 1 with use_error_feedback or warm_start (PowerSGDState raises: PowerSGD can only be "
                 "applied after the first two iterations in DDP)");
  }
  return o;
}

models::HookCost read_cost(const Section& h, models::HookCost c) {
  const auto rate = [&](std::string_view key, double& value, double scale) {
    if (!h.has(key)) return;
    value = scale * h.number(key, std::nullopt);
    c.measured = true;
  };
  rate("cast_GBps", c.cast_bytes_per_s, 1e9);
  rate("pass_GBps", c.pass_bytes_per_s, 1e9);
  rate("matmul_GFLOPs", c.matmul_flops_per_s, 1e9);
  rate("alloc_GBps", c.alloc_bytes_per_s, 1e9);
  if (h.has("op_us")) {
    c.per_op = h.micros("op_us", std::nullopt);
    c.measured = true;
  }
  return c;
}

// What no option can fix: the backend, Join.
void check_hook(const Section& where, std::string_view key, const models::DdpJob& job) {
  const models::CommHookKind kind = job.ddp.comm_hook.kind;
  if (kind == models::CommHookKind::kBf16Compress && job.backend != models::Backend::kNccl) {
    where.fail_value(key, "expected a hook gloo can all-reduce: gloo rejects bfloat16 ('Invalid scalar type', "
                          "torch 1.13); bf16_compress needs collective.backend: nccl");
  }
  if (kind != models::CommHookKind::kAllReduce && job.join) {
    where.fail_value(key, "expected allreduce with training.join: a joined rank's shadow of a hooked bucket is "
                          "not modelled");
  }
}

}  // namespace

void read_comm_hook(const Section& top, models::DdpJob& job) {
  const Section ddp = top.child("ddp");
  models::CommHook& hook = job.ddp.comm_hook;
  hook = models::CommHook{};
  hook.cost = models::default_hook_cost(job.backend == models::Backend::kNccl);
  if (!ddp.has("comm_hook")) return;
  const bool mapping = ddp.value("comm_hook").IsMap();
  if (!mapping) {
    hook.kind = *models::parse_comm_hook(ddp.choice("comm_hook", std::nullopt));
    check_hook(ddp, "comm_hook", job);
    return;
  }
  const Section h = ddp.child("comm_hook");
  if (!h.has("name")) h.missing("name", "the hook's name");
  const std::string name = h.choice("name", std::nullopt);
  hook.kind = *models::parse_comm_hook(name);
  check_hook(h, "name", job);
  if (!hook.powersgd_family()) {
    for (std::string_view k : kPowerSgdKeys) h.forbid(k, fmt::format("a PowerSGDState option; the hook is {}", name));
    for (std::string_view k : kPowerSgdCostKeys) h.forbid(k, fmt::format("prices PowerSGD's work; the hook is {}", name));
  } else {
    hook.powersgd = read_powersgd(h);
  }
  if (hook.kind != models::CommHookKind::kFp16Compress && hook.kind != models::CommHookKind::kBf16Compress) {
    for (std::string_view k : kCastKeys) h.forbid(k, fmt::format("prices the half-precision casts; the hook is {}", name));
  }
  if (hook.kind == models::CommHookKind::kAllReduce) {
    for (std::string_view k : {"op_us", "alloc_GBps"}) h.forbid(k, "the allreduce hook adds no work of its own");
  }
  hook.cost = read_cost(h, hook.cost);
}

}  // namespace ddpsim::scenarios
