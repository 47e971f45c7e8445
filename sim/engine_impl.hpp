#pragma once
// Internal to sim/engine.cpp: the engine's state and its event handling
// (Engine::Impl), for both schedules. engine.cpp holds the public methods.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/engine.hpp"
#include "sim/engine_queues.hpp"
#include "sim/rendezvous.hpp"
#include "sim/sweep_pool.hpp"

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
// and (kRankMajor) the collectives its ranks reached this sweep. Time order
// has one.
struct alignas(64) Worker {
  const void* owner = nullptr;  // the Engine::Impl it belongs to
  Time now;
  Time latest;  // kRankMajor: the latest event it ran
  int running_rank = -1;  // kRankMajor: the rank running (-1: none, as while the model sets up)
  std::uint64_t events_run = 0;
  std::uint64_t rank_ops = 0;
  std::vector<std::uint32_t> scratch;  // notify_listeners' copy of a waiter list (kept for its storage)
  std::vector<Arrival> arrivals;
  bool ran = false;
  std::exception_ptr error;
};

// The worker the calling thread runs, while it runs one.
thread_local Worker* tls_worker = nullptr;


// A kRankMajor run reached what only kTimeOrder simulates: thrown inside
// the engine and caught by Engine::run, which returns it as
// RunSummary::needs_time_order.
class NeedsTimeOrder : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};


}  // namespace

struct Engine::Impl {
  int world_size;
  CollectiveCostFn cost;
  EngineOptions options;
  const CollectiveLibrary* library = nullptr;  // never null once constructed
  std::vector<char> dead;                      // by rank
  std::vector<std::string> crash_messages;     // for scheduled crashes
  std::vector<Crash> crashes;
  std::vector<Misalignment> misalignments;
  std::set<std::tuple<Time, GroupId, std::uint64_t>> deadlines;  // watchdog: first arrival + timeout
  std::optional<Time> watchdog_at;
  std::optional<std::pair<GroupId, std::uint64_t>> watchdog_collective;
  std::vector<Observer*> observers;
  std::vector<Stream> streams;
  std::vector<Group> groups;
  EventQueue events;
  std::vector<Rendezvous> spare_rendezvous;  // finished ones, their buffers kept
  std::vector<Worker> workers;  // one; kRankMajor: one per thread
  // kRankMajor: each rank's events; the rendezvous it waits in (map nodes
  // stay put; `arriving` until the sweep ends); those resolved at the last
  // merge, delivered to every member since.
  std::vector<RankQueue> rank_events;
  std::vector<Rendezvous*> waiting;
  Rendezvous arriving;
  std::vector<std::pair<GroupId, std::uint64_t>> resolved;
  std::unique_ptr<SweepPool> pool;
  // kRankMajor: set while run() runs; before it, what needs time order is noted here.
  bool running = false;
  std::optional<std::string> needs_time_order;

  // Compute slowed by communication (EngineOptions::compute_slowdown), per
  // rank: the collectives in flight on it, and its running compute op's work
  // left at full speed as of `since`. A change of speed reschedules the op's
  // end; an end event of an earlier schedule carries an older version and is
  // ignored. Empty when the slowdown is zero.
  struct Contended {
    int in_flight = 0;
    double work_left_ns = 0;
    Time since;
    std::uint64_t version = 0;
  };
  std::vector<Contended> contended;

  bool contends() const { return !contended.empty(); }

  Time at_speed(double work_ns, bool slowed) const {
    return Time::ns(std::llround(slowed ? work_ns * (1 + options.compute_slowdown) : work_ns));
  }

  // Starts compute op `duration` on rank r's compute stream s, at its speed now.
  void start_contended(Worker& w, std::uint32_t s, Time duration) {
    Contended& c = contended[s / kStreamsPerRank];
    c.work_left_ns = static_cast<double>(duration.count_ns());
    c.since = w.now;
    push(w.now + at_speed(c.work_left_ns, c.in_flight > 0), EventKind::kOpDone, s, ++c.version);
  }

  // A collective starts (+1) or ends (-1) on rank r at `now`.
  void in_flight(int r, int delta, Time now) {
    Contended& c = contended[static_cast<std::size_t>(r)];
    const bool was = c.in_flight > 0;
    c.in_flight += delta;
    const bool is = c.in_flight > 0;
    const std::uint32_t s = stream_id(r, StreamKind::kCompute);
    if (was == is || !streams[s].active) return;
    const double elapsed = static_cast<double>((now - c.since).count_ns());
    c.work_left_ns = std::max(0.0, c.work_left_ns - (was ? elapsed / (1 + options.compute_slowdown) : elapsed));
    c.since = now;
    push(now + at_speed(c.work_left_ns, is), EventKind::kOpDone, s, ++c.version);
  }

  // Whether an op-done event for stream s is the current one.
  bool current_end(std::uint32_t s, std::uint64_t version) const {
    return !contends() || s % kStreamsPerRank != static_cast<std::uint32_t>(StreamKind::kCompute) ||
           contended[s / kStreamsPerRank].version == version;
  }

  // The worker of the calling thread; the first outside a sweep.
  Worker& here() {
    Worker* w = tls_worker;
    return w != nullptr && w->owner == this ? *w : workers.front();
  }
  const Worker& here() const {
    const Worker* w = tls_worker;
    return w != nullptr && w->owner == this ? *w : workers.front();
  }

  bool rank_major() const { return options.schedule == Schedule::kRankMajor; }

  void push(Time at, EventKind kind, std::uint32_t target, std::uint64_t payload,
            Process* process = nullptr) {
    if (rank_major()) {
      // Every event of this schedule names a stream; it is its rank's.
      rank_events[target / kStreamsPerRank].push(at, kind, target, payload, process);
      return;
    }
    events.push(at, Event{kind, target, payload, process});
  }

  // kRankMajor keeps each rank's work on that rank.
  void check_local(const Worker& w, int rank, const std::optional<OpRef>& after) const {
    if (!rank_major()) return;
    if (w.running_rank >= 0 && rank != w.running_rank) {
      throw std::logic_error("rank-major schedule: a process woken on one rank enqueued on another");
    }
    if (after && static_cast<int>(after->stream / kStreamsPerRank) != rank) {
      throw std::logic_error("rank-major schedule: an operation depends on another rank's");
    }
  }

  bool is_done(const OpRef& ref) const { return streams[ref.stream].completed > ref.index; }

  void check_enqueued(const std::optional<OpRef>& ref) const {
    if (ref && (ref->stream >= streams.size() || ref->index >= streams[ref->stream].enqueued)) {
      throw std::invalid_argument("reference to an operation that was never enqueued");
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
    if (!op.is_collective) {
      if (contends() && s % kStreamsPerRank == static_cast<std::uint32_t>(StreamKind::kCompute)) {
        start_contended(w, s, op.duration());
      } else {
        push(w.now + op.duration(), EventKind::kOpDone, s, 0);
      }
      return;
    }
    arrive(w, s, op);
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

  // The head op of stream s, a collective, reaches its rendezvous.
  void arrive(Worker& w, std::uint32_t s, const Op& op) {
    const int rank = static_cast<int>(s / kStreamsPerRank);
    if (rank_major()) {
      // Recorded when the sweep ends (merge): the rendezvous is shared.
      w.arrivals.push_back(Arrival{rank, op.group, op.group_seq, op.collective(), op.label, w.now});
      waiting[static_cast<std::size_t>(rank)] = &arriving;
      return;
    }
    const Time now = w.now;
    Group& g = groups[op.group];
    const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(rank)]);
    const auto [rzp, fresh] = open_rendezvous(g, op.group_seq);
    Rendezvous& rz = *rzp;
    const std::size_t n = g.members.size();
    if (fresh && options.watchdog_timeout > Time::zero()) {
      deadlines.emplace(now + options.watchdog_timeout, op.group, op.group_seq);
    }
    rz.record(pos, op.collective(), op.label, now);
    if (g.dead_members > 0) {
      // A member already died: the library may fail this rank with it.
      const auto m = *std::find_if(g.members.begin(), g.members.end(), [this](int r) { return dead[static_cast<std::size_t>(r)] != 0; });
      if (std::optional<std::string> message = library->peer_died(m)) {
        crash(rank, *message);
        return;
      }
    }
    if (++rz.count < static_cast<int>(n)) return;
    resolve(op.group, op.group_seq, rz, now);
  }

  // kRankMajor: records the collectives reached in the last sweep, in rank
  // order, and resolves those every member has reached.
  void merge() {
    // Each member of those resolved at the last merge took its end in the sweep since.
    for (const auto& [gid, seq] : resolved) {
      Group& g = groups[gid];
      const auto it = g.open.find(seq);
      spare_rendezvous.push_back(std::move(it->second));
      g.open.erase(it);
    }
    resolved.clear();
    for (Worker& w : workers) {
      for (const Arrival& a : w.arrivals) {
        Group& g = groups[a.group];
        const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(a.rank)]);
        Rendezvous& rz = *open_rendezvous(g, a.seq).first;
        rz.record(pos, a.collective, a.label, a.at);
        waiting[static_cast<std::size_t>(a.rank)] = &rz;
        if (++rz.count < static_cast<int>(g.members.size())) continue;
        resolve(a.group, a.seq, rz, a.at);
        resolved.emplace_back(a.group, a.seq);
      }
      w.arrivals.clear();
    }
  }

  // Every member arrived: run the collective, or do what the backend does
  // when the members disagree.
  // `now`: kTimeOrder's clock (the last member's arrival).
  void resolve(GroupId gid, std::uint64_t seq, Rendezvous& rz, Time now) {
    const Group& g = groups[gid];
    // Every member issued the same collective with the same label (the
    // usual case) needs no per-member check.
    if (!rz.uniform && rank_major()) {
      throw NeedsTimeOrder(fmt::format("collective #{} of group {}: its members disagree", seq, gid));
    }
    if (!rz.uniform) {
      Verdict verdict = library->on_mismatch(seq, g.members, rz.collectives);
      if (verdict.kind == Verdict::kStalls) {
        rz.stalled = true;  // never completes; the watchdog, if any, ends the job
        return;
      }
      if (verdict.kind == Verdict::kFails) {
        for (const RankFailure& f : verdict.failures) crash(f.rank, f.message);
        return;
      }
    }
    deadlines.erase({rz.earliest_arrival + options.watchdog_timeout, gid, seq});
    rz.start = rz.last_arrival;  // kTimeOrder: now; kRankMajor resolves between sweeps
    const Collective runs = library->as_sent(rz.collective_of(0));
    for (std::size_t p = 0; !rz.uniform && p < rz.labels.size(); ++p) {
      if (!Rendezvous::same(rz.labels[p], rz.labels[0])) {
        misalignments.push_back(Misalignment{gid, seq, now, g.members, rz.labels});
        break;
      }
    }
    const int n = static_cast<int>(g.members.size());
    Time duration = cost(runs, n);
    if (const std::optional<Collective> check = library->check_before(n)) duration += cost(*check, n);
    if (duration < Time::zero()) throw std::logic_error("collective cost model returned a negative time");
    if (rank_major()) {
      // In time order the watchdog would have fired while the first member waited.
      if (options.watchdog_timeout > Time::zero() && rz.earliest_arrival + options.watchdog_timeout < rz.last_arrival) {
        throw NeedsTimeOrder(fmt::format("collective #{} of group {}: the watchdog fires", seq, gid));
      }
      // Each member learns it in the next sweep (deliver).
      rz.resolved = true;
      rz.done_at = rz.start + duration;
      return;
    }
    if (contends()) {
      for (int m : g.members) {
        if (!dead[static_cast<std::size_t>(m)]) in_flight(m, +1, now);
      }
    }
    push(now + duration, EventKind::kCollectiveDone, gid, seq);
  }

  // kRankMajor: if the rendezvous rank r waits in has resolved, queues its
  // end on r's communication stream and says so.
  bool deliver(int r) {
    const Rendezvous& rz = *waiting[static_cast<std::size_t>(r)];
    if (!rz.resolved) return false;
    waiting[static_cast<std::size_t>(r)] = nullptr;
    push(rz.done_at, EventKind::kMemberDone, stream_id(r, StreamKind::kComm), static_cast<std::uint64_t>(rz.start.count_ns()));
    return true;
  }

  // `origin`: the rank whose death this one follows (CollectiveLibrary::peer_died), or -1.
  void crash(int rank, const std::string& message, int origin = -1) {
    if (rank_major()) throw NeedsTimeOrder(fmt::format("rank {} crashed: {}", rank, message));
    auto& d = dead[static_cast<std::size_t>(rank)];
    if (d) return;
    d = 1;
    crashes.push_back(Crash{rank, workers.front().now, message});
    for (Group& g : groups) {
      if (g.position_of_rank[static_cast<std::size_t>(rank)] >= 0) ++g.dead_members;
    }
    for (int k = 0; k < kStreamsPerRank; ++k) {
      Stream& st = streams[stream_id(rank, static_cast<StreamKind>(k))];
      st.pending.clear();
      st.active = false;
      st.wakes.clear();
    }
    // Every peer already waiting in a collective with this rank may fail with it.
    const int first = origin < 0 ? rank : origin;
    const std::optional<std::string> closed = library->peer_died(first);
    if (!closed) return;
    std::vector<int> peers;
    for (const Group& g : groups) {
      if (g.position_of_rank[static_cast<std::size_t>(rank)] < 0) continue;
      for (const auto& [seq, rz] : g.open) {
        for (std::size_t p = 0; p < g.members.size(); ++p) {
          if (rz.arrived[p] && !dead[static_cast<std::size_t>(g.members[p])]) peers.push_back(g.members[p]);
        }
      }
    }
    for (int r : peers) crash(r, *closed, first);
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
                         .arrival = arrival};
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
        push(w.now, EventKind::kWake, s, wake.token, wake.process);
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

  void finish_collective(Worker& w, GroupId gid, std::uint64_t seq) {
    Group& g = groups[gid];
    auto it = g.open.find(seq);
    assert(it != g.open.end());
    Rendezvous rz = std::move(it->second);
    g.open.erase(it);
    const std::size_t n = g.members.size();
    for (std::size_t p = 0; p < n; ++p) {
      if (dead[static_cast<std::size_t>(g.members[p])]) continue;
      if (contends()) in_flight(g.members[p], -1, w.now);
      finish_head(w, stream_id(g.members[p], StreamKind::kComm), rz.start, rz.arrival[p]);
    }
    spare_rendezvous.push_back(std::move(rz));
  }

  void dispatch(Engine& engine, Worker& w, const Event& ev) {
    ++w.events_run;
    switch (ev.kind) {
      case EventKind::kOpDone:
        if (streams[ev.target].active && current_end(ev.target, ev.payload)) {
          finish_head(w, ev.target, streams[ev.target].start, Time{});
        }
        break;
      case EventKind::kCollectiveDone:
        finish_collective(w, ev.target, ev.payload);
        break;
      case EventKind::kMemberDone:  // the comm stream's start is this member's arrival
        finish_head(w, ev.target, Time::ns(static_cast<std::int64_t>(ev.payload)), streams[ev.target].start);
        break;
      case EventKind::kWake:
        ev.process->on_wake(engine, ev.payload);
        break;
      case EventKind::kCrash:
        crash(static_cast<int>(ev.target), crash_messages[ev.payload]);
        break;
    }
  }

  // kRankMajor: rank r runs its events until it waits in a collective.
  void visit(Engine& engine, Worker& w, int r) {
    const auto ur = static_cast<std::size_t>(r);
    RankQueue& q = rank_events[ur];
    w.running_rank = r;
    while ((waiting[ur] == nullptr || deliver(r)) && !q.empty()) {
      w.ran = true;
      const RankQueue::Entry e = q.pop();
      w.now = e.at;
      w.latest = max(w.latest, w.now);
      dispatch(engine, w, e.event);
    }
    w.running_rank = -1;
  }

  // kRankMajor: sweeps the ranks, each worker a contiguous range of them in
  // order, then records the collectives they reached (merge), until a sweep
  // runs nothing. With one world group a sweep brings every rank to the
  // next collective, and the merge resolves it: a rank's state is hot while
  // it runs and the ranks are walked in memory order. Workers share nothing
  // a sweep writes but their ranks' state; what ranks share (rendezvous)
  // changes only in the merge, on one thread.
  void run_rank_major(Engine& engine) {
    const auto n = static_cast<long long>(workers.size());
    const std::function<void(int)> sweep = [&](int i) {
      Worker& w = workers[static_cast<std::size_t>(i)];
      tls_worker = &w;
      try {
        const auto from = static_cast<int>(world_size * i / n), to = static_cast<int>(world_size * (i + 1) / n);
        for (int r = from; r < to; ++r) visit(engine, w, r);
      } catch (...) {
        w.error = std::current_exception();
      }
      tls_worker = nullptr;
    };
    if (n > 1 && !pool) pool = std::make_unique<SweepPool>(static_cast<int>(n));
    merge();
    for (;;) {
      for (Worker& w : workers) w.ran = false;
      if (pool) {
        pool->run(sweep);
      } else {
        sweep(0);
      }
      bool ran = false;
      for (Worker& w : workers) {
        if (w.error) std::rethrow_exception(w.error);
        ran = ran || w.ran;
      }
      if (!ran) break;
      merge();
    }
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
};


}  // namespace ddpsim::sim

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
