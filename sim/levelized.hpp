#pragma once
// Levelized evaluation: when every rank issues the same operations (only
// some durations differ by rank), the engine's event graph can be evaluated
// operation by operation, each across all ranks, instead of event by event.
// Every time is the same maximum of earlier ends and arrivals the engine
// takes (engine.hpp: ready, start, end, arrival), so the results are
// exactly the engine's; the cost is a pass over per-rank arrays per
// operation, in memory order, whatever the number of ranks
// (docs/cost-models.md#levelized-evaluation).

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "sim/engine.hpp"

namespace ddpsim::sim {

/// One operation of a program every rank runs.
struct ProgramOp {
  StreamKind stream = StreamKind::kHost;
  bool is_collective = false;
  Collective collective;  ///< over the world group
  OpLabel label;
  Time duration;          ///< non-collectives; plus LevelizedOptions::extra when per_rank
  std::int32_t after = -1;  ///< an earlier op of the program it depends on; -1: none
  bool per_rank = false;
};

/// Ops are issued in runs, as a process enqueues them when it wakes: a
/// step's ops all at once, when the op `issued_after` (of an earlier step)
/// ends on that rank, or at time zero.
struct ProgramStep {
  std::size_t end = 0;             ///< the step's ops are [previous step's end, end)
  std::int32_t issued_after = -1;  ///< -1: at time zero
  std::int32_t waits_for = -1;     ///< the op whose end the process then waits for; -1: none
};

struct UniformProgram {
  std::vector<ProgramOp> ops;
  std::vector<ProgramStep> steps;
};

struct LevelizedOptions {
  const CollectiveLibrary* library = nullptr;  ///< as EngineOptions: none, plain_library()
  Time watchdog_timeout;  ///< as EngineOptions: zero, never
  /// Added to a per_rank op's duration on a rank (a straggler's delay);
  /// needed when any op is per_rank.
  std::function<Time(int rank, const ProgramOp& op)> extra;
};

struct LevelizedRun {
  RunSummary summary;
  /// Per step: the latest end over ranks of its `waits_for` op (zero if none).
  std::vector<Time> step_end;
};

/// Takes the ops one rank's program issues as a program every rank runs:
/// an OpRef it returns names the op's position in the program (`index`;
/// `stream` is the op's StreamKind, not a stream of the engine's).
class Recorder final : public OpSink {
 public:
  using OpSink::enqueue;
  using OpSink::enqueue_collective;
  OpRef enqueue(int rank, StreamKind stream, Time duration, OpLabel label, std::optional<OpRef> after) override;
  /// Over the world group only: levelized evaluation has no other.
  OpRef enqueue_collective(int rank, GroupId group, Collective collective, OpLabel label,
                           std::optional<OpRef> after) override;
  /// Marks the next op as per_rank (LevelizedOptions::extra gives its delay).
  Time per_rank(Time delay) override;
  /// The ops since the last step form one, issued when op `issued_after`
  /// ends (-1: at time zero); the process then waits for `waits_for`.
  void end_step(std::int32_t issued_after, std::int32_t waits_for);
  UniformProgram program() && { return std::move(program_); }

 private:
  ProgramOp& add(StreamKind stream, OpLabel label, const std::optional<OpRef>& after);
  OpRef ref() const;
  UniformProgram program_;
  bool per_rank_next_ = false;
};

/// Runs `program` on `world_size` ranks as the engine would, each record to
/// `observer` (each rank's records in the program's order, ranks
/// interleaved). Nothing: a collective's members arrive further apart than
/// the watchdog allows, which only the engine simulates.
std::optional<LevelizedRun> run_levelized(const UniformProgram& program, int world_size, const CollectiveCostFn& cost,
                                          const LevelizedOptions& options, Observer& observer);

}  // namespace ddpsim::sim
