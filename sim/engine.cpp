#include "sim/engine.hpp"

#include <array>
#include <atomic>
#include <cassert>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/small_list.hpp"

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

namespace {

// One queued operation: 48 bytes, since a stream's queue is the per-rank
// state the engine touches most (a plain op keeps its duration in `value`,
// a collective its byte count).
struct Op {
  std::int64_t value = 0;
  std::uint64_t after_index = 0;
  std::uint64_t group_seq = 0;
  OpLabel label;
  std::uint32_t after_stream = 0;
  GroupId group = 0;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  bool is_collective = false;
  bool has_after = false;

  static void plain(Op& op, Time duration, OpLabel label, const std::optional<OpRef>& after) {
    op = Op{};
    op.value = duration.count_ns();
    op.label = label;
    op.set_after(after);
  }
  static void collective_op(Op& op, Collective c, GroupId group, std::uint64_t seq, OpLabel label,
                            const std::optional<OpRef>& after) {
    op = Op{};
    op.value = c.bytes;
    op.kind = c.kind;
    op.is_collective = true;
    op.group = group;
    op.group_seq = seq;
    op.label = label;
    op.set_after(after);
  }
  void set_after(const std::optional<OpRef>& ref) {
    has_after = ref.has_value();
    if (ref) {
      after_stream = ref->stream;
      after_index = ref->index;
    }
  }
  Time duration() const { return is_collective ? Time{} : Time::ns(value); }
  Collective collective() const { return is_collective ? Collective{kind, value} : Collective{}; }
  std::optional<OpRef> after() const {
    if (!has_after) return std::nullopt;
    return OpRef{after_stream, after_index};
  }
};
static_assert(sizeof(Op) <= 48);

struct Wake {
  std::uint64_t index;
  Process* process;
  std::uint64_t token;
};

// A FIFO that reuses its storage: streams push and pop one op at a time,
// and std::deque would allocate and free a chunk every few operations. The
// first kInline ops live in the queue itself, so a rank's streams, queues
// included, are one block of the streams array and a sweep over the ranks
// reads memory in order.
class OpQueue {
 public:
  static constexpr std::uint32_t kInline = 8;
  bool empty() const { return size_ == 0; }
  Op& front() { return data()[head_]; }
  const Op& front() const { return data()[head_]; }
  /// Appends a slot for the caller to fill in place: an op built on the
  /// stack and copied in is read back in wide loads just after its fields'
  /// narrow stores, which the store buffer cannot forward (5 to 7 % of a
  /// run, bench/README.md#profile-callgrind).
  Op& push_back() {
    if (size_ == capacity()) grow();
    Op& slot = data()[(head_ + size_) & (capacity() - 1)];
    ++size_;
    return slot;
  }
  void pop_front() {
    head_ = (head_ + 1) & (capacity() - 1);
    --size_;
  }
  void clear() {
    spill_ = std::vector<Op>();
    head_ = size_ = 0;
  }

 private:
  Op* data() { return spill_.empty() ? inline_.data() : spill_.data(); }
  const Op* data() const { return spill_.empty() ? inline_.data() : spill_.data(); }
  std::uint32_t capacity() const { return spill_.empty() ? kInline : static_cast<std::uint32_t>(spill_.size()); }
  void grow() {
    std::vector<Op> bigger(std::size_t{capacity()} * 2);
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = data()[(head_ + i) & (capacity() - 1)];
    spill_.swap(bigger);
    head_ = 0;
  }
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
  std::vector<Op> spill_;  // empty, or all the ops once more than kInline were queued; a power of two
  std::array<Op, kInline> inline_;
};

// What every event reads (counters, flags, the queue's head and size) is
// the stream's first cache line; the queued ops follow, then the lists that
// `has_listeners` says whether to look at. Once the ranks outnumber the
// cache, each line an event reads is a miss.
struct alignas(64) Stream {
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  Time head_since;
  Time start;
  bool active = false;             // the head op started: executing, or in a rendezvous
  bool registered_waiter = false;  // the head op sits in another stream's waiters
  bool has_listeners = false;      // false: waiters and wakes are empty
  OpQueue pending;
  SmallList<std::uint32_t, 2> waiters;  // streams whose head op waits for one of ours
  SmallList<Wake, 1> wakes;
};

struct Rendezvous {
  std::vector<Time> arrival;  // by member position
  std::vector<char> arrived;
  // What each member issued. While every arrival matches the first
  // (`uniform`, the usual case) these stay empty and `first`/`first_label`
  // speak for all; the first disagreement fills them in.
  std::vector<Collective> collectives;
  std::vector<OpLabel> labels;
  bool uniform = true;
  Collective first;
  OpLabel first_label;
  int recorded = 0;  // members that reached it
  int count = 0;     // of those, the ones that wait in it (not one that dies as it arrives: CollectiveLibrary::peer_died)
  Time start;
  // The first and the last arrival in time: the watchdog's deadline runs from
  // the first, the collective starts at the last.
  Time earliest_arrival, last_arrival;
  bool stalled = false;
  // kRankMajor: resolved, it ends at `done_at` (each member learns it in the next sweep).
  bool resolved = false;
  Time done_at;

  void reset(std::size_t members) {
    arrival.assign(members, Time{});
    arrived.assign(members, 0);
    collectives.clear();
    labels.clear();
    uniform = true;
    recorded = count = 0;
    stalled = resolved = false;
  }
  void record(std::size_t pos, Collective c, OpLabel l, Time at) {
    if (recorded == 0) {
      first = c;
      first_label = l;
    } else if (uniform && !(same(c, first) && same(l, first_label))) {
      uniform = false;
      collectives.assign(arrived.size(), Collective{});
      labels.assign(arrived.size(), OpLabel{});
      for (std::size_t p = 0; p < arrived.size(); ++p) {
        if (arrived[p]) {
          collectives[p] = first;
          labels[p] = first_label;
        }
      }
    }
    if (!uniform) {
      collectives[pos] = c;
      labels[pos] = l;
    }
    arrival[pos] = at;
    arrived[pos] = 1;
    if (recorded == 0 || at < earliest_arrival) earliest_arrival = at;
    if (recorded == 0 || last_arrival < at) last_arrival = at;
    ++recorded;
  }
  /// What the member at `pos` issued (nothing yet: a default Collective).
  Collective collective_of(std::size_t pos) const {
    if (!uniform) return collectives[pos];
    return arrived[pos] ? first : Collective{};
  }
  OpLabel label_of(std::size_t pos) const {
    if (!uniform) return labels[pos];
    return arrived[pos] ? first_label : OpLabel{};
  }
  static bool same(Collective a, Collective b) { return a.kind == b.kind && a.bytes == b.bytes; }
  static bool same(OpLabel a, OpLabel b) { return a.tag == b.tag && a.iteration == b.iteration && a.index == b.index; }
};

struct Group {
  std::vector<int> members;           // ranks, in the order given (the world: ascending)
  std::vector<int> position_of_rank;  // -1 for non-members
  std::vector<std::uint64_t> issued;  // per member: collectives issued so far
  std::map<std::uint64_t, Rendezvous> open;
  int dead_members = 0;
};

// kMemberDone: kRankMajor's end of a collective for one member.
enum class EventKind : std::uint8_t { kOpDone, kCollectiveDone, kWake, kCrash, kMemberDone };

struct Event {
  EventKind kind;
  std::uint32_t target;    // stream (kOpDone, kWake, kMemberDone), group (kCollectiveDone) or rank (kCrash)
  std::uint64_t payload;   // group sequence number, wake token, crash message index, collective start (ns)
  Process* process;        // kWake only
};

// kRankMajor: one rank's pending events, in (time, insertion) order. A
// rank has a few at a time (an op per busy stream, a wake, a collective's
// end), so they live in place, latest first: the next to run is the last,
// and a new event goes in front of those at its time or earlier, which
// keeps insertion order among equal times. It is written in place, not
// built and copied in (narrow stores read back wide stall, as for ops).
class RankQueue {
 public:
  struct Entry {
    Time at;
    Event event;
  };
  bool empty() const { return list_.empty(); }
  void push(Time at, EventKind kind, std::uint32_t target, std::uint64_t payload, Process* process) {
    list_.push_back(Entry{});
    std::size_t i = list_.size() - 1;
    for (; i > 0 && !(at < list_[i - 1].at); --i) list_[i] = list_[i - 1];
    Entry& e = list_[i];
    e.at = at;
    e.event.kind = kind;
    e.event.target = target;
    e.event.payload = payload;
    e.event.process = process;
  }
  Entry pop() {
    const Entry next = list_[list_.size() - 1];
    list_.pop_back();
    return next;
  }

 private:
  SmallList<Entry, 4> list_;
};

// Pending events, ordered by (time, insertion). Events that share a time
// share a bucket, appended in insertion order: symmetric ranks finish their
// ops at the same instants, so most pushes are an append, not a heap sift.
class EventQueue {
 public:
  bool empty() const { return buckets_.empty(); }
  Time earliest() const { return buckets_.begin()->first; }
  void clear() {
    buckets_.clear();
    last_ = buckets_.end();
  }
  void push(Time at, const Event& ev) {
    // Pushes come in runs to one instant: remember the last bucket used.
    if (last_ != buckets_.end() && last_->first == at) {
      last_->second.push_back(ev);
      return;
    }
    auto it = buckets_.find(at);
    if (it == buckets_.end()) {
      std::vector<Event> fresh;
      if (!spare_.empty()) {
        fresh.swap(spare_.back());
        spare_.pop_back();
      }
      it = buckets_.emplace(at, std::move(fresh)).first;
    }
    it->second.push_back(ev);
    last_ = it;
  }
  /// Runs `fn(time, event)` for every event of the earliest bucket, including
  /// events appended to that bucket while it runs.
  template <class Fn>
  void run_earliest(Fn&& fn) {
    auto it = buckets_.begin();
    const Time at = it->first;
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const Event ev = it->second[i];  // copy: fn may append and reallocate
      fn(at, ev);
    }
    it->second.clear();
    spare_.push_back(std::move(it->second));
    if (last_ == it) last_ = buckets_.end();
    buckets_.erase(it);
  }

 private:
  std::map<Time, std::vector<Event>> buckets_;
  std::map<Time, std::vector<Event>>::iterator last_ = buckets_.end();
  std::vector<std::vector<Event>> spare_;
};

// kRankMajor: a member reaching a collective, recorded between sweeps.
struct Arrival {
  int rank;
  GroupId group;
  std::uint64_t seq;
  Collective collective;
  OpLabel label;
  Time at;
};

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

// A barrier for a sweep's threads, which meet every few hundred
// microseconds: waiting spins a while before it sleeps (std::barrier's
// futex wake-up alone costs tens of microseconds in a virtual machine).
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n), left_(n) {}
  void arrive_and_wait() {
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      left_.store(n_, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);
      phase_.notify_all();
      return;
    }
    for (int spin = 0; spin < kSpins; ++spin) {
      if (phase_.load(std::memory_order_acquire) != phase) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    while (phase_.load(std::memory_order_acquire) == phase) phase_.wait(phase, std::memory_order_acquire);
  }

 private:
  static constexpr int kSpins = 1 << 14;
  const int n_;
  std::atomic<int> left_;
  std::atomic<unsigned> phase_{0};
};

// Runs body(0) .. body(n - 1) at once: body(0) on the calling thread, the
// others on threads kept for the pool's life. `body` must not throw.
class SweepPool {
 public:
  explicit SweepPool(int n) : start_(n), done_(n) {
    for (int i = 1; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
  }
  ~SweepPool() {
    stop_ = true;
    start_.arrive_and_wait();
    for (std::thread& t : threads_) t.join();
  }
  SweepPool(const SweepPool&) = delete;
  SweepPool& operator=(const SweepPool&) = delete;
  void run(const std::function<void(int)>& body) {
    body_ = &body;
    start_.arrive_and_wait();
    body(0);
    done_.arrive_and_wait();
  }

 private:
  void loop(int i) {
    for (;;) {
      start_.arrive_and_wait();
      if (stop_) return;
      (*body_)(i);
      done_.arrive_and_wait();
    }
  }
  SpinBarrier start_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* body_ = nullptr;  // written before start_, read after it
  bool stop_ = false;                                // likewise
};

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
      push(w.now + op.duration(), EventKind::kOpDone, s, 0);
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
      finish_head(w, stream_id(g.members[p], StreamKind::kComm), rz.start, rz.arrival[p]);
    }
    spare_rendezvous.push_back(std::move(rz));
  }

  void dispatch(Engine& engine, Worker& w, const Event& ev) {
    ++w.events_run;
    switch (ev.kind) {
      case EventKind::kOpDone:
        if (streams[ev.target].active) finish_head(w, ev.target, streams[ev.target].start, Time{});
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

Engine::Engine(int world_size, CollectiveCostFn cost, EngineOptions options) : impl_(std::make_unique<Impl>()) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  if (!cost) throw std::invalid_argument("a collective cost model is required");
  if (options.watchdog_timeout < Time::zero()) throw std::invalid_argument("watchdog timeout is negative");
  if (options.threads < 1) throw std::invalid_argument("the engine needs at least one thread");
  impl_->world_size = world_size;
  impl_->cost = std::move(cost);
  impl_->options = options;
  impl_->library = options.library != nullptr ? options.library : &plain_library();
  impl_->dead.assign(static_cast<std::size_t>(world_size), 0);
  impl_->streams.resize(static_cast<std::size_t>(world_size) * kStreamsPerRank);
  const bool major = options.schedule == Schedule::kRankMajor;
  impl_->workers.resize(major ? static_cast<std::size_t>(std::min(options.threads, world_size)) : 1);
  for (Worker& w : impl_->workers) w.owner = impl_.get();
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

RunSummary Engine::run() {
  Impl& m = *impl_;
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
  if (m.rank_major()) {
    if (!m.needs_time_order) {
      m.running = true;
      try {
        m.run_rank_major(*this);
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
    if (m.needs_time_order) {
      RunSummary stopped;
      stopped.needs_time_order = m.needs_time_order;
      return stopped;
    }
  } else {
    while (!m.events.empty()) {
      if (watchdog_fires_before(m.events.earliest())) break;
      m.events.run_earliest([&](Time at, const Event& ev) {
        first.now = at;
        m.dispatch(*this, first, ev);
      });
    }
    if (!m.watchdog_at) watchdog_fires_before(std::nullopt);
  }
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

}  // namespace ddpsim::sim
