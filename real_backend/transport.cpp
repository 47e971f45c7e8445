#include "real_backend/transport.hpp"

#include <fmt/format.h>

#include <chrono>

namespace ddpsim::real {

std::string describe(const CollectiveLabel& l) {
  switch (l.kind) {
    case CollectiveLabel::Kind::kBucketAllReduce:
      return fmt::format("all_reduce of bucket {}, iteration {}", l.bucket, l.iteration);
    case CollectiveLabel::Kind::kSkipVote:
      return fmt::format("skip-vote all_reduce, iteration {}", l.iteration);
    case CollectiveLabel::Kind::kBroadcast:
      return l.iteration < 0 ? "broadcast" : fmt::format("broadcast, iteration {}", l.iteration);
    case CollectiveLabel::Kind::kBarrier:
      return "barrier";
    case CollectiveLabel::Kind::kSweep:
      return fmt::format("collective {} of a sweep", l.iteration);
  }
  return "collective";
}

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace ddpsim::real
