#pragma once
// What given ranks do differently: the faults of a scenario's `faults:` list.
// Semantics: ../shared/reference/ddp_semantics.md section 3; docs/runbook.md.

#include <optional>
#include <string_view>
#include <vector>

#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace ddpsim::models {

enum class FaultType {
  kSkipBackward,      ///< forward runs, backward does not: no hook fires
  kSkipIteration,     ///< the rank `continue`s before forward (an empty batch)
  kUnevenBatches,     ///< the rank has `fewer` batches per epoch
  kExtraCollective,   ///< the rank issues one more collective after its step (a logged metric)
  kUnusedParameters,  ///< those parameters get no gradient on the rank in that iteration
  kSlowdown,          ///< compute (or data loading) slower by `factor` over iterations
  kSlowLink,          ///< the ring link leaving `rank` has its bandwidth divided by `factor`
  kRank0Artifact,     ///< rank 0 writes logs or a checkpoint for `duration` after its step
  kCrash,             ///< the process dies at an iteration or a time
};
std::string_view to_string(FaultType type);

/// One fault of the scenario. The questions an evaluator asks of a fault
/// (applies, keeps_lockstep, keeps_program_uniform) are answered in
/// faults.cpp by switches over every FaultType, without a default: a new
/// kind that one of them forgets does not compile (-Werror=switch in every build).
struct Fault {
  FaultType type = FaultType::kCrash;
  std::vector<int> ranks;        ///< the ranks it applies to
  int iteration = -1;            ///< global iteration (epoch * iterations + i); -1: see below
  int until_iteration = -1;      ///< slowdown: last iteration, inclusive (-1: to the end)
  int every = 0;                 ///< rank0_artifact: every N iterations instead of one
  int fewer = 0;                 ///< uneven_batches
  sim::Collective collective;    ///< extra_collective
  std::vector<int> parameters;   ///< unused_parameters
  double factor = 1;             ///< slowdown, slow_link
  bool data = false;             ///< slowdown: data loading rather than compute
  sim::Time duration;            ///< rank0_artifact
  std::optional<sim::Time> at;   ///< crash: at this time instead of an iteration

  bool has_rank(int rank) const;
  /// Applies to `rank` in global iteration `g` (for the iteration-based types).
  bool applies(int rank, int g) const;
  /// Its ranks still meet the others in every collective: it only slows a
  /// rank or a link down (the engine's rank-major schedule may run it).
  bool keeps_lockstep() const;
  /// Every rank still issues the same operations: it only changes what
  /// collectives cost, which every member shares (levelized evaluation may run it).
  bool keeps_program_uniform() const;
};

}  // namespace ddpsim::models
