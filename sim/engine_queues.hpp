#pragma once
// Internal to sim/engine.cpp: the engine's queues. A stream's FIFO of
// operations (Op, OpQueue, Stream), time order's event queue and
// rank-major's per-rank one.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <cassert>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/engine.hpp"
#include "sim/small_list.hpp"

namespace ddpsim::sim {
namespace {  // internal linkage: see engine_core.hpp

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


// kMemberDone: kRankMajor's end of a collective for one member.
enum class EventKind : std::uint8_t { kOpDone, kCollectiveDone, kWake, kCrash, kMemberDone, kSharedDone, kSlowableDone, kLinkDown, kPriceChange };

struct Event {
  EventKind kind;
  std::uint32_t target;    // stream (kOpDone, kWake, kMemberDone), group (kCollectiveDone, kSharedDone, kSlowableDone) or rank (kCrash, kLinkDown); none (kPriceChange, its index the payload)
  std::uint64_t payload;   // group sequence number, wake token, crash message index, collective start (ns), pricing version (kSharedDone, kSlowableDone)
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

}  // namespace
}  // namespace ddpsim::sim
