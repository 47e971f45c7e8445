#pragma once
// Internal to sim/engine.cpp: what both schedules share. Engine::Impl holds
// the streams, the process groups and the record of a run, and declares
// the engine's entry points; Machine<S> runs the streams (start an op, end
// it, wake who waits) for a schedule S, which decides where an event goes,
// what reaching a collective does, and how the run proceeds:
// sim/time_order.hpp and sim/rank_major.hpp. A schedule's hooks are called
// statically (CRTP), so the per-event path has no virtual call; only the
// engine's public methods go through one.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <fmt/format.h>

#include <cassert>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine.hpp"
#include "sim/engine_queues.hpp"
#include "sim/rendezvous.hpp"

// The engine's helper types have internal linkage, as when they lived in
// engine.cpp itself: GCC then inlines what only engine.cpp calls (with
// external linkage, ResNet-50 1,024 x 100 in time order took 13 % more
// instructions, callgrind). engine.cpp alone includes these headers (the
// guard above), so Impl's fields of such types break no ODR rule; GCC's
// -Wsubobject-linkage, which cannot know that, is off for Impl.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif

namespace ddpsim::sim {

namespace {

// What one thread running events keeps of its own: its clock, its counts,
// and (rank-major) the collectives its ranks reached this sweep. Time order
// has one.
struct alignas(64) Worker {
  const void* owner = nullptr;  // the Engine::Impl it belongs to
  Time now;
  Time latest;  // rank-major: the latest event it ran
  int running_rank = -1;  // rank-major: the rank running (-1: none, as while the model sets up)
  std::uint64_t events_run = 0;
  std::uint64_t rank_ops = 0;
  std::vector<std::uint32_t> scratch;  // notify_listeners' copy of a waiter list (kept for its storage)
  std::vector<Arrival> arrivals;
  bool ran = false;
  std::exception_ptr error;
};

// The worker the calling thread runs, while it runs one.
thread_local Worker* tls_worker = nullptr;

}  // namespace

struct Engine::Impl {
  int world_size;
  CollectiveCostFn cost;
  EngineOptions options;
  const CollectiveLibrary* library = nullptr;  // never null once constructed
  std::vector<char> dead;                      // by rank
  std::vector<Crash> crashes;
  std::vector<Misalignment> misalignments;
  std::optional<Time> watchdog_at;
  std::optional<std::pair<GroupId, std::uint64_t>> watchdog_collective;
  std::vector<Observer*> observers;
  std::vector<Stream> streams;
  std::vector<Group> groups;
  std::vector<SharedCostFn> sharings;          // Engine::add_sharing_groups: each set's pricing
  std::vector<Rendezvous> spare_rendezvous;  // finished ones, their buffers kept
  std::vector<Worker> workers;               // one; rank-major: one per thread

  Impl(int world_size_, CollectiveCostFn cost_, const EngineOptions& options_, std::size_t threads)
      : world_size(world_size_), cost(std::move(cost_)), options(options_),
        library(options_.library != nullptr ? options_.library : &plain_library()),
        dead(static_cast<std::size_t>(world_size_), 0),
        streams(static_cast<std::size_t>(world_size_) * kStreamsPerRank), workers(threads) {
    for (Worker& w : workers) w.owner = this;
    Group world;
    for (int r = 0; r < world_size; ++r) {
      world.members.push_back(r);
      world.position_of_rank.push_back(r);
    }
    world.issued.assign(static_cast<std::size_t>(world_size), 0);
    groups.push_back(std::move(world));
  }
  virtual ~Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // The engine's entry points, after Engine has checked the arguments.
  virtual OpRef enqueue_op(int rank, StreamKind kind, Time duration, OpLabel label, std::optional<OpRef> after) = 0;
  virtual OpRef enqueue_collective_op(int rank, GroupId group, Collective collective, OpLabel label,
                                      std::optional<OpRef> after) = 0;
  virtual void wake_when_done(OpRef op, Process& process, std::uint64_t token) = 0;
  virtual void crash_now(int rank, std::string message) = 0;
  virtual void crash_at(int rank, Time at, std::string message) = 0;
  virtual void link_down_at(int rank, Time at) = 0;
  virtual void price_change_at(Time at, std::function<void()> change) = 0;
  virtual RunSummary run(Engine& engine) = 0;
  virtual void on_add_group(const Group& g) { (void)g; }
  virtual void on_add_sharing() {}

  // The worker of the calling thread; the first outside a sweep.
  Worker& here() {
    Worker* w = tls_worker;
    return w != nullptr && w->owner == this ? *w : workers.front();
  }
  const Worker& here() const {
    const Worker* w = tls_worker;
    return w != nullptr && w->owner == this ? *w : workers.front();
  }

  bool is_done(const OpRef& ref) const { return streams[ref.stream].completed > ref.index; }

  void check_enqueued(const std::optional<OpRef>& ref) const {
    if (ref && (ref->stream >= streams.size() || ref->index >= streams[ref->stream].enqueued)) {
      throw std::invalid_argument("reference to an operation that was never enqueued");
    }
  }

  // The rendezvous of collective `seq` in group g, and whether it was just
  // opened (empty, reusing a finished one's buffers).
  std::pair<Rendezvous*, bool> open_rendezvous(Group& g, std::uint64_t seq) {
    auto [it, fresh] = g.open.try_emplace(seq);
    Rendezvous& rz = it->second;
    if (fresh) {
      if (!spare_rendezvous.empty()) {
        rz = std::move(spare_rendezvous.back());
        spare_rendezvous.pop_back();
      }
      rz.reset(g.members.size());
    }
    return {&rz, fresh};
  }

  // How long a collective every member of g reached takes: what the library
  // sends for it, and any check it runs first, priced over the group.
  Time collective_time(const Group& g, const Rendezvous& rz) const {
    const int n = static_cast<int>(g.members.size());
    const CollectiveCostFn& price = g.cost ? g.cost : cost;
    Time duration = price(library->as_sent(rz.collective_of(0)), n);
    if (const std::optional<Collective> check = library->check_before(n)) duration += price(*check, n);
    if (duration < Time::zero()) throw std::logic_error("collective cost model returned a negative time");
    return duration;
  }

  BlockedOp describe_blocked(std::uint32_t s) const {
    const Stream& st = streams[s];
    const Op& op = st.pending.front();
    BlockedOp b;
    b.rank = static_cast<int>(s / kStreamsPerRank);
    b.stream = static_cast<StreamKind>(s % kStreamsPerRank);
    b.label = op.label;
    b.since = st.head_since;
    b.collective = op.collective();
    b.group = op.group;
    b.group_seq = op.group_seq;
    if (!op.is_collective && st.active) {
      b.running = true;
    } else if (op.is_collective && st.active) {
      b.in_rendezvous = true;
      const Group& g = groups[op.group];
      const auto it = g.open.find(op.group_seq);
      for (std::size_t p = 0; it != g.open.end() && p < g.members.size(); ++p) {
        if (!it->second.arrived[p]) b.missing_ranks.push_back(g.members[p]);
      }
    } else {
      b.waits_for = op.after();
    }
    return b;
  }

  // What a finished run leaves, ending at `end`: its counts, what still waits.
  RunSummary summarise(Time end) const {
    RunSummary summary;
    summary.end = end;
    for (const Worker& w : workers) {
      summary.events += w.events_run;
      summary.rank_ops += w.rank_ops;
    }
    for (std::uint32_t s = 0; s < streams.size(); ++s) {
      if (!streams[s].pending.empty()) summary.blocked.push_back(describe_blocked(s));
    }
    for (GroupId gid = 0; gid < groups.size(); ++gid) {
      const Group& g = groups[gid];
      for (const auto& [seq, rz] : g.open) {
        OpenCollective oc{gid, seq, rz.stalled, {}};
        for (std::size_t p = 0; p < g.members.size(); ++p) {
          oc.members.push_back(MemberState{g.members[p], rz.arrived[p] != 0, rz.collective_of(p), rz.label_of(p), rz.arrival[p]});
        }
        summary.open.push_back(std::move(oc));
      }
    }
    summary.crashes = crashes;
    summary.misalignments = misalignments;
    summary.watchdog_at = watchdog_at;
    summary.watchdog_collective = watchdog_collective;
    return summary;
  }
};

namespace {

// Runs the streams for schedule S, which provides:
//   push(at, kind, target, payload, process)   queue an event
//   check_local(worker, rank, after)           refuse what the schedule cannot run
//   start_compute(worker, stream, duration)    a plain op starts on a compute stream
//   arrive(worker, stream, op)                 a stream's head collective reaches its rendezvous
template <class S>
struct Machine : Engine::Impl {
  using Engine::Impl::Impl;

  S& self() { return static_cast<S&>(*this); }

  OpRef enqueue_op(int rank, StreamKind kind, Time duration, OpLabel label, std::optional<OpRef> after) final {
    Worker& w = here();
    check_enqueued(after);
    self().check_local(w, rank, after);
    const std::uint32_t s = Engine::stream_id(rank, kind);
    Stream& st = streams[s];
    if (dead[static_cast<std::size_t>(rank)]) return OpRef{s, st.enqueued++};  // a dead process issues nothing
    if (st.pending.empty() && !st.active) st.head_since = w.now;
    Op::plain(st.pending.push_back(), duration, label, after);
    const OpRef ref{s, st.enqueued++};
    try_start(w, s);
    return ref;
  }

  OpRef enqueue_collective_op(int rank, GroupId group, Collective collective, OpLabel label,
                              std::optional<OpRef> after) final {
    Group& g = groups[group];
    Worker& w = here();
    check_enqueued(after);
    self().check_local(w, rank, after);
    const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(rank)]);
    const std::uint32_t s = Engine::stream_id(rank, g.stream);
    Stream& st = streams[s];
    if (dead[static_cast<std::size_t>(rank)]) return OpRef{s, st.enqueued++};
    if (st.pending.empty() && !st.active) st.head_since = w.now;
    Op::collective_op(st.pending.push_back(), collective, group, g.issued[pos]++, label, after);
    const OpRef ref{s, st.enqueued++};
    try_start(w, s);
    return ref;
  }

  void wake_when_done(OpRef op, Process& process, std::uint64_t token) final {
    const Worker& w = here();
    check_enqueued(op);
    self().check_local(w, static_cast<int>(op.stream / kStreamsPerRank), std::nullopt);
    if (is_done(op)) {
      self().push(w.now, EventKind::kWake, op.stream, token, &process);
    } else {
      Stream& st = streams[op.stream];
      st.wakes.push_back(Wake{op.index, &process, token});
      st.has_listeners = true;
    }
  }

  void try_start(Worker& w, std::uint32_t s) {
    Stream& st = streams[s];
    if (st.active || st.pending.empty()) return;
    const Op& op = st.pending.front();
    if (op.has_after && streams[op.after_stream].completed <= op.after_index) {
      if (!st.registered_waiter) {
        Stream& target = streams[op.after_stream];
        target.waiters.push_back(s);
        target.has_listeners = true;
        st.registered_waiter = true;
      }
      return;
    }
    st.active = true;
    st.start = w.now;
    if (op.is_collective) {
      self().arrive(w, s, op);
    } else if (s % kStreamsPerRank == static_cast<std::uint32_t>(StreamKind::kCompute)) {
      self().start_compute(w, s, op.duration());
    } else {
      self().push(w.now + op.duration(), EventKind::kOpDone, s, 0, nullptr);
    }
  }

  // Ends the head op of stream s, which started at `start`.
  void finish_head(Worker& w, std::uint32_t s, Time start, Time arrival) {
    Stream& st = streams[s];
    assert(st.active && !st.pending.empty());
    const Op op = std::move(st.pending.front());
    st.pending.pop_front();
    if (!observers.empty()) {
      const OpRecord rec{.rank = static_cast<int>(s / kStreamsPerRank),
                         .stream = static_cast<StreamKind>(s % kStreamsPerRank),
                         .label = op.label,
                         .ready = st.head_since,
                         .start = start,
                         .end = w.now,
                         .after = op.after(),
                         .is_collective = op.is_collective,
                         .collective = op.collective(),
                         .group_seq = op.group_seq,
                         .arrival = arrival,
                         .group = op.group};
      for (Observer* o : observers) o->on_op(rec);
    }
    ++st.completed;
    ++w.rank_ops;
    st.active = false;
    st.head_since = w.now;
    if (st.has_listeners) notify_listeners(w, s);
    try_start(w, s);
  }

  // Wakes the processes waiting for stream s's ops that have ended, and
  // retries the streams whose head op waited for one of them.
  void notify_listeners(Worker& w, std::uint32_t s) {
    Stream& st = streams[s];
    if (!st.wakes.empty()) {
      st.wakes.erase_if([&](const Wake& wake) {
        if (wake.index >= st.completed) return false;
        self().push(w.now, EventKind::kWake, s, wake.token, wake.process);
        return true;
      });
    }
    if (!st.waiters.empty()) {
      // try_start may register waiters on this stream again: take the list first.
      for (std::size_t i = 0; i < st.waiters.size(); ++i) w.scratch.push_back(st.waiters[i]);
      st.waiters.clear();
      for (std::uint32_t waiter : w.scratch) {
        streams[waiter].registered_waiter = false;
        try_start(w, waiter);
      }
      w.scratch.clear();
    }
    st.has_listeners = !st.wakes.empty() || !st.waiters.empty();
  }
};

}  // namespace
}  // namespace ddpsim::sim

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
