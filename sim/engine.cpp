#include "sim/engine.hpp"

#include <cassert>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

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
  }
  return "?";
}

namespace {

struct Op {
  Time duration;
  OpLabel label;
  std::optional<OpRef> after;
  bool is_collective = false;
  Collective collective;
  GroupId group = 0;
  std::uint64_t group_seq = 0;
};

struct Wake {
  std::uint64_t index;
  Process* process;
  std::uint64_t token;
};

// A FIFO that reuses its storage: streams push and pop one op at a time,
// and std::deque would allocate and free a chunk every few operations.
class OpQueue {
 public:
  bool empty() const { return size_ == 0; }
  Op& front() { return buf_[head_]; }
  const Op& front() const { return buf_[head_]; }
  std::size_t size() const { return size_; }
  void push_back(const Op& op) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = op;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }

 private:
  void grow() {
    std::vector<Op> bigger(buf_.empty() ? 4 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<Op> buf_;  // capacity is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

struct Stream {
  OpQueue pending;
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  bool active = false;             // the head op started: executing, or in a rendezvous
  bool registered_waiter = false;  // the head op sits in another stream's waiters
  Time head_since;
  Time start;
  std::vector<std::uint32_t> waiters;  // streams whose head op waits for one of ours
  std::vector<Wake> wakes;
};

struct Rendezvous {
  std::vector<Time> arrival;  // by member position
  std::vector<char> arrived;
  int count = 0;
  Collective collective;
  Time start;
};

struct Group {
  std::vector<int> members;           // ranks, ascending
  std::vector<int> position_of_rank;  // -1 for non-members
  std::vector<std::uint64_t> issued;  // per member: collectives issued so far
  std::map<std::uint64_t, Rendezvous> open;
};

enum class EventKind : std::uint8_t { kOpDone, kCollectiveDone, kWake };

struct Event {
  EventKind kind;
  std::uint32_t target;    // stream (kOpDone) or group (kCollectiveDone)
  std::uint64_t payload;   // group sequence number or wake token
  Process* process;        // kWake only
};

// Pending events, ordered by (time, insertion). Events that share a time
// share a bucket, appended in insertion order: symmetric ranks finish their
// ops at the same instants, so most pushes are an append, not a heap sift.
class EventQueue {
 public:
  bool empty() const { return buckets_.empty(); }
  std::size_t pushed() const { return pushed_; }
  void push(Time at, const Event& ev) {
    ++pushed_;
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
    buckets_.erase(it);
  }

 private:
  std::map<Time, std::vector<Event>> buckets_;
  std::vector<std::vector<Event>> spare_;
  std::size_t pushed_ = 0;
};

}  // namespace

struct Engine::Impl {
  int world_size;
  CollectiveCostFn cost;
  std::vector<Observer*> observers;
  std::vector<Stream> streams;
  std::vector<Group> groups;
  EventQueue events;
  std::vector<std::uint32_t> scratch;  // reused by finish_head
  Time now;
  std::uint64_t events_run = 0;
  std::uint64_t rank_ops = 0;

  void push(Time at, EventKind kind, std::uint32_t target, std::uint64_t payload,
            Process* process = nullptr) {
    events.push(at, Event{kind, target, payload, process});
  }

  bool is_done(const OpRef& ref) const { return streams[ref.stream].completed > ref.index; }

  void try_start(std::uint32_t s) {
    Stream& st = streams[s];
    if (st.active || st.pending.empty()) return;
    const Op& op = st.pending.front();
    if (op.after && !is_done(*op.after)) {
      if (!st.registered_waiter) {
        streams[op.after->stream].waiters.push_back(s);
        st.registered_waiter = true;
      }
      return;
    }
    st.active = true;
    st.start = now;
    if (!op.is_collective) {
      push(now + op.duration, EventKind::kOpDone, s, 0);
      return;
    }
    Group& g = groups[op.group];
    const int rank = static_cast<int>(s / kStreamsPerRank);
    const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(rank)]);
    auto [it, fresh] = g.open.try_emplace(op.group_seq);
    Rendezvous& rz = it->second;
    if (fresh) {
      rz.arrival.assign(g.members.size(), Time{});
      rz.arrived.assign(g.members.size(), 0);
      rz.collective = op.collective;
    }
    rz.arrival[pos] = now;
    rz.arrived[pos] = 1;
    if (++rz.count == static_cast<int>(g.members.size())) {
      rz.start = now;
      const Time duration = cost(rz.collective, static_cast<int>(g.members.size()));
      if (duration < Time::zero()) throw std::logic_error("collective cost model returned a negative time");
      push(now + duration, EventKind::kCollectiveDone, op.group, op.group_seq);
    }
  }

  // Ends the head op of stream s, which started at `start`.
  void finish_head(std::uint32_t s, Time start, Time arrival) {
    Stream& st = streams[s];
    assert(st.active && !st.pending.empty());
    const Op op = std::move(st.pending.front());
    st.pending.pop_front();
    if (!observers.empty()) {
      OpRecord rec;
      rec.rank = static_cast<int>(s / kStreamsPerRank);
      rec.stream = static_cast<StreamKind>(s % kStreamsPerRank);
      rec.label = op.label;
      rec.ready = st.head_since;
      rec.start = start;
      rec.end = now;
      rec.after = op.after;
      rec.is_collective = op.is_collective;
      rec.collective = op.collective;
      rec.group_seq = op.group_seq;
      rec.arrival = arrival;
      for (Observer* o : observers) o->on_op(rec);
    }
    ++st.completed;
    ++rank_ops;
    st.active = false;
    st.head_since = now;
    if (!st.wakes.empty()) {
      std::erase_if(st.wakes, [&](const Wake& w) {
        if (w.index >= st.completed) return false;
        push(now, EventKind::kWake, 0, w.token, w.process);
        return true;
      });
    }
    if (!st.waiters.empty()) {
      // try_start may register waiters on this stream again: hand it an
      // empty list, keeping both buffers' capacity.
      scratch.swap(st.waiters);
      for (std::uint32_t w : scratch) {
        streams[w].registered_waiter = false;
        try_start(w);
      }
      scratch.clear();
    }
    try_start(s);
  }

  void finish_collective(GroupId gid, std::uint64_t seq) {
    Group& g = groups[gid];
    auto it = g.open.find(seq);
    assert(it != g.open.end());
    const Rendezvous rz = std::move(it->second);
    g.open.erase(it);
    for (std::size_t p = 0; p < g.members.size(); ++p) {
      finish_head(stream_id(g.members[p], StreamKind::kComm), rz.start, rz.arrival[p]);
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
    b.collective = op.collective;
    b.group = op.group;
    b.group_seq = op.group_seq;
    if (op.is_collective && st.active) {
      b.in_rendezvous = true;
      const Group& g = groups[op.group];
      const Rendezvous& rz = g.open.at(op.group_seq);
      for (std::size_t p = 0; p < g.members.size(); ++p) {
        if (!rz.arrived[p]) b.missing_ranks.push_back(g.members[p]);
      }
    } else {
      b.waits_for = op.after;
    }
    return b;
  }
};

Engine::Engine(int world_size, CollectiveCostFn cost) : impl_(std::make_unique<Impl>()) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  if (!cost) throw std::invalid_argument("a collective cost model is required");
  impl_->world_size = world_size;
  impl_->cost = std::move(cost);
  impl_->streams.resize(static_cast<std::size_t>(world_size) * kStreamsPerRank);
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
Time Engine::now() const { return impl_->now; }
void Engine::add_observer(Observer& observer) { impl_->observers.push_back(&observer); }

OpRef Engine::enqueue(int rank, StreamKind kind, Time duration, OpLabel label,
                      std::optional<OpRef> after) {
  if (rank < 0 || rank >= impl_->world_size) throw std::out_of_range("rank out of range");
  if (duration < Time::zero()) throw std::invalid_argument("operation duration is negative");
  if (after && (after->stream >= impl_->streams.size() ||
                after->index >= impl_->streams[after->stream].enqueued)) {
    throw std::invalid_argument("dependency on an operation that was never enqueued");
  }
  const std::uint32_t s = stream_id(rank, kind);
  Stream& st = impl_->streams[s];
  if (st.pending.empty() && !st.active) st.head_since = impl_->now;
  st.pending.push_back(Op{duration, label, after, false, {}, 0, 0});
  const OpRef ref{s, st.enqueued++};
  impl_->try_start(s);
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
  if (after && (after->stream >= impl_->streams.size() ||
                after->index >= impl_->streams[after->stream].enqueued)) {
    throw std::invalid_argument("dependency on an operation that was never enqueued");
  }
  const auto pos = static_cast<std::size_t>(g.position_of_rank[static_cast<std::size_t>(rank)]);
  const std::uint32_t s = stream_id(rank, StreamKind::kComm);
  Stream& st = impl_->streams[s];
  if (st.pending.empty() && !st.active) st.head_since = impl_->now;
  st.pending.push_back(Op{Time{}, label, after, true, collective, group, g.issued[pos]++});
  const OpRef ref{s, st.enqueued++};
  impl_->try_start(s);
  return ref;
}

void Engine::wake_when_done(OpRef op, Process& process, std::uint64_t token) {
  if (op.stream >= impl_->streams.size() || op.index >= impl_->streams[op.stream].enqueued) {
    throw std::invalid_argument("wake on an operation that was never enqueued");
  }
  if (impl_->is_done(op)) {
    impl_->push(impl_->now, EventKind::kWake, 0, token, &process);
  } else {
    impl_->streams[op.stream].wakes.push_back(Wake{op.index, &process, token});
  }
}

RunSummary Engine::run() {
  Impl& m = *impl_;
  while (!m.events.empty()) {
    m.events.run_earliest([&](Time at, const Event& ev) {
      m.now = at;
      ++m.events_run;
      switch (ev.kind) {
        case EventKind::kOpDone:
          m.finish_head(ev.target, m.streams[ev.target].start, Time{});
          break;
        case EventKind::kCollectiveDone:
          m.finish_collective(ev.target, ev.payload);
          break;
        case EventKind::kWake:
          ev.process->on_wake(*this, ev.payload);
          break;
      }
    });
  }
  RunSummary summary;
  summary.end = m.now;
  summary.events = m.events_run;
  summary.rank_ops = m.rank_ops;
  for (std::uint32_t s = 0; s < m.streams.size(); ++s) {
    if (!m.streams[s].pending.empty()) summary.blocked.push_back(m.describe_blocked(s));
  }
  return summary;
}

}  // namespace ddpsim::sim
