#pragma once
// What a training program issues: operations on a rank's streams and
// collectives over a process group, to an OpSink. The engine (engine.hpp)
// runs them; a Recorder (levelized.hpp) keeps them as a program every rank
// runs. A program written against OpSink knows neither.

#include <cstdint>
#include <optional>
#include <string_view>

#include "sim/time.hpp"

namespace ddpsim::sim {

/// The streams of one rank. Each runs its operations one at a time, in the
/// order they were enqueued (FIFO, like a CUDA stream).
enum class StreamKind : std::uint8_t { kHost = 0, kCompute = 1, kComm = 2 };
inline constexpr int kStreamsPerRank = 3;
std::string_view to_string(StreamKind kind);

/// nccl-tests' definitions: `bytes` of an all_gather is the gathered whole
/// (bytes / W from each rank); of a reduce_scatter, the whole each rank
/// reduces (bytes / W left on each); of an all_to_all, each rank's whole
/// buffer (bytes / W to each rank); of a reduce, the buffer reduced to the root.
enum class CollectiveKind : std::uint8_t { kAllReduce, kBroadcast, kBarrier, kAllGather, kReduceScatter, kReduce, kAllToAll };
std::string_view to_string(CollectiveKind kind);

struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::int64_t bytes = 0;
  friend bool operator==(const Collective&, const Collective&) = default;
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

using GroupId = std::uint32_t;
/// Group 0: every rank, in rank order.
inline constexpr GroupId kWorldGroup = 0;

class OpSink {
 public:
  virtual ~OpSink() = default;
  /// Enqueues an operation of fixed duration on a rank's stream; it starts
  /// once every earlier op of that stream and `after` (if given) have ended.
  virtual OpRef enqueue(int rank, StreamKind stream, Time duration, OpLabel label, std::optional<OpRef> after) = 0;
  /// Enqueues a collective on the rank's communication stream. Collectives
  /// of a group are matched across ranks by per-group sequence number alone.
  virtual OpRef enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label,
                                   std::optional<OpRef> after) = 0;
  /// A delay that differs by rank (a straggler's), to be added to the next
  /// op's duration: the engine adds `delay` (this rank's) and returns it; a
  /// Recorder returns zero and marks the op as differing by rank.
  virtual Time per_rank(Time delay) { return delay; }

  OpRef enqueue(int rank, StreamKind stream, Time duration, OpLabel label) {
    return enqueue(rank, stream, duration, label, std::nullopt);
  }
  OpRef enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label) {
    return enqueue_collective(rank, group, collective, label, std::nullopt);
  }
};

}  // namespace ddpsim::sim
