#pragma once
// A training program as its evaluators see it (exec/evaluate.hpp chooses
// among the symmetric fast path, levelized evaluation and the engine's two
// schedules from its traits). A program issues its operations to a
// sim::OpSink and knows no evaluator; DDP (models/ddp_job.hpp) is one.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/collective_library.hpp"
#include "models/run_result.hpp"
#include "sim/engine.hpp"
#include "sim/levelized.hpp"

namespace ddpsim::models {

/// What decides which evaluators may run a program.
struct ProgramTraits {
  /// Every rank runs the same operations with the same times: one rank,
  /// its collectives priced over W, is every rank.
  bool symmetric = false;
  /// Every rank issues the same operations, only the delays it marks per
  /// rank differing (sim::OpSink::per_rank): evaluated levelized.
  bool uniform = false;
  /// No rank crashes, hangs or disagrees with the others in a collective,
  /// and nothing else only the engine's time order simulates (compute slowed
  /// by communication, for one).
  bool keeps_lockstep = false;
  /// Ranks draw independent random delays, so they rarely share an instant.
  bool independent_delays = false;
};

/// How the collective library behaves (sim::EngineOptions, sim::LevelizedOptions).
struct CommSettings {
  Backend backend = Backend::kNccl;
  sim::Time watchdog_timeout;          ///< zero: no watchdog
  std::int64_t fingerprint_bytes = 0;  ///< TORCH_DISTRIBUTED_DEBUG=DETAIL's per-rank all-gather
  double compute_slowdown = 0;         ///< contention.compute_slowdown (sim::EngineOptions)
  double comm_slowdown = 0;            ///< contention.comm_slowdown (sim::EngineOptions)
  /// Under fingerprint_bytes: what a check reads from a collective's data,
  /// by its label (models::ContentReader); empty: nothing is read.
  ContentReader reads;
};

/// One evaluation of a program: `simulated` ranks whose collectives run
/// over `world_size` ranks (all of them, or the fast path's one rank
/// standing for every rank). Used once, by one evaluator.
class Evaluation {
 public:
  virtual ~Evaluation() = default;
  /// Sees every operation's record; an evaluator gives it each one.
  virtual sim::Observer& accounting() = 0;
  /// On the engine: every rank's process created on `engine` and started.
  virtual void start(sim::Engine& engine) = 0;
  /// The result of the engine's run (one that did not need time order).
  virtual RunResult finish(const sim::RunSummary& summary) = 0;
  /// Levelized: the operations every rank issues (ProgramTraits::uniform).
  virtual sim::UniformProgram record() = 0;
  /// Levelized: what a per_rank op takes longer on `rank`.
  virtual sim::Time per_rank(int rank, const sim::ProgramOp& op) const = 0;
  /// The result of evaluating record()'s program levelized.
  virtual RunResult finish_levelized(const sim::LevelizedRun& run) = 0;
  /// Before start(): the timer the evaluator prices collectives with (not
  /// owned: the policy's, or the program's analytic one), for process groups
  /// the program adds and prices itself (hybrid sharding's shard groups
  /// around a slow link, its replica groups). By default unused.
  virtual void price_groups_with(CollectiveTimer* timer) { (void)timer; }
};

class TrainingProgram {
 public:
  virtual ~TrainingProgram() = default;
  virtual ProgramTraits traits() const = 0;
  virtual CommSettings comm() const = 0;
  /// The analytic engine for `world_size` ranks, used when no timer is given.
  virtual std::unique_ptr<CollectiveTimer> analytic_timer(int world_size) const = 0;
  /// Links that slow down the collectives their rank joins.
  virtual std::vector<SlowLink> slow_links() const = 0;
  /// Links that slow down from a time on (models::link_slowdowns).
  virtual std::vector<LinkSlowdown> link_slowdowns() const = 0;
  /// Throws std::invalid_argument for a program that cannot run.
  virtual std::unique_ptr<Evaluation> evaluation(int simulated, int world_size, std::uint64_t seed) const = 0;
};

}  // namespace ddpsim::models
