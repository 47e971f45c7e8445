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
  }
  return "?";
}

bool Fault::has_rank(int rank) const { return std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); }

bool Fault::applies(int rank, int g) const {
  if (!has_rank(rank)) return false;
  switch (type) {
    case FaultType::kSlowdown: return g >= std::max(iteration, 0) && (until_iteration < 0 || g <= until_iteration);
    case FaultType::kRank0Artifact: return every > 0 ? (g + 1) % every == 0 : g == iteration;
    case FaultType::kUnevenBatches:
    case FaultType::kSlowLink: return true;
    case FaultType::kSkipBackward:
    case FaultType::kSkipIteration:
    case FaultType::kExtraCollective:
    case FaultType::kUnusedParameters:
    case FaultType::kCrash: return g == iteration;
  }
  return false;
}

bool Fault::keeps_lockstep() const {
  switch (type) {
    case FaultType::kSlowdown:
    case FaultType::kSlowLink:
    case FaultType::kRank0Artifact: return true;
    case FaultType::kSkipBackward:
    case FaultType::kSkipIteration:
    case FaultType::kUnevenBatches:
    case FaultType::kExtraCollective:
    case FaultType::kUnusedParameters:
    case FaultType::kCrash: return false;
  }
  return false;
}

bool Fault::keeps_program_uniform() const {
  switch (type) {
    case FaultType::kSlowLink: return true;
    case FaultType::kSlowdown:       // changes one rank's durations
    case FaultType::kRank0Artifact:  // adds one rank's op
    case FaultType::kSkipBackward:
    case FaultType::kSkipIteration:
    case FaultType::kUnevenBatches:
    case FaultType::kExtraCollective:
    case FaultType::kUnusedParameters:
    case FaultType::kCrash: return false;
  }
  return false;
}

}  // namespace ddpsim::models
