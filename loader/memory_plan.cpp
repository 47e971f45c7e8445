#include "loader/memory_plan.hpp"

#include <fmt/format.h>

#include "models/fsdp_program.hpp"

namespace ddpsim::scenarios {
namespace {

int gpus_per_node(const Scenario& s, int world_size) { return s.job.cluster ? s.job.cluster->gpus_per_node : world_size; }

std::string policy_text(const models::WrapPolicy& p) {
  if (p.min_num_params) return fmt::format("min_num_params {}", *p.min_num_params);
  if (p.modules.empty()) return "no auto_wrap_policy";
  return fmt::format("module_classes {}", fmt::join(p.modules, ", "));
}

}  // namespace

models::MemoryEstimate predict_memory(const Scenario& s, int world_size) {
  if (s.parallelism == Parallelism::kDdp) {
    models::MemoryEstimate m = models::ddp_memory(s.job.model, s.memory.inputs);
    m.comm_hook = models::comm_hook_state_bytes(s.job.ddp.comm_hook, s.job.model,
                                                models::steady_buckets(s.job.model, s.job.ddp));
    return m;
  }
  const auto units = models::build_units(s.job.model, s.fsdp->wrap);
  return models::fsdp_memory(s.job.model, units, *s.fsdp, world_size, gpus_per_node(s, world_size), s.memory.inputs);
}

sim::ChromeTraceWriter::MemoryFn memory_track(const Scenario& s, int world_size) {
  using Bytes = std::optional<std::int64_t>;
  if (s.parallelism == Parallelism::kDdp) {
    const models::MemoryEstimate m = predict_memory(s, world_size);
    return [states = m.model_states(), peak = m.peak()](const sim::OpRecord& r) -> Bytes {
      switch (static_cast<models::DdpTag>(r.label.tag)) {
        case models::DdpTag::kForward:
        case models::DdpTag::kOptimizer: return states;
        case models::DdpTag::kBackward:
        case models::DdpTag::kLocalBackward: return peak;
        default: return std::nullopt;
      }
    };
  }
  const auto units = models::build_units(s.job.model, s.fsdp->wrap);
  const models::UnitMemory m =
      models::fsdp_unit_memory(s.job.model, units, *s.fsdp, world_size, gpus_per_node(s, world_size), s.memory.inputs);
  return [m](const sim::OpRecord& r) -> Bytes {
    const auto u = static_cast<std::size_t>(r.label.index);
    switch (static_cast<models::FsdpTag>(r.label.tag)) {
      case models::FsdpTag::kForward: return m.forward[u];
      case models::FsdpTag::kBackward: return m.backward[u];
      case models::FsdpTag::kOptimizer: return m.states;
      default: return std::nullopt;
    }
  };
}

std::string describe_program(const Scenario& s) {
  const std::string optimizer(models::to_string(s.memory.inputs.optimizer));
  if (s.parallelism == Parallelism::kDdp) {
    return fmt::format("DDP{}, {}", s.memory.inputs.gradient_as_bucket_view ? " (gradient_as_bucket_view)" : "",
                       optimizer);
  }
  const models::FsdpConfig& f = *s.fsdp;
  const auto units = models::build_units(s.job.model, f.wrap);
  std::string mp;
  if (f.param_dtype) mp = fmt::format(", {} compute", models::to_string(*f.param_dtype));
  return fmt::format("FSDP {}, {} units ({}), {}{}, {}", models::to_string(f.sharding), units.size(),
                     policy_text(f.wrap), models::to_string(f.backward_prefetch), mp, optimizer);
}

nlohmann::ordered_json memory_json(const models::MemoryEstimate& m, const Scenario& s) {
  nlohmann::ordered_json j{{"parameters_bytes", m.parameters},
                           {"gradients_bytes", m.gradients},
                           {"optimizer_states_bytes", m.optimizer_states},
                           {"buckets_bytes", m.buckets},
                           {"unsharded_bytes", m.unsharded},
                           {"activations_bytes", m.activations},
                           {"peak_bytes", m.peak()},
                           {"peak_phase", m.peak_at.phase},
                           {"peak_unit", m.peak_at.unit}};
  if (m.comm_hook > 0) j["comm_hook_bytes"] = m.comm_hook;
  j["device_bytes"] = s.memory.device_bytes ? nlohmann::ordered_json(*s.memory.device_bytes) : nlohmann::ordered_json();
  j["fits"] = s.memory.device_bytes ? nlohmann::ordered_json(m.peak() <= *s.memory.device_bytes) : nlohmann::ordered_json();
  return j;
}

}  // namespace ddpsim::scenarios
