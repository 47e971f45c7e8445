#pragma once
// ddpsim explain: the hang report from flight-recorder dumps, whoever wrote
// them (a real PyTorch 2.5+ job, ddpsim-real, ddpsim run --flight-recorder):
// the collective that did not complete, who waits in it, who is missing,
// the first place the ranks disagree, the culprit and the fix
// (docs/flight-recorder.md).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "formats/flight_recorder.hpp"

namespace ddpsim::validate {

/// One rank's side of a collective: what it recorded there.
struct Side {
  int rank = 0;
  std::string profiling_name;
  std::vector<std::vector<std::int64_t>> input_sizes;
  std::string state;
};

struct Explanation {
  bool stuck = false;               ///< some collective did not complete on every member
  std::string pg_id, pg_desc;       ///< the process group it belongs to
  std::int64_t collective_seq_id = 0;  ///< the first that did not complete everywhere
  std::vector<Side> sides;          ///< the members that recorded it
  std::vector<int> waiting;         ///< issued the most common op there, not completed: they wait in it
  std::vector<int> missing;         ///< dumped, but never issued it (or issued another op there)
  std::vector<int> no_dump;         ///< members that left no dump (their process died?)
  std::optional<std::int64_t> mismatch_seq;  ///< the first collective where members recorded different ops or sizes
  std::vector<Side> mismatch;       ///< its two disagreeing sides
  /// Before the mismatch, the first collective where the members ran the same
  /// op and size but their recorded stacks differ (ddpsim's dumps name the
  /// op's iteration there): a silent misalignment, with its two sides' frames.
  std::optional<std::int64_t> silent_seq;
  std::vector<std::pair<int, std::string>> silent;
  /// Without such stacks: the stretch before the mismatch where every member
  /// ran the same op and size, where a shift cannot be placed from the dumps.
  std::optional<std::pair<std::int64_t, std::int64_t>> shift_range;
  std::vector<int> stateless;       ///< ranks whose recorder keeps no state (gloo): their last entry taken as where they stopped
  int culprit = -1;
  std::string reason;
  std::string fix;
};

/// Reads the dumps' collectives group by group (the default group first)
/// and explains the first one that did not complete on every member.
Explanation explain(const std::vector<formats::FlightRecord>& dumps);

/// The report, in the words of ddpsim run's hang report.
void write_explanation(std::ostream& out, const Explanation& e);

}  // namespace ddpsim::validate
