#pragma once
// Simulated runs as bytes, for the processes of a split sweep to hand
// their results to the first (sweep/partition.hpp): every field of a
// RunResult, doubles bit for bit (CBOR), so the first process reports
// what it would have simulated itself.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/run_result.hpp"
#include "netsim/simgrid_engine.hpp"

namespace ddpsim::scenarios {

/// Runs, each tagged with the index of the task that simulated it.
using TaggedRuns = std::vector<std::pair<std::size_t, models::RunResult>>;

/// What one process of a split sweep simulated, and its SimGrid statistics.
struct ProcessShare {
  TaggedRuns runs;
  std::vector<std::pair<std::size_t, std::vector<std::pair<std::string, std::string>>>> recorded;  ///< by row: RecordFailed's files
  std::optional<netsim::SimgridStats> simgrid;
  std::string error;  ///< why its simulations failed ("" when they did not)
};

std::string encode_share(const ProcessShare& share);
/// Throws std::runtime_error on bytes encode_share did not write.
ProcessShare decode_share(const std::string& bytes);

}  // namespace ddpsim::scenarios
