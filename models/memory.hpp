#pragma once
// Memory per rank: model states (parameters, gradients, optimizer states,
// DDP's bucket buffers), FSDP's unsharded units in flight, activations, and
// the peak with where it falls. Derivations: docs/fsdp.md#memory;
// facts: ../shared/reference/fsdp_semantics.md section 2.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/fsdp.hpp"
#include "models/parameters.hpp"

namespace ddpsim::models {

/// The optimizer, for its state: SGD none, SGD with momentum one buffer,
/// Adam and AdamW two (exp_avg, exp_avg_sq), each the parameter's size.
enum class OptimizerKind : std::uint8_t { kSgd, kSgdMomentum, kAdam, kAdamW };
std::string_view to_string(OptimizerKind kind);
std::optional<OptimizerKind> parse_optimizer(std::string_view name);
/// Optimizer-state bytes for `numel` elements of `dtype`.
std::int64_t optimizer_state_bytes(OptimizerKind kind, std::int64_t numel, DType dtype);

struct MemoryInputs {
  OptimizerKind optimizer = OptimizerKind::kSgd;
  bool gradient_as_bucket_view = false;  ///< DDP: gradients are views into the buckets
};

/// Where the peak falls: "forward", "backward" or "optimizer", and the
/// FSDP unit computing then ("" for DDP, or the root's module path).
struct MemoryPoint {
  std::string phase;
  std::string unit;
};

/// One rank's memory in bytes. The persistent parts live the whole step;
/// `unsharded` and `activations` are what else is live at the peak.
struct MemoryEstimate {
  std::int64_t parameters = 0;        ///< DDP: every parameter; FSDP: the local shards (padded)
  std::int64_t gradients = 0;         ///< persistent gradients (DDP: full; FSDP: the sharded gradients)
  std::int64_t optimizer_states = 0;  ///< over what this rank's optimizer steps
  std::int64_t buckets = 0;           ///< DDP's bucket buffers; 0 with gradient_as_bucket_view
  std::int64_t comm_hook = 0;         ///< DDP's comm hook state: PowerSGD's error feedback, warm-started P and Q
  std::int64_t unsharded = 0;         ///< at the peak: FSDP's gathered parameters and unsharded gradients
  std::int64_t activations = 0;       ///< at the peak
  MemoryPoint peak_at;
  std::int64_t model_states() const { return parameters + gradients + optimizer_states + buckets + comm_hook; }
  std::int64_t peak() const { return model_states() + unsharded + activations; }
};

/// DDP on any world size: full model states on every rank; the peak is at
/// the start of backward, every activation still live.
MemoryEstimate ddp_memory(const ModelSpec& model, const MemoryInputs& in);

/// FSDP with `units` (build_units) on `world_size` ranks of `gpus_per_node`
/// a node. NO_SHARD on one rank, as PyTorch switches a world of one to it.
MemoryEstimate fsdp_memory(const ModelSpec& model, const std::vector<FsdpUnit>& units, const FsdpConfig& cfg,
                           int world_size, int gpus_per_node, const MemoryInputs& in);

/// One rank's memory, all of it, while each unit computes (by unit index):
/// what fsdp_memory's timeline walks, for a trace's memory counter.
struct UnitMemory {
  std::int64_t states = 0;             ///< model states: before forward, after the optimizer
  std::vector<std::int64_t> forward;   ///< during unit u's forward
  std::vector<std::int64_t> backward;  ///< during unit u's backward
};
UnitMemory fsdp_unit_memory(const ModelSpec& model, const std::vector<FsdpUnit>& units, const FsdpConfig& cfg,
                            int world_size, int gpus_per_node, const MemoryInputs& in);

/// PyTorch's out-of-memory message for `rank` wanting `peak` of `capacity` bytes at `at`.
std::string out_of_memory_message(int rank, std::int64_t peak, std::int64_t capacity, const MemoryPoint& at);

}  // namespace ddpsim::models
