#include "report/program_report.hpp"

#include <fmt/ostream.h>

#include <cmath>

namespace ddpsim::report {

nlohmann::ordered_json comm_json(const scenarios::ProgramSummary& p) {
  return {{"sent_bytes_per_step", p.sent_bytes_per_step}, {"collectives_per_step", p.collectives_per_step}};
}

nlohmann::ordered_json comm_hook_json(const models::DdpJob& job, const scenarios::ProgramSummary& p) {
  const models::CommHook& hook = job.ddp.comm_hook;
  const scenarios::HookSummary h = p.hook.value_or(scenarios::HookSummary{});
  nlohmann::ordered_json out{{"name", models::to_string(hook.kind)}};
  if (hook.powersgd_family()) {
    const models::PowerSgdOptions& o = hook.powersgd;
    out["options"] = {{"matrix_approximation_rank", o.matrix_approximation_rank},
                      {"start_powerSGD_iter", o.start_powerSGD_iter},
                      {"min_compression_rate", o.min_compression_rate},
                      {"use_error_feedback", o.use_error_feedback},
                      {"warm_start", o.warm_start},
                      {"orthogonalization_epsilon", o.orthogonalization_epsilon}};
  }
  const models::HookCost& c = hook.cost;
  out["compressed_steps"] = h.compressed_steps;
  out["measured_steps"] = h.measured_steps;
  out["input_bytes_per_step"] = h.input_bytes;
  out["wire_bytes_per_step"] = h.wire_bytes;
  out["compression_ratio"] = h.wire_bytes > 0 ? std::round(1e6 * static_cast<double>(h.input_bytes) / static_cast<double>(h.wire_bytes)) / 1e6 : 0.0;
  out["all_reduces_per_step"] = h.collectives;
  out["hook_compute_ms_per_step"] = std::round(h.compute_ms * 1e6) / 1e6;
  out["warning"] = p.hook_warning.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.hook_warning);
  out["rates"] = {{"cast_GBps", c.cast_bytes_per_s / 1e9}, {"pass_GBps", c.pass_bytes_per_s / 1e9},
                  {"matmul_GFLOPs", c.matmul_flops_per_s / 1e9}, {"alloc_GBps", c.alloc_bytes_per_s / 1e9}, {"op_us", static_cast<double>(c.per_op.count_ns()) / 1e3},
                  {"measured", c.measured}};
  return out;
}

// The comm hook's line: bytes handed over and all-reduced, its compute, which steps it compresses.
void write_comm_hook(std::ostream& out, const models::DdpJob& job, const scenarios::ProgramSummary& p) {
  const models::CommHook& hook = job.ddp.comm_hook;
  const scenarios::HookSummary h = p.hook.value_or(scenarios::HookSummary{});
  const double ratio = h.wire_bytes > 0 ? static_cast<double>(h.input_bytes) / static_cast<double>(h.wire_bytes) : 0;
  fmt::print(out, "\ncomm hook {}: a step it compresses all-reduces {:.3f} MB of the {:.3f} MB DDP hands it ({:.1f}x less, "
                  "{} all-reduces) and computes {:.3f} ms (rates: {})",
             models::to_string(hook.kind), static_cast<double>(h.wire_bytes) / 1e6, static_cast<double>(h.input_bytes) / 1e6,
             ratio, h.collectives, h.compute_ms, hook.cost.measured ? "from the scenario" : "stated defaults, not measured");
  if (hook.powersgd_family()) {
    fmt::print(out, "; rank {}, from step {}: {} of the {} measured steps", hook.powersgd.matrix_approximation_rank,
               hook.powersgd.start_powerSGD_iter, h.compressed_steps, h.measured_steps);
  }
  fmt::print(out, "\n");
  if (!p.hook_warning.empty()) fmt::print(out, "warning: {}\n", p.hook_warning);
}

nlohmann::ordered_json fsdp_layout_json(const scenarios::ProgramSummary& p) {
  nlohmann::ordered_json units = nlohmann::ordered_json::array();
  for (std::size_t u = 0; u < p.units.size(); ++u) {
    const scenarios::FsdpUnitLayout& unit = p.units[u];
    units.push_back({{"index", u},
                     {"module", unit.module},
                     {"numel", unit.numel},
                     {"padded_numel", unit.padded_numel},
                     {"all_gather_bytes", unit.all_gather_bytes},
                     {"gathered_in_backward", unit.gathered_in_backward},
                     {"reduce_bytes", unit.reduce_bytes}});
  }
  return {{"sharding_strategy", p.sharding_strategy}, {"shard_group", p.shard_group}, {"units", std::move(units)}};
}

}  // namespace ddpsim::report
