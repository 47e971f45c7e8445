#pragma once
// The execution layer: how a training program is evaluated. It chooses, per
// run, among the symmetric fast path (one rank simulated for all), levelized
// evaluation (op by op across ranks) and the event engine in rank-major or
// time order, from the program's traits and an ExecutionPolicy that is not
// part of the job. Every choice gives the same result
// (docs/cost-models.md#levelized-evaluation, #two-schedules-one-result).

#include <cstdint>
#include <optional>

#include "models/cluster.hpp"
#include "models/ddp_job.hpp"
#include "models/program.hpp"
#include "sim/engine.hpp"

namespace ddpsim::exec {

/// How to evaluate, never what: results do not depend on it.
struct ExecutionPolicy {
  /// A symmetric program (ProgramTraits::symmetric) is simulated as one
  /// rank whose collectives are priced over W; false: always every rank.
  bool fast_path = true;
  /// Every-rank runs on the engine in this order; unset: levelized for a
  /// uniform program, else chosen per run (choose_schedule). A trace always
  /// gets the engine in time order.
  std::optional<sim::Schedule> schedule;
  /// Threads one rank-major run may use (each gets kRanksPerEngineThread ranks at least).
  int threads = 1;
  /// Prices collectives; not owned, must outlive the call. None: the
  /// program's analytic engine (TrainingProgram::analytic_timer).
  models::CollectiveTimer* timer = nullptr;
};

/// A rank-major run's threads each run at least this many ranks: they meet
/// once per collective, which costs more than a few thousand ranks' work on
/// the development machine (bench/README.md#schedules).
inline constexpr int kRanksPerEngineThread = 4096;

/// The engine schedule an every-rank run of a program on `ranks` ranks
/// without a trace uses: the policy's if set; otherwise time order when the
/// program leaves lockstep (ranks crash, hang or disagree, which rank-major
/// hands back to time order anyway); otherwise rank-major when ranks rarely
/// share an instant (independent delays) or when it gets two or more
/// threads, where it is faster (bench/README.md#schedules); time order otherwise.
sim::Schedule choose_schedule(const models::ProgramTraits& traits, int ranks, const ExecutionPolicy& policy);

/// Evaluates `program` on `world_size` ranks. `trace`, if given, sees every
/// op (the engine, time order). A uniform program without either a trace or
/// a schedule is evaluated levelized, unless a collective's members arrive
/// further apart than the watchdog allows. Otherwise every rank runs on the
/// engine on the schedule choose_schedule gives; a rank-major run that
/// reaches what only time order simulates (a crash, ranks that disagree,
/// the watchdog) is run again in time order. A symmetric program (with
/// fast_path, without a trace) is one rank priced over W, whose result is
/// every rank's; one that does not complete is run rank by rank instead.
models::RunResult evaluate(const models::TrainingProgram& program, int world_size, std::uint64_t seed,
                           const ExecutionPolicy& policy = {}, sim::Observer* trace = nullptr);

/// evaluate() for a DDP job (models::DdpProgram).
models::RunResult simulate_ddp(const models::DdpJob& job, int world_size, std::uint64_t seed,
                               const ExecutionPolicy& policy = {}, sim::Observer* trace = nullptr);

}  // namespace ddpsim::exec
