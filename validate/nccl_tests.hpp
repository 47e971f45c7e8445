#pragma once
// nccl-tests output (all_reduce_perf and its siblings) as ddpsim reads it,
// the table a scenario predicts in the same columns (`ddpsim collectives`),
// and the fit of NCCL's model to measured tables (`ddpsim calibrate
// --nccl-tests`). Column definitions: nccl-tests doc/PERFORMANCE.md
// (../shared/reference/nccl_model.md section 2).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loader/scenario.hpp"
#include "sim/op_sink.hpp"

namespace ddpsim::validate {

/// One row: the size (nccl-tests' bytes: the total for all_gather and
/// reduce_scatter) and the out-of-place time.
struct NcclTestsRow {
  std::int64_t bytes = 0;
  double time_us = 0;
};

struct NcclTestsTable {
  std::string file;
  int ranks = 0;  ///< "#  Rank ..." lines (one per GPU)
  std::vector<NcclTestsRow> rows;
};

/// Reads nccl-tests' text output. Throws scenarios::InputError at the
/// offending line (file:line:column) for anything else.
NcclTestsTable read_nccl_tests(const std::string& path);
NcclTestsTable parse_nccl_tests(const std::string& text, const std::string& file);

/// nccl-tests' bandwidths of a collective of `bytes` in `time_us` over `ranks`.
double algbw_GBps(std::int64_t bytes, double time_us);
double busbw_GBps(sim::CollectiveKind kind, std::int64_t bytes, double time_us, int ranks);
/// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all" (nccl-tests' kinds).
std::optional<sim::CollectiveKind> parse_collective_kind(const std::string& name);

/// One row of a predicted table: the time, and NCCL's choice (collective.model
/// nccl) or "ring" and "-" (the alpha-beta model).
struct PredictedRow {
  std::int64_t bytes = 0;
  double time_us = 0;
  std::string algorithm, protocol;
};
/// What the scenario's collective model predicts for `kind` at each size over
/// `ranks` ranks of its cluster (or its one switch).
std::vector<PredictedRow> predict_collectives(const scenarios::Scenario& scenario, sim::CollectiveKind kind,
                                              const std::vector<std::int64_t>& sizes, int ranks);
/// "8:16G" (nccl-tests' -b 8 -e 16G -f 2: every power of two between),
/// with K, M, G as powers of 1,024. Throws scenarios::InputError naming `option`.
std::vector<std::int64_t> parse_size_range(const std::string& text, const std::string& option);

/// collective.launch_overhead_us (the floor) and collective.bandwidth_scale
/// fitted to measured all-reduce tables on the scenario's cluster with NCCL's
/// model: relative least squares of t = floor + latency + bytes / (scale x
/// bandwidth), NCCL's own choice of algorithm and protocol at each size.
struct NcclFit {
  double floor_us = 0;
  double bandwidth_scale = 1;
  double median_error_pct = 0;  ///< |predicted - measured| / measured, over every row
  int rows = 0;
};
NcclFit fit_nccl(const scenarios::Scenario& scenario, const std::vector<NcclTestsTable>& tables);

}  // namespace ddpsim::validate
