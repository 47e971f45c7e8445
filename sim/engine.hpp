#pragma once
// The discrete-event engine: virtual ranks, each with a host, a compute and a
// communication stream, and collectives that rendezvous across a process
// group. It knows nothing about machine learning: a model issues operations
// and reads back what happened through an Observer.
//
// Ordering contract: events run in (time, insertion sequence) order, so the
// same calls in the same order give the same run, on any machine.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace ddpsim::sim {

/// The streams of one rank. Each runs its operations one at a time, in the
/// order they were enqueued (FIFO, like a CUDA stream).
enum class StreamKind : std::uint8_t { kHost = 0, kCompute = 1, kComm = 2 };
inline constexpr int kStreamsPerRank = 3;
std::string_view to_string(StreamKind kind);

enum class CollectiveKind : std::uint8_t { kAllReduce, kBroadcast, kBarrier };
std::string_view to_string(CollectiveKind kind);

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::int64_t bytes = 0;
};

/// The index-th operation enqueued on a stream (streams are numbered
/// rank * kStreamsPerRank + kind).
struct OpRef {
  std::uint32_t stream = 0;
  std::uint64_t index = 0;
};

/// Opaque to the engine: the model's name for an operation, echoed in records.
struct OpLabel {
  std::uint32_t tag = 0;
  std::uint32_t iteration = 0;
  std::uint32_t index = 0;
};

/// One finished operation, as observers see it.
struct OpRecord {
  int rank = 0;
  StreamKind stream = StreamKind::kHost;
  OpLabel label;
  Time ready;  ///< reached the head of its stream (previous op done)
  Time start;  ///< began executing (dependencies met; for a collective, all members arrived)
  Time end;
  std::optional<OpRef> after;  ///< the cross-stream dependency it waited for, if any
  bool is_collective = false;
  Collective collective;
  std::uint64_t group_seq = 0;  ///< per-group sequence number of the collective
  Time arrival;                 ///< joined the rendezvous (collectives only)
};

class Observer {
 public:
  virtual ~Observer() = default;
  /// Called when an operation ends, in event order.
  virtual void on_op(const OpRecord& record) = 0;
};

class Engine;

/// A program driving one or more streams; woken when an awaited op ends.
class Process {
 public:
  virtual ~Process() = default;
  virtual void on_wake(Engine& engine, std::uint64_t token) = 0;
};

/// Prices a collective over a group of the given size. Must be deterministic.
using CollectiveCostFn = std::function<Time(const Collective&, int group_size)>;

using GroupId = std::uint32_t;

/// Why a stream could not finish when the events ran out.
struct BlockedOp {
  int rank = 0;
  StreamKind stream = StreamKind::kHost;
  OpLabel label;
  Time since;                  ///< when the op reached the head of its stream
  bool in_rendezvous = false;  ///< true: waits for other members of a collective
  GroupId group = 0;
  std::uint64_t group_seq = 0;
  Collective collective;
  std::vector<int> missing_ranks;  ///< members that never issued this collective
  std::optional<OpRef> waits_for;  ///< dependency-blocked: the op it waits for
};

struct RunSummary {
  Time end;                     ///< time of the last event
  std::uint64_t events = 0;     ///< events processed
  std::uint64_t rank_ops = 0;   ///< operations completed, summed over ranks
  std::vector<BlockedOp> blocked;  ///< empty unless the run hung
  bool hung() const { return !blocked.empty(); }
};

class Engine {
 public:
  Engine(int world_size, CollectiveCostFn cost);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int world_size() const;
  Time now() const;
  /// Group 0: every rank, in rank order.
  static constexpr GroupId kWorld = 0;

  /// Observers are not owned and must outlive run().
  void add_observer(Observer& observer);

  /// Enqueues an operation of fixed duration on a rank's stream; it starts
  /// once every earlier op of that stream and `after` (if given) have ended.
  OpRef enqueue(int rank, StreamKind stream, Time duration, OpLabel label,
                std::optional<OpRef> after = std::nullopt);
  /// Enqueues a collective on the rank's communication stream. Collectives
  /// of a group are matched across ranks by per-group sequence number alone;
  /// one starts when every member has reached it, and lasts the cost model's time.
  OpRef enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label,
                           std::optional<OpRef> after = std::nullopt);
  /// Wakes `process` with `token` when `op` ends (at once, as an event, if it has).
  void wake_when_done(OpRef op, Process& process, std::uint64_t token);

  /// Runs until no event remains. Streams still holding operations then are
  /// reported as blocked: the simulation hung.
  RunSummary run();

  static std::uint32_t stream_id(int rank, StreamKind kind) {
    return static_cast<std::uint32_t>(rank) * kStreamsPerRank + static_cast<std::uint32_t>(kind);
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddpsim::sim
