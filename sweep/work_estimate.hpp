#pragma once
// What a run of a scenario will cost, estimated before it starts: the
// operations ranks complete (ranks simulated x iterations x operations per
// iteration, over every row of the sweep), the memory it holds, and the
// size of a trace. `ddpsim check` prints it; `ddpsim run` refuses a
// scenario past its budget (exit 2), naming the option that raises it.

#include <cstdint>
#include <string>

#include "loader/scenario.hpp"

namespace ddpsim::scenarios {

struct WorkEstimate {
  double rank_ops = 0;      ///< operations completed on simulated ranks, every row together
  double memory_bytes = 0;  ///< the largest row's state (per-rank records, per-iteration records)
  double trace_bytes = 0;   ///< the trace's size, when traced
  double json_bytes = 0;    ///< the JSON's size, when written (a record per rank of every row)
  int rows = 0;             ///< simulations in the sweep
};

/// The budget a run may take without an option raising it.
struct WorkBudget {
  double max_rank_ops = 2e11;  ///< --max-rank-ops: about 30 minutes at the engine's slower rates
  double max_memory_gb = 8;    ///< --max-memory-gb: estimated state plus trace
};

/// `traced_ranks`: ranks of each run in the trace (0: no trace); `json`: the
/// JSON (or the HTML page, built from it) is written, a record per rank.
WorkEstimate estimate_work(const Scenario& scenario, int traced_ranks = 0, bool json = false);

/// "2.1e+09 rank-operations (5 rows), about 12 MB of state": the estimate in one line.
std::string describe(const WorkEstimate& estimate);

/// Throws InputError on the scenario's file when `estimate` exceeds `budget`,
/// with the estimate and the option that raises the budget.
void check_budget(const Scenario& scenario, const WorkEstimate& estimate, const WorkBudget& budget);

}  // namespace ddpsim::scenarios
