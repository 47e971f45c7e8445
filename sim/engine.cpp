#include "sim/engine.hpp"

#include <cmath>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#define DDPSIM_SIM_ENGINE_CPP  // the internal headers below are for this file alone
#include "sim/engine_impl.hpp"

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
  }
  return "?";
}

Engine::Engine(int world_size, CollectiveCostFn cost, EngineOptions options) : impl_(std::make_unique<Impl>()) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  if (!cost) throw std::invalid_argument("a collective cost model is required");
  if (options.watchdog_timeout < Time::zero()) throw std::invalid_argument("watchdog timeout is negative");
  if (options.threads < 1) throw std::invalid_argument("the engine needs at least one thread");
  if (!(options.compute_slowdown >= 0) || !std::isfinite(options.compute_slowdown)) {
    throw std::invalid_argument("compute slowdown must be a finite number >= 0");
  }
  impl_->world_size = world_size;
  impl_->cost = std::move(cost);
  impl_->options = options;
  impl_->library = options.library != nullptr ? options.library : &plain_library();
  impl_->dead.assign(static_cast<std::size_t>(world_size), 0);
  impl_->streams.resize(static_cast<std::size_t>(world_size) * kStreamsPerRank);
  const bool major = options.schedule == Schedule::kRankMajor;
  impl_->workers.resize(major ? static_cast<std::size_t>(std::min(options.threads, world_size)) : 1);
  for (Worker& w : impl_->workers) w.owner = impl_.get();
  if (options.compute_slowdown > 0) {
    impl_->contended.resize(static_cast<std::size_t>(world_size));
    // A compute op's end depends on when other ranks' arrivals start collectives.
    if (major) impl_->needs_time_order = "compute slowed by communication couples a rank's streams to every collective's start";
  }
  if (major) {
    impl_->rank_events.resize(static_cast<std::size_t>(world_size));
    impl_->waiting.assign(static_cast<std::size_t>(world_size), nullptr);
  }
  Group world;
  for (int r = 0; r < world_size; ++r) {
    world.members.push_back(r);
    world.position_of_rank.push_back(r);
  }
  world.issued.assign(static_cast<std::size_t>(world_size), 0);
  impl_->groups.push_back(std::move(world));
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
  Worker& w = impl_->here();
  impl_->check_enqueued(after);
  impl_->check_local(w, rank, after);
  const std::uint32_t s = stream_id(rank, kind);
  Stream& st = impl_->streams[s];
  if (impl_->dead[static_cast<std::size_t>(rank)]) return OpRef{s, st.enqueued++};  // a dead process issues nothing
  if (st.pending.empty() && !st.active) st.head_since = w.now;
  Op::plain(st.pending.push_back(), duration, label, after);
  const OpRef ref{s, st.enqueued++};
  impl_->try_start(w, s);
  return ref;
}

OpRef Engine::enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label,
                                 std::optional<OpRef> after) {
  if (group >= impl_->groups.size()) throw std::out_of_range("unknown process group");
  Group& g = impl_->groups[group];
  if (rank < 0 || rank >= impl_->world_size || g.position_of_rank[static_cast<std::size_t>(rank)] < 0) {
    throw std::out_of_range("rank is not a member of the process group");
  }
  if (collective.bytes < 0) throw std::invalid_argument("collective size is negative");
  Worker& w = impl_->here();
  impl_->check_enqueued(after);
  impl_->check_local(w, rank, after);
  const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(rank)]);
  const std::uint32_t s = stream_id(rank, StreamKind::kComm);
  Stream& st = impl_->streams[s];
  if (impl_->dead[static_cast<std::size_t>(rank)]) return OpRef{s, st.enqueued++};
  if (st.pending.empty() && !st.active) st.head_since = w.now;
  Op::collective_op(st.pending.push_back(), collective, group, g.issued[pos]++, label, after);
  const OpRef ref{s, st.enqueued++};
  impl_->try_start(w, s);
  return ref;
}

void Engine::wake_when_done(OpRef op, Process& process, std::uint64_t token) {
  const Worker& w = impl_->here();
  impl_->check_enqueued(op);
  impl_->check_local(w, static_cast<int>(op.stream / kStreamsPerRank), std::nullopt);
  if (impl_->is_done(op)) {
    impl_->push(w.now, EventKind::kWake, op.stream, token, &process);
  } else {
    Stream& st = impl_->streams[op.stream];
    st.wakes.push_back(Wake{op.index, &process, token});
    st.has_listeners = true;
  }
}

void Engine::crash(int rank, std::string message) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  if (impl_->rank_major() && !impl_->running) {
    if (!impl_->needs_time_order) impl_->needs_time_order = fmt::format("rank {} crashed: {}", rank, message);
    return;
  }
  impl_->crash(rank, message);
}

void Engine::schedule_crash(int rank, Time at, std::string message) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  if (at < impl_->here().now) throw std::invalid_argument("crash scheduled in the past");
  if (impl_->rank_major()) {
    if (impl_->running) throw NeedsTimeOrder(fmt::format("rank {} is to crash", rank));
    if (!impl_->needs_time_order) impl_->needs_time_order = fmt::format("rank {} is to crash", rank);
    return;
  }
  impl_->crash_messages.push_back(std::move(message));
  impl_->push(at, EventKind::kCrash, static_cast<std::uint32_t>(rank), impl_->crash_messages.size() - 1);
}

GroupId Engine::add_group(const std::vector<int>& ranks) {
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
  impl_->groups.push_back(std::move(g));
  return static_cast<GroupId>(impl_->groups.size() - 1);
}

bool Engine::crashed(int rank) const { return impl_->dead.at(static_cast<std::size_t>(rank)) != 0; }

namespace {

// Time order: every event in (time, insertion) order until none is left or
// the watchdog fires first (it ends the job at its deadline).
void run_time_order(Engine& engine, Engine::Impl& m) {
  Worker& first = m.workers.front();
  // Only a live rank waiting in the collective can time out.
  const auto someone_waits = [&](GroupId group, std::uint64_t seq) {
    const Group& g = m.groups[group];
    const auto it = g.open.find(seq);
    if (it == g.open.end()) return false;
    for (std::size_t p = 0; p < g.members.size(); ++p) {
      if (it->second.arrived[p] && !m.dead[static_cast<std::size_t>(g.members[p])]) return true;
    }
    return false;
  };
  const auto watchdog_fires_before = [&](std::optional<Time> next) {
    while (!m.deadlines.empty() && !someone_waits(std::get<1>(*m.deadlines.begin()), std::get<2>(*m.deadlines.begin()))) {
      m.deadlines.erase(m.deadlines.begin());
    }
    if (m.deadlines.empty()) return false;
    const auto [at, group, seq] = *m.deadlines.begin();
    if (next && !(at < *next)) return false;
    first.now = at;
    m.watchdog_at = at;
    m.watchdog_collective = std::make_pair(group, seq);
    m.events.clear();
    return true;
  };
  while (!m.events.empty()) {
    if (watchdog_fires_before(m.events.earliest())) break;
    m.events.run_earliest([&](Time at, const Event& ev) {
      first.now = at;
      m.dispatch(engine, first, ev);
    });
  }
  if (!m.watchdog_at) watchdog_fires_before(std::nullopt);
}

// Rank-major; what only time order simulates stops it and is noted in
// m.needs_time_order (as it may have been before the run).
void run_rank_major(Engine& engine, Engine::Impl& m) {
  if (m.needs_time_order) return;
  m.running = true;
  try {
    m.run_rank_major(engine);
    // A collective still open: the watchdog ends the job, at a time only the global order gives.
    if (m.options.watchdog_timeout > Time::zero()) {
      for (const Group& g : m.groups) {
        if (!g.open.empty()) throw NeedsTimeOrder("a collective never completes and the watchdog is on");
      }
    }
  } catch (const NeedsTimeOrder& e) {
    m.needs_time_order = e.what();
  }
  m.running = false;
}

// What a finished run leaves: its end, its counts, what still waits.
RunSummary summarise(Engine::Impl& m) {
  Worker& first = m.workers.front();
  RunSummary summary;
  summary.end = first.now;
  for (Worker& w : m.workers) {
    if (m.rank_major()) summary.end = max(summary.end, w.latest);
    summary.events += w.events_run;
    summary.rank_ops += w.rank_ops;
  }
  if (m.rank_major()) first.now = summary.end;
  for (std::uint32_t s = 0; s < m.streams.size(); ++s) {
    if (!m.streams[s].pending.empty()) summary.blocked.push_back(m.describe_blocked(s));
  }
  for (GroupId gid = 0; gid < m.groups.size(); ++gid) {
    const Group& g = m.groups[gid];
    for (const auto& [seq, rz] : g.open) {
      OpenCollective oc{gid, seq, rz.stalled, {}};
      for (std::size_t p = 0; p < g.members.size(); ++p) {
        oc.members.push_back(MemberState{g.members[p], rz.arrived[p] != 0, rz.collective_of(p), rz.label_of(p), rz.arrival[p]});
      }
      summary.open.push_back(std::move(oc));
    }
  }
  summary.crashes = m.crashes;
  summary.misalignments = m.misalignments;
  summary.watchdog_at = m.watchdog_at;
  summary.watchdog_collective = m.watchdog_collective;
  return summary;
}

}  // namespace

RunSummary Engine::run() {
  Impl& m = *impl_;
  if (!m.rank_major()) {
    run_time_order(*this, m);
    return summarise(m);
  }
  run_rank_major(*this, m);
  if (m.needs_time_order) {
    RunSummary stopped;
    stopped.needs_time_order = m.needs_time_order;
    return stopped;
  }
  return summarise(m);
}

}  // namespace ddpsim::sim
