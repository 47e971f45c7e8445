#pragma once
// What a row's training program moves and how it is laid out, computed by
// the runner for each row (SweepRow::program), so that the renderings
// (report/) read it instead of planning the program again: gradient
// communication per step (DDP's buckets or FSDP's units), DDP's comm hook
// over a step it compresses, DDP's buckets, FSDP's units.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "models/reducer.hpp"

namespace ddpsim::scenarios {

/// A DDP job's comm hook over one step it compresses (the rebuilt buckets):
/// bytes handed to it and all-reduced, its compute; and how many of the
/// measured steps it compresses (PowerSGD: from start_powerSGD_iter on).
struct HookSummary {
  std::int64_t input_bytes = 0;
  std::int64_t wire_bytes = 0;
  int collectives = 0;
  double compute_ms = 0;
  int compressed_steps = 0;
  int measured_steps = 0;
};

/// One FSDP unit at a row's world size.
struct FsdpUnitLayout {
  std::string module;  ///< "<root>" for the root unit
  std::int64_t numel = 0;
  std::int64_t padded_numel = 0;
  std::int64_t all_gather_bytes = 0;
  bool gathered_in_backward = false;
  std::int64_t reduce_bytes = 0;
};

struct ProgramSummary {
  /// Bytes one rank sends per optimizer step in the gradient and parameter
  /// collectives, as a ring sends them: an all-reduce of S bytes over W ranks
  /// 2(W-1)/W S, an all-gather or reduce-scatter (W-1)/W S. DDP: its buckets
  /// (as rebuilt; a comm hook's all-reduces in the steps it compresses);
  /// FSDP: every unit's all-gathers and reduction.
  std::int64_t sent_bytes_per_step = 0;
  int collectives_per_step = 0;
  // DDP
  std::optional<HookSummary> hook;  ///< with a comm hook other than allreduce
  std::string hook_warning;         ///< PowerSGD on gloo with more than one bucket: the race PyTorch runs into
  std::vector<models::Bucket> initial_buckets;
  std::optional<std::vector<models::Bucket>> rebuilt_buckets;
  std::optional<int> rebuild_iteration;
  // FSDP
  std::string sharding_strategy;  ///< the strategy PyTorch runs at this world size
  int shard_group = 0;
  std::vector<FsdpUnitLayout> units;
};

/// The summary of `job` (the scenario's at a row's bucket cap) on `world_size` ranks.
ProgramSummary summarize_program(const Scenario& s, const models::DdpJob& job, int world_size);

}  // namespace ddpsim::scenarios
