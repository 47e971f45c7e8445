#pragma once
// What evaluating a training program gives, whichever evaluator ran it
// (exec/evaluate.hpp): the step time, per-rank means, and for a run that
// did not complete, who waits where and why.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/failure.hpp"
#include "models/link_load.hpp"
#include "sim/engine.hpp"

namespace ddpsim::models {

enum class Outcome { kCompleted, kHang, kCrash };
std::string_view to_string(Outcome outcome);

/// Per-rank means over the measured iterations, in milliseconds.
struct RankStats {
  int rank = 0;
  double data_ms = 0;          ///< data loading
  double compute_ms = 0;       ///< forward + backward + optimizer (+ graph traversal)
  double collective_ms = 0;    ///< collective execution, overlapped or not
  double exposed_comm_ms = 0;  ///< compute stream idle while a collective executed
  double wait_ms = 0;          ///< compute stream idle while a collective waited for other ranks
  // DDP's own timing fields (_get_ddp_logging_data), for the syncing micro-step:
  double forward_compute_ms = 0;       ///< forward start -> backward start
  double backward_compute_ms = 0;      ///< backward start -> end of backward compute
  double backward_comm_ms = 0;         ///< first bucket launched -> all buckets done
  double backward_overlap_ms = 0;      ///< first bucket launched -> backward compute end
};

/// A process that stopped with an error, as PyTorch would raise it.
struct RankError {
  int rank = 0;
  double at_ms = 0;
  std::string message;
};

/// What PyTorch would print on a rank and carry on from (warnings.warn).
struct RankWarning {
  int rank = 0;
  int iteration = 0;
  std::string message;
};

struct RunResult {
  int world_size = 0;
  Outcome outcome = Outcome::kCompleted;
  std::optional<double> step_ms;  ///< mean iteration time after warm-up; none if none completed
  int measured_iterations = 0;    ///< iterations after warm-up that every rank completed
  std::int64_t global_batch = 0;  ///< local batch x W x gradient accumulation
  int iterations = 0;
  std::vector<RankStats> ranks;
  std::vector<sim::BlockedOp> blocked;  ///< who waits where, when the run hung
  std::vector<RankError> errors;        ///< why ranks stopped, when the run crashed
  std::optional<FailureReport> failure; ///< the earliest collective that did not complete, and why
  std::vector<MisalignedPair> misalignments;  ///< silently mismatched pairs
  std::vector<RankWarning> warnings;          ///< the first warning of each rank that had one, by rank
  std::vector<int> iterations_run;      ///< per rank: loop iterations started
  std::vector<int> shadow_collectives;  ///< per rank: collectives Join issued for it after it ran out of data
  std::uint64_t events = 0;     ///< events the engine processed
  std::uint64_t rank_ops = 0;   ///< operations completed, summed over the W ranks
  bool fast_path = false;       ///< one rank was simulated for all (symmetric)
  bool levelized = false;       ///< evaluated op by op across ranks (every rank issues the same ops)
  sim::Time end;
  /// Each link's load over the run, by name (the SimGrid engine's; empty on the analytic ones).
  std::vector<LinkLoad> links;
};

/// Sets out.measured_iterations and out.step_ms: iterations every one of
/// `ranks` finished (with a synchronous loop a prefix), less `warmup`, and
/// their mean time (iteration g ended at iteration_end[g]).
inline void measure_steps(RunResult& out, const std::vector<sim::Time>& iteration_end, const std::vector<int>& finished,
                          int ranks, int warmup) {
  const int iterations = static_cast<int>(finished.size());
  int complete = 0;
  while (complete < iterations && finished[static_cast<std::size_t>(complete)] == ranks) ++complete;
  out.measured_iterations = complete > warmup ? complete - warmup : 0;
  if (out.measured_iterations == 0) return;
  const sim::Time from = warmup == 0 ? sim::Time::zero() : iteration_end[static_cast<std::size_t>(warmup - 1)];
  out.step_ms = (iteration_end[static_cast<std::size_t>(complete - 1)] - from).ms() / out.measured_iterations;
}

/// One rank's sums over the measured iterations (any accounting's, with
/// these members) as means over `n` iterations.
template <class Sums>
RankStats mean_stats(const Sums& a, int rank, double n) {
  RankStats s;
  s.rank = rank;
  s.data_ms = a.data.ms() / n;
  s.compute_ms = a.compute.ms() / n;
  s.collective_ms = a.collective.ms() / n;
  s.exposed_comm_ms = a.exposed.ms() / n;
  s.wait_ms = a.wait.ms() / n;
  s.forward_compute_ms = a.forward_compute.ms() / n;
  s.backward_compute_ms = a.backward_compute.ms() / n;
  return s;
}

}  // namespace ddpsim::models
