#include "sim/engine.hpp"

#include <cmath>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#define DDPSIM_SIM_ENGINE_CPP  // the internal headers below are for this file alone
#include "sim/rank_major.hpp"
#include "sim/time_order.hpp"

namespace ddpsim::sim {

std::string_view to_string(StreamKind kind) {
  switch (kind) {
    case StreamKind::kHost: return "host";
    case StreamKind::kCompute: return "compute";
    case StreamKind::kComm: return "comm";
  }
  return "?";
}


std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kBarrier: return "barrier";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kReduce: return "reduce";
    case CollectiveKind::kAllToAll: return "all_to_all";
  }
  return "?";
}

Engine::Engine(int world_size, CollectiveCostFn cost, EngineOptions options) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  if (!cost) throw std::invalid_argument("a collective cost model is required");
  if (options.watchdog_timeout < Time::zero()) throw std::invalid_argument("watchdog timeout is negative");
  if (options.threads < 1) throw std::invalid_argument("the engine needs at least one thread");
  if (!(options.compute_slowdown >= 0) || !std::isfinite(options.compute_slowdown)) {
    throw std::invalid_argument("compute slowdown must be a finite number >= 0");
  }
  if (!(options.comm_slowdown >= 0) || !std::isfinite(options.comm_slowdown)) {
    throw std::invalid_argument("communication slowdown must be a finite number >= 0");
  }
  if (options.schedule == Schedule::kRankMajor) {
    impl_ = std::make_unique<RankMajor>(world_size, std::move(cost), options);
  } else {
    impl_ = std::make_unique<TimeOrder>(world_size, std::move(cost), options);
  }
}

Engine::~Engine() = default;

int Engine::world_size() const { return impl_->world_size; }
Time Engine::now() const { return impl_->here().now; }
int Engine::worker() const {
  const Impl& m = *impl_;
  return static_cast<int>(&m.here() - m.workers.data());
}
int Engine::workers() const { return static_cast<int>(impl_->workers.size()); }
void Engine::add_observer(Observer& observer) { impl_->observers.push_back(&observer); }

OpRef Engine::enqueue(int rank, StreamKind kind, Time duration, OpLabel label,
                      std::optional<OpRef> after) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  if (duration < Time::zero()) throw std::invalid_argument("operation duration is negative");
  return impl_->enqueue_op(rank, kind, duration, label, after);
}

OpRef Engine::enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label,
                                 std::optional<OpRef> after) {
  if (group >= impl_->groups.size()) throw std::out_of_range("unknown process group");
  const Group& g = impl_->groups[group];
  if (rank < 0 || rank >= impl_->world_size || g.position_of_rank[static_cast<std::size_t>(rank)] < 0) {
    throw std::out_of_range("rank is not a member of the process group");
  }
  if (collective.bytes < 0) throw std::invalid_argument("collective size is negative");
  return impl_->enqueue_collective_op(rank, group, collective, label, after);
}

void Engine::wake_when_done(OpRef op, Process& process, std::uint64_t token) {
  impl_->wake_when_done(op, process, token);
}

void Engine::crash(int rank, std::string message) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  impl_->crash_now(rank, std::move(message));
}

void Engine::schedule_crash(int rank, Time at, std::string message) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  if (at < impl_->here().now) throw std::invalid_argument("crash scheduled in the past");
  impl_->crash_at(rank, at, std::move(message));
}

void Engine::schedule_link_down(int rank, Time at) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  if (at < impl_->here().now) throw std::invalid_argument("link failure scheduled in the past");
  impl_->link_down_at(rank, at);
}

void Engine::schedule_price_change(Time at, std::function<void()> change) {
  if (!change) throw std::invalid_argument("a price change without a change");
  if (at < impl_->here().now) throw std::invalid_argument("price change scheduled in the past");
  impl_->price_change_at(at, std::move(change));
}

GroupId Engine::add_group(const std::vector<int>& ranks) { return add_group(ranks, StreamKind::kComm, {}); }

GroupId Engine::add_group(const std::vector<int>& ranks, StreamKind stream, CollectiveCostFn cost) {
  if (ranks.empty()) throw std::invalid_argument("a process group needs at least one rank");
  Group g;
  g.position_of_rank.assign(static_cast<std::size_t>(impl_->world_size), -1);
  for (int r : ranks) {
    if (r < 0 || r >= impl_->world_size) throw std::out_of_range("process group rank out of range");
    int& pos = g.position_of_rank[static_cast<std::size_t>(r)];
    if (pos >= 0) throw std::invalid_argument("a rank appears twice in a process group");
    pos = static_cast<int>(g.members.size());
    g.members.push_back(r);
    if (impl_->dead[static_cast<std::size_t>(r)]) ++g.dead_members;
  }
  g.issued.assign(ranks.size(), 0);
  g.stream = stream;
  g.cost = std::move(cost);
  impl_->on_add_group(g);
  impl_->groups.push_back(std::move(g));
  return static_cast<GroupId>(impl_->groups.size() - 1);
}

std::vector<GroupId> Engine::add_sharing_groups(const std::vector<std::vector<int>>& groups, StreamKind stream,
                                                SharedCostFn cost) {
  return add_sharing_groups(groups, std::vector<StreamKind>(groups.size(), stream), std::move(cost));
}

std::vector<GroupId> Engine::add_sharing_groups(const std::vector<std::vector<int>>& groups,
                                                const std::vector<StreamKind>& streams, SharedCostFn cost) {
  if (groups.empty()) throw std::invalid_argument("link-sharing process groups: none given");
  if (streams.size() != groups.size()) throw std::invalid_argument("link-sharing process groups: a stream for each");
  if (!cost) throw std::invalid_argument("link-sharing process groups need a cost model");
  for (const std::vector<int>& ranks : groups) {
    for (int r : ranks) {
      if (r < 0 || r >= impl_->world_size) throw std::out_of_range("process group rank out of range");
    }
  }
  const int sharing = static_cast<int>(impl_->sharings.size());
  impl_->sharings.push_back(std::move(cost));
  impl_->on_add_sharing();
  std::vector<GroupId> ids;
  for (const std::vector<int>& ranks : groups) {
    const GroupId id = add_group(ranks, streams[ids.size()], {});
    impl_->groups[id].sharing = sharing;
    impl_->groups[id].sharing_index = static_cast<int>(ids.size());
    ids.push_back(id);
  }
  return ids;
}

bool Engine::crashed(int rank) const { return impl_->dead.at(static_cast<std::size_t>(rank)) != 0; }

RunSummary Engine::run() { return impl_->run(*this); }

}  // namespace ddpsim::sim
