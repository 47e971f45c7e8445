#pragma once
// Internal to sim/engine.cpp: Schedule::kTimeOrder. Every event of every
// rank in one (time, insertion) order on one thread: what a collective does
// when its members disagree or a member dies, the watchdog, compute slowed
// by communication and communication slowed by compute are simulated here
// only.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/engine_core.hpp"

namespace ddpsim::sim {
namespace {  // internal linkage: see engine_core.hpp

struct TimeOrder final : Machine<TimeOrder> {
  EventQueue events;
  std::vector<std::string> crash_messages;  // for scheduled crashes
  std::vector<char> link_down;              // per rank, once a link has gone down (empty before)
  std::set<std::tuple<Time, GroupId, std::uint64_t>> deadlines;  // watchdog: first arrival + timeout

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

  // Groups that share links (Engine::add_sharing_groups), per set: the
  // collectives in flight, in start order, each with the fraction of its
  // work left as of `since` at the rate of its current `span` (its time at
  // that rate from start to end; zero: not yet priced). A repricing bumps
  // `version`; an end event of an older one is ignored. `dirty`: the sets
  // whose in-flight collectives changed this instant, repriced once the
  // instant's events have run.
  struct Running {
    GroupId group = 0;
    std::uint64_t seq = 0;
    Collective sent;
    std::optional<Collective> check;
    double left = 1;
    Time since;
    Time span;
    std::uint64_t version = 0;
    int computing = 0;  // members with compute running (comm_slowdown > 0 only)
  };
  std::vector<std::vector<Running>> sharing_running;
  std::set<int> dirty;
  std::uint64_t pricing_version = 0;

  // Communication slowed by compute (EngineOptions::comm_slowdown): per
  // rank, whether its compute stream runs an op; per collective in flight
  // outside the sharing sets, its members computing, the fraction of its
  // work left as of `since`, its time alone, and whether it was last priced
  // slowed (a change of speed reprices it once the instant's events have
  // run: `speeds_dirty`). Empty when the slowdown is zero.
  struct Slowable {
    GroupId group = 0;
    std::uint64_t seq = 0;
    int computing = 0;
    double left = 1;
    Time since;
    Time alone;
    bool slowed = false;
    std::uint64_t version = 0;  // zero: not yet priced
  };
  std::vector<char> computing;
  std::vector<Slowable> slowable;
  bool speeds_dirty = false;

  // Price changes (Engine::schedule_price_change), by the index their
  // event carries. With any scheduled, every collective outside the sharing
  // sets is kept as a Slowable, so that a change can reprice the work it has left.
  std::vector<std::function<void()>> price_changes;
  bool started = false;  // run() has begun: a price change now would miss the collectives in flight

  TimeOrder(int world_size_, CollectiveCostFn cost_, const EngineOptions& options_)
      : Machine(world_size_, std::move(cost_), options_, 1) {
    if (options.compute_slowdown > 0) contended.resize(static_cast<std::size_t>(world_size));
    if (options.comm_slowdown > 0) computing.assign(static_cast<std::size_t>(world_size), 0);
  }

  // Events that do work, queued: a link going down or a price change only
  // changes what later work costs, so with nothing else queued the run is
  // over (its end is the last work's, not the change's).
  std::size_t working_events = 0;
  static bool works(EventKind kind) { return kind != EventKind::kLinkDown && kind != EventKind::kPriceChange; }

  void push(Time at, EventKind kind, std::uint32_t target, std::uint64_t payload, Process* process) {
    working_events += works(kind);
    events.push(at, Event{kind, target, payload, process});
  }

  void check_local(const Worker&, int, const std::optional<OpRef>&) const {}

  bool contends() const { return !contended.empty(); }

  Time at_speed(double work_ns, bool slowed) const {
    return Time::from_ns(slowed ? work_ns * (1 + options.compute_slowdown) : work_ns,
                         "a compute op's time under contention.compute_slowdown");
  }

  bool slows_comm() const { return !computing.empty(); }

  // Whether each collective outside the sharing sets is kept with its work left.
  bool tracks_work_left() const { return slows_comm() || !price_changes.empty(); }

  double comm_factor(bool slowed) const { return slowed ? 1 + options.comm_slowdown : 1; }

  // Rank r's compute stream starts (on) or stops running ops: the
  // collectives in flight on r count it, and those whose speed changes are
  // repriced at the instant's end.
  void set_computing(int r, bool on) {
    if (!slows_comm() || computing[static_cast<std::size_t>(r)] == static_cast<char>(on)) return;
    computing[static_cast<std::size_t>(r)] = static_cast<char>(on);
    const int delta = on ? 1 : -1;
    for (Slowable& c : slowable) {
      if (groups[c.group].position_of_rank[static_cast<std::size_t>(r)] < 0) continue;
      c.computing += delta;
      if ((c.computing > 0) != c.slowed) speeds_dirty = true;
    }
    for (std::size_t k = 0; k < sharing_running.size(); ++k) {
      for (Running& x : sharing_running[k]) {
        if (groups[x.group].position_of_rank[static_cast<std::size_t>(r)] < 0) continue;
        x.computing += delta;
        dirty.insert(static_cast<int>(k));
      }
    }
  }

  // The live members of group g whose compute stream runs an op now.
  int members_computing(const Group& g) const {
    int n = 0;
    for (int m : g.members) n += computing[static_cast<std::size_t>(m)] != 0 && !dead[static_cast<std::size_t>(m)];
    return n;
  }

  // Starts compute op `duration` on compute stream s, at its rank's speed now.
  void start_compute(Worker& w, std::uint32_t s, Time duration) {
    set_computing(static_cast<int>(s / kStreamsPerRank), true);
    if (!contends()) {
      push(w.now + duration, EventKind::kOpDone, s, 0, nullptr);
      return;
    }
    Contended& c = contended[s / kStreamsPerRank];
    c.work_left_ns = static_cast<double>(duration.count_ns());
    c.since = w.now;
    push(w.now + at_speed(c.work_left_ns, c.in_flight > 0), EventKind::kOpDone, s, ++c.version, nullptr);
  }

  // A collective starts (+1) or ends (-1) on rank r at `now`.
  void in_flight(int r, int delta, Time now) {
    Contended& c = contended[static_cast<std::size_t>(r)];
    const bool was = c.in_flight > 0;
    c.in_flight += delta;
    const bool is = c.in_flight > 0;
    const std::uint32_t s = Engine::stream_id(r, StreamKind::kCompute);
    if (was == is || !streams[s].active) return;
    const double elapsed = static_cast<double>((now - c.since).count_ns());
    c.work_left_ns = std::max(0.0, c.work_left_ns - (was ? elapsed / (1 + options.compute_slowdown) : elapsed));
    c.since = now;
    push(now + at_speed(c.work_left_ns, is), EventKind::kOpDone, s, ++c.version, nullptr);
  }

  // Whether an op-done event for stream s is the current one.
  bool current_end(std::uint32_t s, std::uint64_t version) const {
    return !contends() || s % kStreamsPerRank != static_cast<std::uint32_t>(StreamKind::kCompute) ||
           contended[s / kStreamsPerRank].version == version;
  }

  // The head op of stream s, a collective, reaches its rendezvous.
  void arrive(Worker& w, std::uint32_t s, const Op& op) {
    const int rank = static_cast<int>(s / kStreamsPerRank);
    const Time now = w.now;
    Group& g = groups[op.group];
    const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(rank)]);
    const auto [rzp, fresh] = open_rendezvous(g, op.group_seq);
    Rendezvous& rz = *rzp;
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
    if (++rz.count < static_cast<int>(g.members.size())) return;
    resolve(op.group, op.group_seq, rz, now);
  }

  // Every member arrived at `now`: run the collective, or do what the
  // library does when the members disagree.
  void resolve(GroupId gid, std::uint64_t seq, Rendezvous& rz, Time now) {
    const Group& g = groups[gid];
    // Every member issued the same collective with the same label (the
    // usual case) needs no per-member check.
    if (!rz.uniform) {
      Verdict verdict = library->on_mismatch(seq, g.members, rz.collectives);
      if (verdict.kind == Verdict::kStalls) {
        rz.stalled = true;  // never completes; the watchdog, if any, ends the job
        return;
      }
      if (verdict.kind == Verdict::kRuns) {
        if (std::optional<Verdict> read = library->on_label_mismatch(seq, g.members, rz.labels)) verdict = std::move(*read);
      }
      if (verdict.kind == Verdict::kFails) {
        for (const RankFailure& f : verdict.failures) crash(f.rank, f.message);
        return;
      }
      for (std::size_t p = 0; p < rz.labels.size(); ++p) {
        if (!Rendezvous::same(rz.labels[p], rz.labels[0])) {
          misalignments.push_back(Misalignment{gid, seq, now, g.members, rz.labels});
          break;
        }
      }
    }
    if (cut_off(g)) {
      rz.stalled = true;  // its deadline stays: the watchdog times it out
      return;
    }
    deadlines.erase({rz.earliest_arrival + options.watchdog_timeout, gid, seq});
    rz.start = rz.last_arrival;  // `now`
    rz.resolved = true;          // running: what a first price change looks for (track_in_flight)
    if (contends()) {
      for (int m : g.members) {
        if (!dead[static_cast<std::size_t>(m)]) in_flight(m, +1, now);
      }
    }
    if (g.sharing >= 0) {
      start_shared(g, gid, seq, rz, now);
      return;
    }
    if (tracks_work_left()) {
      slowable.push_back(Slowable{gid, seq, slows_comm() ? members_computing(g) : 0, 1, now, collective_time(g, rz), false, 0});
      speeds_dirty = true;
      return;
    }
    push(now + collective_time(g, rz), EventKind::kCollectiveDone, gid, seq, nullptr);
  }

  // The work collective c did since its last pricing (none if not yet
  // priced), at the speed it was priced at; its clock moves to `now`.
  void count_work_done(Slowable& c, Time now) const {
    const double alone_ns = static_cast<double>(c.alone.count_ns());
    if (c.version != 0 && alone_ns > 0) {
      const double done = static_cast<double>((now - c.since).count_ns()) / (alone_ns * comm_factor(c.slowed));
      c.left = std::max(0.0, c.left - done);
    }
    c.since = now;
  }

  // Every collective outside the sharing sets whose speed changed (or that
  // just started): the work it did since its last pricing, then its end at
  // the speed its members' compute allows now.
  void reprice_slowable(Time now) {
    for (Slowable& c : slowable) {
      const bool slowed = c.computing > 0;
      if (c.version != 0 && slowed == c.slowed) continue;
      count_work_done(c, now);
      const double alone_ns = static_cast<double>(c.alone.count_ns());
      c.slowed = slowed;
      c.version = ++pricing_version;
      push(now + Time::from_ns(c.left * alone_ns * comm_factor(slowed), "a collective's remaining time (contention.comm_slowdown, a price change)"),
           EventKind::kSlowableDone, c.group, c.version, nullptr);
    }
    speeds_dirty = false;
  }

  // A collective outside the sharing sets ends, if `version` is its current pricing.
  void finish_slowable(Worker& w, GroupId gid, std::uint64_t version) {
    const auto it = std::find_if(slowable.begin(), slowable.end(), [&](const Slowable& c) { return c.group == gid; });
    if (it == slowable.end() || it->version != version) return;
    const std::uint64_t seq = it->seq;
    slowable.erase(it);
    finish_collective(w, gid, seq);
  }

  // A collective of a link-sharing group starts: priced with its set's
  // others once the instant is over.
  void start_shared(const Group& g, GroupId gid, std::uint64_t seq, const Rendezvous& rz, Time now) {
    if (sharing_running.size() < sharings.size()) sharing_running.resize(sharings.size());
    const int n = static_cast<int>(g.members.size());
    sharing_running[static_cast<std::size_t>(g.sharing)].push_back(
        Running{gid, seq, library->as_sent(rz.collective_of(0)), library->check_before(n), 1, now, Time{}, 0,
                slows_comm() ? members_computing(g) : 0});
    dirty.insert(g.sharing);
  }

  // Every collective in flight in a dirty set: the work it did since its
  // last pricing, then its time at the rate of the set now in flight.
  void reprice(Time now) {
    for (int k : dirty) {
      std::vector<Running>& running = sharing_running[static_cast<std::size_t>(k)];
      std::vector<InFlight> in_flight;
      for (const Running& r : running) in_flight.push_back({groups[r.group].sharing_index, r.sent});
      std::sort(in_flight.begin(), in_flight.end(),
                [](const InFlight& a, const InFlight& b) { return a.group < b.group; });
      const SharedCostFn& price = sharings[static_cast<std::size_t>(k)];
      for (Running& r : running) {
        if (r.span > Time::zero()) {
          const double done = static_cast<double>((now - r.since).count_ns()) / static_cast<double>(r.span.count_ns());
          r.left = std::max(0.0, r.left - done);
        }
        r.since = now;
        const int index = groups[r.group].sharing_index;
        r.span = price(r.sent, index, in_flight);
        if (r.check) r.span += price(*r.check, index, in_flight);
        if (r.span < Time::zero()) throw std::logic_error("collective cost model returned a negative time");
        if (r.computing > 0) {
          r.span = Time::from_ns(static_cast<double>(r.span.count_ns()) * comm_factor(true),
                                 "a shared collective's time under contention.comm_slowdown");
        }
        r.version = ++pricing_version;
        push(now + Time::from_ns(r.left * static_cast<double>(r.span.count_ns()), "a shared collective's remaining time"),
             EventKind::kSharedDone, r.group,
             r.version, nullptr);
      }
    }
    dirty.clear();
  }

  // A link-sharing group's collective ends, if `version` is its current pricing.
  void finish_shared(Worker& w, GroupId gid, std::uint64_t version) {
    const int k = groups[gid].sharing;
    std::vector<Running>& running = sharing_running[static_cast<std::size_t>(k)];
    const auto it = std::find_if(running.begin(), running.end(), [&](const Running& r) { return r.group == gid; });
    if (it == running.end() || it->version != version) return;
    const std::uint64_t seq = it->seq;
    running.erase(it);
    if (!running.empty()) dirty.insert(k);
    finish_collective(w, gid, seq);
  }

  // `origin`: the rank whose death this one follows (CollectiveLibrary::peer_died), or -1.
  void crash(int rank, const std::string& message, int origin = -1) {
    auto& d = dead[static_cast<std::size_t>(rank)];
    if (d) return;
    set_computing(rank, false);
    d = 1;
    crashes.push_back(Crash{rank, workers.front().now, message});
    for (Group& g : groups) {
      if (g.position_of_rank[static_cast<std::size_t>(rank)] >= 0) ++g.dead_members;
    }
    for (int k = 0; k < kStreamsPerRank; ++k) {
      Stream& st = streams[Engine::stream_id(rank, static_cast<StreamKind>(k))];
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

  void crash_now(int rank, std::string message) override { crash(rank, message); }

  void price_change_at(Time at, std::function<void()> change) override {
    if (started) throw std::logic_error("a price change scheduled while the engine runs");
    if (!tracks_work_left()) track_in_flight();
    price_changes.push_back(std::move(change));
    push(at, EventKind::kPriceChange, 0, price_changes.size() - 1, nullptr);
  }

  // The first price change: the collectives already running outside the
  // sharing sets (their members all arrived as they were enqueued) are kept
  // with their work left from now on, each ending as before unless a change
  // reprices it; their kCollectiveDone events, and any later, are ignored.
  void track_in_flight() {
    for (GroupId gid = 0; gid < groups.size(); ++gid) {
      const Group& g = groups[gid];
      if (g.sharing >= 0) continue;
      for (const auto& [seq, rz] : g.open) {
        if (!rz.resolved || rz.stalled) continue;
        const Time alone = collective_time(g, rz);
        slowable.push_back(Slowable{gid, seq, 0, 1, rz.start, alone, false, ++pricing_version});
        push(rz.start + alone, EventKind::kSlowableDone, gid, slowable.back().version, nullptr);
      }
    }
  }

  // Price change `index` at `now`: each collective in flight keeps the
  // fraction of its work done at its last pricing's speed, and is priced
  // anew (outside the sharing sets once the instant's events have run, and
  // each sharing set with the others in flight).
  void change_prices(std::size_t index, Time now) {
    price_changes[index]();
    for (Slowable& c : slowable) {
      count_work_done(c, now);
      const Group& g = groups[c.group];
      c.alone = collective_time(g, g.open.at(c.seq));
      c.version = 0;
      speeds_dirty = true;
    }
    for (std::size_t k = 0; k < sharing_running.size(); ++k) {
      if (!sharing_running[k].empty()) dirty.insert(static_cast<int>(k));
    }
  }

  void link_down_at(int rank, Time at) override {
    push(at, EventKind::kLinkDown, static_cast<std::uint32_t>(rank), 0, nullptr);
  }

  // Whether a member of g has lost its link: its collectives never complete.
  bool cut_off(const Group& g) const {
    if (link_down.empty()) return false;
    return std::any_of(g.members.begin(), g.members.end(),
                       [this](int m) { return link_down[static_cast<std::size_t>(m)] != 0; });
  }

  // A collective of a cut-off group stalls where it is (at `now`, its
  // would-be end): its members wait in it, and the watchdog, if any, times
  // it out from its first arrival, or at once if that is past.
  void stall(GroupId gid, std::uint64_t seq, Rendezvous& rz, Time now) {
    rz.stalled = true;
    if (options.watchdog_timeout > Time::zero()) {
      deadlines.emplace(std::max(rz.earliest_arrival + options.watchdog_timeout, now), gid, seq);
    }
  }

  void crash_at(int rank, Time at, std::string message) override {
    crash_messages.push_back(std::move(message));
    push(at, EventKind::kCrash, static_cast<std::uint32_t>(rank), crash_messages.size() - 1, nullptr);
  }

  void finish_collective(Worker& w, GroupId gid, std::uint64_t seq) {
    Group& g = groups[gid];
    auto it = g.open.find(seq);
    assert(it != g.open.end());
    if (cut_off(g)) {  // a member's link went down while it ran
      stall(gid, seq, it->second, w.now);
      return;
    }
    Rendezvous rz = std::move(it->second);
    g.open.erase(it);
    const std::size_t n = g.members.size();
    for (std::size_t p = 0; p < n; ++p) {
      if (dead[static_cast<std::size_t>(g.members[p])]) continue;
      if (contends()) in_flight(g.members[p], -1, w.now);
      finish_head(w, Engine::stream_id(g.members[p], g.stream), rz.start, rz.arrival[p]);
    }
    spare_rendezvous.push_back(std::move(rz));
  }

  void dispatch(Engine& engine, Worker& w, const Event& ev) {
    ++w.events_run;
    working_events -= works(ev.kind);
    switch (ev.kind) {
      case EventKind::kOpDone:
        if (streams[ev.target].active && current_end(ev.target, ev.payload)) {
          finish_head(w, ev.target, streams[ev.target].start, Time{});
          if (ev.target % kStreamsPerRank == static_cast<std::uint32_t>(StreamKind::kCompute) && !streams[ev.target].active) {
            set_computing(static_cast<int>(ev.target / kStreamsPerRank), false);
          }
        }
        break;
      case EventKind::kCollectiveDone:
        if (price_changes.empty()) finish_collective(w, ev.target, ev.payload);  // else kept as a Slowable
        break;
      case EventKind::kWake:
        ev.process->on_wake(engine, ev.payload);
        break;
      case EventKind::kCrash:
        crash(static_cast<int>(ev.target), crash_messages[ev.payload]);
        break;
      case EventKind::kSharedDone:
        finish_shared(w, ev.target, ev.payload);
        break;
      case EventKind::kSlowableDone:
        finish_slowable(w, ev.target, ev.payload);
        break;
      case EventKind::kLinkDown:
        if (link_down.empty()) link_down.assign(static_cast<std::size_t>(world_size), 0);
        link_down[ev.target] = 1;
        break;
      case EventKind::kPriceChange:
        change_prices(static_cast<std::size_t>(ev.payload), w.now);
        break;
      case EventKind::kMemberDone:
        throw std::logic_error("time order: a rank-major event");
    }
  }

  // Only a live rank waiting in the collective can time out.
  bool someone_waits(GroupId group, std::uint64_t seq) const {
    const Group& g = groups[group];
    const auto it = g.open.find(seq);
    if (it == g.open.end()) return false;
    for (std::size_t p = 0; p < g.members.size(); ++p) {
      if (it->second.arrived[p] && !dead[static_cast<std::size_t>(g.members[p])]) return true;
    }
    return false;
  }

  // Whether the watchdog fires before `next` (the next event's time; none:
  // ever); if so, it ends the job at its deadline.
  bool watchdog_fires_before(std::optional<Time> next) {
    while (!deadlines.empty() && !someone_waits(std::get<1>(*deadlines.begin()), std::get<2>(*deadlines.begin()))) {
      deadlines.erase(deadlines.begin());
    }
    if (deadlines.empty()) return false;
    const auto [at, group, seq] = *deadlines.begin();
    if (next && !(at < *next)) return false;
    workers.front().now = at;
    watchdog_at = at;
    watchdog_collective = std::make_pair(group, seq);
    events.clear();
    working_events = 0;
    return true;
  }

  // Every event in (time, insertion) order until none is left or the
  // watchdog fires first; link-sharing collectives, and those slowed by
  // compute, repriced when the clock is to move on.
  RunSummary run(Engine& engine) override {
    Worker& first = workers.front();
    started = true;
    while (true) {
      if ((!dirty.empty() || speeds_dirty) && (events.empty() || first.now < events.earliest())) {
        if (speeds_dirty) reprice_slowable(first.now);
        if (!dirty.empty()) reprice(first.now);
      }
      if (working_events == 0 && !speeds_dirty && dirty.empty()) break;  // nothing left to do or to price
      if (watchdog_fires_before(events.earliest())) break;
      events.run_earliest([&](Time at, const Event& ev) {
        first.now = at;
        dispatch(engine, first, ev);
      });
    }
    if (!watchdog_at) watchdog_fires_before(std::nullopt);
    return summarise(first.now);
  }
};

}  // namespace
}  // namespace ddpsim::sim
