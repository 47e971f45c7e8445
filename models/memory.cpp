#include "models/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace ddpsim::models {
namespace {

constexpr std::array<std::string_view, 4> kOptimizerNames = {"sgd", "sgd_momentum", "adam", "adamw"};

std::int64_t activation_of(const ModelSpec& model, int param) {
  return model.activations.empty() ? 0 : model.activations[static_cast<std::size_t>(param)];
}

int checkpoint_of(const ModelSpec& model, int param) {
  return model.checkpointed.empty() ? -1 : model.checkpointed[static_cast<std::size_t>(param)];
}

// Activations of `params`: those kept from forward for backward, and the
// most one checkpointed module among them holds while it recomputes.
struct Activations {
  std::int64_t kept = 0;
  std::int64_t recompute = 0;
};

Activations activations_of(const ModelSpec& model, const std::vector<int>& params) {
  Activations out;
  std::vector<std::int64_t> by_module;
  for (int p : params) {
    const int m = checkpoint_of(model, p);
    if (m < 0) {
      out.kept += activation_of(model, p);
      continue;
    }
    if (by_module.size() <= static_cast<std::size_t>(m)) by_module.resize(static_cast<std::size_t>(m) + 1, 0);
    by_module[static_cast<std::size_t>(m)] += activation_of(model, p);
  }
  for (std::int64_t a : by_module) out.recompute = std::max(out.recompute, a);
  return out;
}

// What one unit holds, per rank, in bytes.
struct UnitBytes {
  std::int64_t gathered = 0;     // the all-gathered flat parameter while it is unsharded
  std::int64_t grad = 0;         // its unsharded gradient, while the unit computes it
  std::int64_t reducing = 0;     // after the unit is freed: that gradient, its reduce-dtype copy, the shard it reduces to
  std::int64_t activations = 0;  // what its forward keeps for backward
  std::int64_t recompute = 0;    // its largest checkpointed module's, live while it runs
  std::int64_t kept_grad = 0;    // no_sync: its unsharded gradient, kept from micro-step to micro-step
};

// A point of the step: what is live besides the persistent model states.
struct Point {
  std::int64_t transient = 0;
  std::int64_t activations = 0;
  MemoryPoint at;
  std::int64_t total() const { return transient + activations; }
};

class FsdpTimeline {
 public:
  FsdpTimeline(const std::vector<FsdpUnit>& units, std::vector<UnitBytes> bytes, const FsdpConfig& cfg, bool sharded)
      : units_(units), bytes_(std::move(bytes)), cfg_(cfg), sharded_(sharded), order_(forward_order(units)) {}

  // The point of the step with the most transient memory: each unit's
  // forward, each unit's backward, the optimizer (none).
  int unit_at(int k) const { return order_[static_cast<std::size_t>(k)]; }
  Point forward_at(int k) const { return forward_point(k); }
  // The larger of a unit's two backward moments.
  Point backward_at(int k) const {
    const Point p = backward_point(k, false);
    const Point q = backward_point(k, true);
    return q.total() > p.total() ? q : p;
  }

  Point peak() const {
    Point best{0, 0, {"optimizer", ""}};
    const int n = static_cast<int>(order_.size());
    auto consider = [&](const Point& p) {
      if (p.total() > best.total()) best = p;
    };
    for (int k = 0; k < n; ++k) consider(forward_at(k));
    for (int k = n - 1; k >= 0; --k) consider(backward_at(k));
    return best;
  }

 private:
  // Unit order_[k] computing its forward: the root, its enclosing units and
  // itself unsharded, and the next unit (limit_all_gathers lets two
  // all-gathers run ahead of the CPU; forward_prefetch issues the next one).
  // Without resharding after forward every earlier unit stays unsharded.
  // Under no_sync (the syncing micro-step's forward) every unit's gradient
  // is kept unsharded, and SHARD_GRAD_OP's units are still gathered.
  Point forward_point(int k) const {
    std::vector<bool> live = base(k);
    const int n = static_cast<int>(order_.size());
    if (sharded_ && !reshards()) {
      for (int j = 0; j < (accumulates() ? n : k); ++j) mark(live, j);
    }
    if ((cfg_.limit_all_gathers || cfg_.forward_prefetch) && k + 1 < n) mark(live, k + 1);
    return {sum(live) + kept_grads(n), activations_upto(k) + recompute(k), {"forward", unit_name(k)}};
  }

  // Unit order_[k] in backward, at one of two moments:
  // - computing its gradient: itself unsharded and its unsharded gradient;
  // - after_free: the post-backward hook has freed its parameters (the
  //   root's too; _reshard comes first in _post_backward_hook), then casts the
  //   gradient to reduce_dtype and reduce-scatters it into a new shard.
  // BACKWARD_PRE has gathered the next unit in backward (order_[k - 1])
  // before this one computes; BACKWARD_POST gathers it after the free.
  Point backward_point(int k, bool after_free) const {
    std::vector<bool> live = base(k);
    if (sharded_ && !reshards()) {
      for (int j = 0; j < k; ++j) mark(live, j);
    }
    const auto self = static_cast<std::size_t>(order_[static_cast<std::size_t>(k)]);
    if (after_free && sharded_) live[self] = false;  // the root too: _should_free_in_backward does not exempt it
    const bool prefetch = cfg_.backward_prefetch == BackwardPrefetch::kBackwardPre ||
                          (after_free && cfg_.backward_prefetch == BackwardPrefetch::kBackwardPost);
    if (prefetch && k > 0) mark(live, k - 1);
    const std::int64_t grad = after_free ? bytes_[self].reducing : bytes_[self].grad;
    return {sum(live) + grad + kept_grads(k), activations_upto(k) + recompute(k), {"backward", unit_name(k)}};
  }

  bool reshards() const { return reshards_after_forward(cfg_.sharding); }
  bool accumulates() const { return sharded_ && cfg_.gradient_accumulation > 1; }

  // no_sync's unsharded gradients of order_[0, k): the units the syncing
  // backward has not reduced yet (a unit's own is in its grad).
  std::int64_t kept_grads(int k) const {
    std::int64_t total = 0;
    for (int j = 0; accumulates() && j < k; ++j) total += bytes_[static_cast<std::size_t>(order_[static_cast<std::size_t>(j)])].kept_grad;
    return total;
  }

  // The root (unsharded from its forward to the end of backward), unit
  // order_[k] and every unit enclosing it.
  std::vector<bool> base(int k) const {
    std::vector<bool> live(units_.size(), false);
    for (std::size_t u = 0; u < units_.size(); ++u) live[u] = units_[u].root;
    for (int u = order_[static_cast<std::size_t>(k)]; u >= 0; u = units_[static_cast<std::size_t>(u)].parent) {
      live[static_cast<std::size_t>(u)] = true;
    }
    return live;
  }

  void mark(std::vector<bool>& live, int k) const { live[static_cast<std::size_t>(order_[static_cast<std::size_t>(k)])] = true; }

  std::int64_t sum(const std::vector<bool>& live) const {
    std::int64_t total = 0;
    for (std::size_t u = 0; u < live.size(); ++u) total += live[u] ? bytes_[u].gathered : 0;
    return total;
  }

  // Activations of the units whose forward has run, up to and including order_[k].
  std::int64_t activations_upto(int k) const {
    std::int64_t total = 0;
    for (int j = 0; j <= k; ++j) total += bytes_[static_cast<std::size_t>(order_[static_cast<std::size_t>(j)])].activations;
    return total;
  }

  std::int64_t recompute(int k) const { return bytes_[static_cast<std::size_t>(order_[static_cast<std::size_t>(k)])].recompute; }

  std::string unit_name(int k) const {
    return models::unit_name(units_[static_cast<std::size_t>(order_[static_cast<std::size_t>(k)])]);
  }

  const std::vector<FsdpUnit>& units_;
  std::vector<UnitBytes> bytes_;
  const FsdpConfig& cfg_;
  bool sharded_;
  std::vector<int> order_;
};

}  // namespace

std::string_view to_string(OptimizerKind kind) { return kOptimizerNames[static_cast<std::size_t>(kind)]; }

std::optional<OptimizerKind> parse_optimizer(std::string_view name) {
  for (std::size_t i = 0; i < kOptimizerNames.size(); ++i) {
    if (kOptimizerNames[i] == name) return static_cast<OptimizerKind>(i);
  }
  return std::nullopt;
}

std::int64_t optimizer_state_bytes(OptimizerKind kind, std::int64_t numel, DType dtype) {
  const std::int64_t one = numel * element_size(dtype);
  switch (kind) {
    case OptimizerKind::kSgd: return 0;
    case OptimizerKind::kSgdMomentum: return one;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: return 2 * one;
  }
  return 0;
}

MemoryEstimate ddp_memory(const ModelSpec& model, const MemoryInputs& in) {
  MemoryEstimate m;
  for (std::size_t i = 0; i < model.parameters.size(); ++i) {
    const Tensor& t = model.parameters[i];
    m.parameters += t.bytes();
    m.gradients += t.bytes();
    m.optimizer_states += optimizer_state_bytes(in.optimizer, t.numel(), t.dtype);
  }
  std::vector<int> all(model.parameters.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const Activations a = activations_of(model, all);
  m.activations = a.kept + a.recompute;  // the last checkpointed module recomputing as backward starts, at most
  m.buckets = in.gradient_as_bucket_view ? 0 : m.gradients;
  m.peak_at = {"backward", ""};
  return m;
}

namespace {

// FSDP's persistent states (in `m`) and what each unit holds while gathered.
struct FsdpBytes {
  MemoryEstimate m;
  std::vector<UnitBytes> bytes;
  bool sharded = false;
};

FsdpBytes fsdp_bytes(const ModelSpec& model, const std::vector<FsdpUnit>& units, const FsdpConfig& cfg, int world_size,
                     int gpus_per_node, const MemoryInputs& in) {
  if (world_size < 1 || gpus_per_node < 1) throw std::invalid_argument("FSDP needs at least one rank");
  const int group = world_size == 1 ? 1 : shard_group_size(cfg.sharding, world_size, gpus_per_node);
  FsdpBytes out;
  out.sharded = group > 1;
  MemoryEstimate& m = out.m;
  out.bytes.resize(units.size());
  for (std::size_t u = 0; u < units.size(); ++u) {
    const FsdpUnit& unit = units[u];
    if (unit.params.empty()) continue;  // a root whose parameters its children took: no FlatParameter, no bytes
    const DType own = model.parameters[static_cast<std::size_t>(unit.params.front())].dtype;
    const std::int64_t e_param = element_size(own);
    const std::int64_t e_compute = cfg.param_dtype ? element_size(*cfg.param_dtype) : e_param;
    const std::int64_t e_reduce = cfg.reduce_dtype ? element_size(*cfg.reduce_dtype) : e_compute;
    const std::int64_t padded = padded_numel(unit.numel, group);
    const std::int64_t shard = padded / group;
    m.parameters += shard * e_param;
    m.gradients += shard * e_param;
    m.optimizer_states += optimizer_state_bytes(in.optimizer, shard, own);
    UnitBytes& b = out.bytes[u];
    if (out.sharded) {
      b.gathered = padded * e_compute;
      b.grad = padded * e_compute;
      b.reducing = b.grad + (e_reduce != e_compute ? padded * e_reduce : 0) + shard * e_reduce;
      b.kept_grad = padded * e_compute;
    } else if (cfg.param_dtype) {
      b.gathered = padded * e_compute;  // the low-precision copy compute runs on
      b.grad = padded * e_compute;
      b.reducing = b.grad;
    }
    const Activations a = activations_of(model, unit.params);
    b.activations = a.kept;
    b.recompute = a.recompute;
  }
  return out;
}

}  // namespace

MemoryEstimate fsdp_memory(const ModelSpec& model, const std::vector<FsdpUnit>& units, const FsdpConfig& cfg,
                           int world_size, int gpus_per_node, const MemoryInputs& in) {
  FsdpBytes f = fsdp_bytes(model, units, cfg, world_size, gpus_per_node, in);
  const Point peak = FsdpTimeline(units, std::move(f.bytes), cfg, f.sharded).peak();
  f.m.unsharded = peak.transient;
  f.m.activations = peak.activations;
  f.m.peak_at = peak.at;
  return f.m;
}

UnitMemory fsdp_unit_memory(const ModelSpec& model, const std::vector<FsdpUnit>& units, const FsdpConfig& cfg,
                            int world_size, int gpus_per_node, const MemoryInputs& in) {
  FsdpBytes f = fsdp_bytes(model, units, cfg, world_size, gpus_per_node, in);
  const FsdpTimeline timeline(units, std::move(f.bytes), cfg, f.sharded);
  UnitMemory out;
  out.states = f.m.model_states();
  out.forward.resize(units.size());
  out.backward.resize(units.size());
  for (int k = 0; k < static_cast<int>(units.size()); ++k) {
    const auto u = static_cast<std::size_t>(timeline.unit_at(k));
    out.forward[u] = out.states + timeline.forward_at(k).total();
    out.backward[u] = out.states + timeline.backward_at(k).total();
  }
  return out;
}

std::string out_of_memory_message(int rank, std::int64_t peak, std::int64_t capacity, const MemoryPoint& at) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const std::string where = at.unit.empty() ? at.phase : fmt::format("{} of unit {}", at.phase, at.unit);
  return fmt::format(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Rank {} needs {:.2f} GiB at its peak ({}) on a device of "
      "{:.2f} GiB (device.memory_GB)",
      rank, static_cast<double>(peak) / kGiB, where, static_cast<double>(capacity) / kGiB);
}

}  // namespace ddpsim::models
