#pragma once
// Internal to sim/engine.cpp: Schedule::kRankMajor. Each rank runs its own
// events until it waits in a collective (a sweep, on several threads); the
// collectives reached are then recorded and resolved on one thread (a
// merge), and so on until a sweep runs nothing. It is exact for a job whose
// collectives always complete: what it cannot simulate (members that
// disagree, a crash, the watchdog firing, compute slowed by communication)
// stops it, and the run is returned as RunSummary::needs_time_order.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine_core.hpp"
#include "sim/sweep_pool.hpp"

namespace ddpsim::sim {
namespace {  // internal linkage: see engine_core.hpp

// Thrown inside a rank-major run at what only time order simulates, and
// caught by RankMajor::run, which returns it as RunSummary::needs_time_order.
class NeedsTimeOrder : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RankMajor final : Machine<RankMajor> {
  // Each rank's events; the rendezvous it waits in (map nodes stay put;
  // `arriving` until the sweep ends); those resolved at the last merge,
  // delivered to every member since.
  std::vector<RankQueue> rank_events;
  std::vector<Rendezvous*> waiting;
  Rendezvous arriving;
  std::vector<std::pair<GroupId, std::uint64_t>> resolved;
  std::unique_ptr<SweepPool> pool;
  // Set while run() runs; before it, what needs time order is noted here.
  bool running = false;
  std::optional<std::string> needs_time_order;

  RankMajor(int world_size_, CollectiveCostFn cost_, const EngineOptions& options_)
      : Machine(world_size_, std::move(cost_), options_,
                static_cast<std::size_t>(std::min(options_.threads, world_size_))),
        rank_events(static_cast<std::size_t>(world_size_)), waiting(static_cast<std::size_t>(world_size_), nullptr) {
    // A compute op's end would depend on when other ranks' arrivals start collectives.
    if (options.compute_slowdown > 0) needs_time_order = "compute slowed by communication couples a rank's streams to every collective's start";
    if (options.comm_slowdown > 0) needs_time_order = "communication slowed by compute couples a collective's end to every member's compute";
  }

  void push(Time at, EventKind kind, std::uint32_t target, std::uint64_t payload, Process* process) {
    // Every event of this schedule names a stream; it is its rank's.
    rank_events[target / kStreamsPerRank].push(at, kind, target, payload, process);
  }

  // Each rank's work stays on that rank.
  void check_local(const Worker& w, int rank, const std::optional<OpRef>& after) const {
    if (w.running_rank >= 0 && rank != w.running_rank) {
      throw std::logic_error("rank-major schedule: a process woken on one rank enqueued on another");
    }
    if (after && static_cast<int>(after->stream / kStreamsPerRank) != rank) {
      throw std::logic_error("rank-major schedule: an operation depends on another rank's");
    }
  }

  void start_compute(Worker& w, std::uint32_t s, Time duration) {
    push(w.now + duration, EventKind::kOpDone, s, 0, nullptr);
  }

  // Recorded when the sweep ends (merge): the rendezvous is shared.
  void arrive(Worker& w, std::uint32_t s, const Op& op) {
    const int rank = static_cast<int>(s / kStreamsPerRank);
    w.arrivals.push_back(Arrival{rank, op.group, op.group_seq, op.collective(), op.label, w.now});
    waiting[static_cast<std::size_t>(rank)] = &arriving;
  }

  // Records the collectives reached in the last sweep, in rank order, and
  // resolves those every member has reached.
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
        resolve(a.group, a.seq, rz);
        resolved.emplace_back(a.group, a.seq);
      }
      w.arrivals.clear();
    }
  }

  // Every member arrived: the collective ends at done_at, which each member
  // learns in the next sweep (deliver).
  void resolve(GroupId gid, std::uint64_t seq, Rendezvous& rz) {
    if (!rz.uniform) throw NeedsTimeOrder(fmt::format("collective #{} of group {}: its members disagree", seq, gid));
    rz.start = rz.last_arrival;
    const Time duration = collective_time(groups[gid], rz);
    // In time order the watchdog would have fired while the first member waited.
    if (options.watchdog_timeout > Time::zero() && rz.earliest_arrival + options.watchdog_timeout < rz.last_arrival) {
      throw NeedsTimeOrder(fmt::format("collective #{} of group {}: the watchdog fires", seq, gid));
    }
    rz.resolved = true;
    rz.done_at = rz.start + duration;
  }

  // If the rendezvous rank r waits in has resolved, queues its end on r's
  // communication stream and says so.
  bool deliver(int r) {
    const Rendezvous& rz = *waiting[static_cast<std::size_t>(r)];
    if (!rz.resolved) return false;
    waiting[static_cast<std::size_t>(r)] = nullptr;
    push(rz.done_at, EventKind::kMemberDone, Engine::stream_id(r, StreamKind::kComm),
         static_cast<std::uint64_t>(rz.start.count_ns()), nullptr);
    return true;
  }

  void crash_now(int rank, std::string message) override {
    if (running) throw NeedsTimeOrder(fmt::format("rank {} crashed: {}", rank, message));
    if (!needs_time_order) needs_time_order = fmt::format("rank {} crashed: {}", rank, message);
  }

  void crash_at(int rank, Time, std::string) override {
    if (running) throw NeedsTimeOrder(fmt::format("rank {} is to crash", rank));
    if (!needs_time_order) needs_time_order = fmt::format("rank {} is to crash", rank);
  }

  void link_down_at(int rank, Time) override {
    if (running) throw NeedsTimeOrder(fmt::format("rank {}'s link is to go down", rank));
    if (!needs_time_order) needs_time_order = fmt::format("rank {}'s link is to go down", rank);
  }

  void price_change_at(Time at, std::function<void()>) override {
    const std::string why = fmt::format("the collectives' prices change at {:.3f} ms", at.ms());
    if (running) throw NeedsTimeOrder(why);
    if (!needs_time_order) needs_time_order = why;
  }

  void dispatch(Engine& engine, Worker& w, const Event& ev) {
    ++w.events_run;
    switch (ev.kind) {
      case EventKind::kOpDone:
        if (streams[ev.target].active) finish_head(w, ev.target, streams[ev.target].start, Time{});
        break;
      case EventKind::kMemberDone:  // the comm stream's start is this member's arrival
        finish_head(w, ev.target, Time::ns(static_cast<std::int64_t>(ev.payload)), streams[ev.target].start);
        break;
      case EventKind::kWake:
        ev.process->on_wake(engine, ev.payload);
        break;
      case EventKind::kCollectiveDone:
      case EventKind::kCrash:
      case EventKind::kSharedDone:
      case EventKind::kSlowableDone:
      case EventKind::kLinkDown:
      case EventKind::kPriceChange:
        throw std::logic_error("rank-major schedule: a time-order event");
    }
  }

  // Rank r runs its events until it waits in a collective.
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

  // Sweeps the ranks, each worker a contiguous range of them in order, then
  // records the collectives they reached (merge), until a sweep runs
  // nothing. With one world group a sweep brings every rank to the next
  // collective, and the merge resolves it: a rank's state is hot while it
  // runs and the ranks are walked in memory order. Workers share nothing a
  // sweep writes but their ranks' state; what ranks share (rendezvous)
  // changes only in the merge, on one thread.
  void sweeps(Engine& engine) {
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
    // A collective still open: the watchdog ends the job, at a time only the global order gives.
    if (options.watchdog_timeout > Time::zero()) {
      for (const Group& g : groups) {
        if (!g.open.empty()) throw NeedsTimeOrder("a collective never completes and the watchdog is on");
      }
    }
  }

  // One collective in flight a rank is what the sweeps follow.
  void on_add_group(const Group& g) override {
    if (g.stream != StreamKind::kComm) needs_time_order = "a process group on a stream of its own";
  }

  void on_add_sharing() override { needs_time_order = "process groups that share links"; }

  RunSummary run(Engine& engine) override {
    if (!needs_time_order) {
      running = true;
      try {
        sweeps(engine);
      } catch (const NeedsTimeOrder& e) {
        needs_time_order = e.what();
      }
      running = false;
    }
    if (needs_time_order) {
      RunSummary stopped;
      stopped.needs_time_order = needs_time_order;
      return stopped;
    }
    Time end = workers.front().now;
    for (const Worker& w : workers) end = max(end, w.latest);
    workers.front().now = end;
    return summarise(end);
  }
};

}  // namespace
}  // namespace ddpsim::sim
