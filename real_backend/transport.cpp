#include "real_backend/transport.hpp"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

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
    case CollectiveLabel::Kind::kAllGather:
      return fmt::format("all_gather of unit {}, iteration {}", l.bucket, l.iteration);
    case CollectiveLabel::Kind::kReduceScatter:
      return fmt::format("reduce_scatter of unit {}, iteration {}", l.bucket, l.iteration);
    case CollectiveLabel::Kind::kReplicaAllReduce:
      return fmt::format("all_reduce of unit {}'s shard across replicas, iteration {}", l.bucket, l.iteration);
  }
  return "collective";
}

bool Transport::is_done(std::uint64_t) {
  throw std::logic_error(fmt::format("the {} transport cannot poll a collective (ddpsim-real overlap: --device cpu)", name()));
}

std::uint64_t Transport::all_reduce_half_async(_Float16*, std::size_t, CollectiveLabel) {
  throw std::logic_error(fmt::format("the {} transport has no half-precision all_reduce (--comm-hook fp16_compress)", name()));
}

std::uint64_t Transport::all_gather_async(float*, std::size_t, CollectiveLabel) {
  throw std::logic_error(fmt::format("the {} transport has no all_gather for FSDP", name()));
}

std::uint64_t Transport::reduce_scatter_async(const float*, std::size_t, float*, CollectiveLabel) {
  throw std::logic_error(fmt::format("the {} transport has no reduce_scatter for FSDP", name()));
}

void broadcast_bytes(Transport& t, std::string& bytes) {
  std::uint64_t size = bytes.size();
  t.broadcast(&size, sizeof size, 0);
  bytes.resize(size);
  if (size > 0) t.broadcast(bytes.data(), size, 0);
}

double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace ddpsim::real
