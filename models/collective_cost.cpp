#include "models/collective_cost.hpp"

#include "models/collective_library.hpp"

#include <cmath>
#include <stdexcept>

namespace ddpsim::models {
namespace {

// Transfer time of `bytes * num / den` at the link bandwidth, rounded to the
// nearest nanosecond. IEEE division and multiplication are exactly rounded,
// so this is the same on every machine.
sim::Time transfer(const NetworkParams& net, std::int64_t bytes, double num, double den) {
  const double ns = static_cast<double>(bytes) * num / (den * net.bandwidth_GBps);
  return sim::Time::from_ns(ns, "a collective's transfer time (collective.bandwidth_GBps against the bytes it moves)");
}

constexpr const char* kLatencyTerm =
    "a collective's latency term (collective.latency_us x its steps: 2(world_size - 1) for a ring all-reduce)";

void check(const NetworkParams& net, std::int64_t bytes, int world_size) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  if (bytes < 0) throw std::invalid_argument("collective size is negative");
  if (!(net.bandwidth_GBps > 0) || !std::isfinite(net.bandwidth_GBps)) {
    throw std::invalid_argument("bandwidth must be positive and finite");
  }
}

}  // namespace

sim::Time ring_all_reduce_time(const NetworkParams& net, std::int64_t bytes, int world_size) {
  check(net, bytes, world_size);
  const std::int64_t steps = 2 * static_cast<std::int64_t>(world_size - 1);
  return net.launch_overhead + net.latency.times(steps, kLatencyTerm) +
         transfer(net, bytes, static_cast<double>(steps), static_cast<double>(world_size));
}

sim::Time ring_broadcast_time(const NetworkParams& net, std::int64_t bytes, int world_size) {
  check(net, bytes, world_size);
  if (world_size == 1) return net.launch_overhead;
  const std::int64_t steps = world_size - 1;
  return net.launch_overhead + net.latency.times(steps, kLatencyTerm) + transfer(net, bytes, 1, 1);
}

sim::Time ring_all_gather_time(const NetworkParams& net, std::int64_t bytes, int world_size) {
  check(net, bytes, world_size);
  const std::int64_t steps = world_size - 1;
  return net.launch_overhead + net.latency.times(steps, kLatencyTerm) +
         transfer(net, bytes, static_cast<double>(steps), static_cast<double>(world_size));
}

sim::Time ring_reduce_scatter_time(const NetworkParams& net, std::int64_t bytes, int world_size) {
  return ring_all_gather_time(net, bytes, world_size);
}

sim::Time ring_reduce_time(const NetworkParams& net, std::int64_t bytes, int world_size) {
  return ring_broadcast_time(net, bytes, world_size);
}

sim::Time all_to_all_time(const NetworkParams& net, std::int64_t bytes, int world_size) {
  return ring_all_gather_time(net, bytes, world_size);
}

sim::Time collective_time(const NetworkParams& net, const sim::Collective& c, int world_size) {
  switch (c.kind) {
    case sim::CollectiveKind::kAllReduce: return ring_all_reduce_time(net, c.bytes, world_size);
    case sim::CollectiveKind::kBroadcast: return ring_broadcast_time(net, c.bytes, world_size);
    case sim::CollectiveKind::kBarrier: return collective_time(net, priced_as(c), world_size);
    case sim::CollectiveKind::kAllGather: return ring_all_gather_time(net, c.bytes, world_size);
    case sim::CollectiveKind::kReduceScatter: return ring_reduce_scatter_time(net, c.bytes, world_size);
    case sim::CollectiveKind::kReduce: return ring_reduce_time(net, c.bytes, world_size);
    case sim::CollectiveKind::kAllToAll: return all_to_all_time(net, c.bytes, world_size);
  }
  throw std::logic_error("unknown collective kind");
}

}  // namespace ddpsim::models
