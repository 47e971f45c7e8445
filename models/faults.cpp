#include "models/faults.hpp"

#include <algorithm>

namespace ddpsim::models {

std::string_view to_string(FaultType type) {
  switch (type) {
    case FaultType::kSkipBackward: return "skip_backward";
    case FaultType::kSkipIteration: return "skip_iteration";
    case FaultType::kUnevenBatches: return "uneven_batches";
    case FaultType::kExtraCollective: return "extra_collective";
    case FaultType::kUnusedParameters: return "unused_parameters";
    case FaultType::kSlowdown: return "slowdown";
    case FaultType::kSlowLink: return "slow_link";
    case FaultType::kRank0Artifact: return "rank0_artifact";
    case FaultType::kCrash: return "crash";
    case FaultType::kSkipUnit: return "skip_unit";
    case FaultType::kMicroBatches: return "micro_batches";
    case FaultType::kLinkDown: return "link_down";
  }
  return "?";
}

bool Fault::has_rank(int rank) const { return std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); }

int fewer_batches(const std::vector<Fault>& faults, int rank) {
  int fewer = 0;
  for (const Fault& f : faults) {
    const auto* uneven = f.as<fault::UnevenBatches>();
    if (uneven && f.has_rank(rank)) fewer = std::max(fewer, uneven->fewer);
  }
  return fewer;
}

}  // namespace ddpsim::models
