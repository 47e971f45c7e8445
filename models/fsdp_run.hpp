#pragma once
// Internal to models/: the FSDP program's evaluation state. Where each rank
// is (Progress) and op records turned into per-rank means (Accounting).

#include <cstdint>
#include <vector>

#include "models/failure.hpp"
#include "models/fsdp_program.hpp"
#include "models/run_result.hpp"
#include "sim/engine.hpp"
#include "sim/small_list.hpp"

namespace ddpsim::models::fsdp {

// Where each rank is; filled by the processes, read by the accounting.
struct Progress {
  struct Tally {
    std::vector<sim::Time> iteration_end;  // max over the ranks one engine thread ran
    std::vector<int> finished_ranks;
  };
  std::vector<RankStatus> ranks;
  std::vector<Tally> by_worker;
  Tally all;

  Progress(int ranks_simulated, int iterations, int workers);
  void tally(int worker, int iteration, sim::Time at);
  void gather();
};

/// FSDP's operation names with the unit's module: "all_gather unit 7 (transformer.h.7)".
OpNamer fsdp_namer(const FsdpPlan& plan);

// Per-rank sums over the measured iterations.
class Accounting final : public sim::Observer {
 public:
  /// `name_of` names operations in failure reports (fsdp_namer).
  Accounting(int ranks, int warmup, int accumulation, OpNamer name_of)
      : warmup_(warmup), accumulation_(accumulation), ranks_(static_cast<std::size_t>(ranks)), name_of_(std::move(name_of)) {}
  void on_op(const sim::OpRecord& r) override;
  RunResult result(const DdpJob& job, Progress& progress, const sim::RunSummary& summary, int simulated,
                   int world_size) const;

 private:
  struct Span {
    sim::Time arrival, start, end;
  };
  struct Rank {
    sim::Time data, compute, collective, exposed, wait;
    sim::Time forward_start, backward_start, backward_end, forward_compute, backward_compute;
    std::vector<Span> collectives;  // this iteration's, in the order they ended
    bool in_backward = false;
    bool forward_pending = false;  // the micro-step's first forward segment is still to come
  };
  int warmup_;
  int accumulation_;
  std::vector<Rank> ranks_;
  OpNamer name_of_;
};

}  // namespace ddpsim::models::fsdp
