#pragma once
// One DDP training job on W virtual ranks: every rank runs the same loop
// (load data, forward, backward, all-reduce the gradients on the
// communication stream, optimizer step), and the engine times it.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/straggler.hpp"
#include "sim/engine.hpp"

namespace ddpsim::models {

/// A model as one block: whole-model times and one gradient buffer.
struct BlockModel {
  sim::Time forward;
  sim::Time backward;
  sim::Time optimizer;
  std::int64_t gradient_bytes = 0;
};

struct DdpJob {
  BlockModel model;
  sim::Time data_load;        ///< per iteration, on the host, before forward
  int iterations = 10;
  int warmup_iterations = 1;  ///< excluded from step time and per-rank means
  int local_batch_size = 32;
  NetworkParams network;
  StragglerModel straggler;
};

enum class Outcome { kCompleted, kHang, kCrash };
std::string_view to_string(Outcome outcome);

/// Per-rank means over the measured iterations, in milliseconds.
struct RankStats {
  int rank = 0;
  double data_ms = 0;         ///< data loading
  double compute_ms = 0;      ///< forward + backward + optimizer
  double collective_ms = 0;   ///< all-reduce execution, overlapped or not
  double exposed_comm_ms = 0; ///< compute stream idle while an all-reduce executed
  double wait_ms = 0;         ///< in a collective, waiting for the other ranks to arrive
};

struct RunResult {
  int world_size = 0;
  Outcome outcome = Outcome::kCompleted;
  std::optional<double> step_ms;   ///< mean iteration time after warm-up; none if none completed
  int measured_iterations = 0;     ///< iterations after warm-up that every rank completed
  std::int64_t global_batch = 0;
  int iterations = 0;
  std::vector<RankStats> ranks;
  std::vector<sim::BlockedOp> blocked;  ///< who waits where, when the run hung
  std::uint64_t events = 0;
  std::uint64_t rank_ops = 0;
  sim::Time end;
};

/// Operation tags in records and traces.
enum class DdpTag : std::uint32_t { kData, kForward, kBackward, kAllReduce, kOptimizer };
std::string_view tag_name(sim::OpLabel label);

/// Simulates `job` on `world_size` ranks. `trace`, if given, sees every op.
RunResult simulate_ddp(const DdpJob& job, int world_size, std::uint64_t seed,
                       sim::Observer* trace = nullptr);

}  // namespace ddpsim::models
