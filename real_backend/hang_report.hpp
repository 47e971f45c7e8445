#pragma once
// What a rank's watchdog prints when a collective makes no progress: every
// rank's answer to "where are you?", turned into who is missing from which
// collective (sequence number, bucket, iteration), where the ranks' collective
// histories first diverged, and the fix. Pure logic, so it is unit-tested
// without MPI; the MPI transport gathers the answers.

#include <string>
#include <vector>

#include "real_backend/transport.hpp"

namespace ddpsim::real {

struct RankProgress {
  enum class Phase : int { kComputing, kInCollective, kInBarrier, kNoAnswer };
  int rank = 0;
  Phase phase = Phase::kNoAnswer;
  CollectiveLabel current;               ///< in kInCollective / kInBarrier
  std::vector<CollectiveLabel> history;  ///< training collectives begun, by sequence number
};

/// Integers for the wire, and back.
std::vector<int> encode_progress(const RankProgress& p);
RankProgress decode_progress(const std::vector<int>& wire, int rank);

/// The report, as the reporting rank prints it. `progress` has one entry per rank, in rank order.
std::string hang_report(const std::vector<RankProgress>& progress, double timeout_s);

/// The rank that prints the report: the lowest one blocked in a collective or barrier.
int reporting_rank(const std::vector<RankProgress>& progress);

}  // namespace ddpsim::real
