#pragma once
// Runs every world size of a scenario and derives speedup and efficiency.

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "exec/evaluate.hpp"
#include "models/ddp_job.hpp"
#include "models/restart.hpp"
#include "models/sampler.hpp"
#include "netsim/simgrid_engine.hpp"
#include "sweep/partition.hpp"
#include "sweep/program_summary.hpp"
#include "loader/scenario.hpp"
#include "sim/chrome_trace.hpp"

namespace ddpsim::scenarios {

/// The first crash of a run, priced against the checkpoint section.
struct CrashRecovery {
  models::Recovery recovery;
  double budget_min = 15;
  bool within_budget = false;
  double max_watchdog_s = 0;  ///< the longest watchdog that keeps watchdog detection within the budget
};

/// The job after an elastic restart at a new world size.
struct ElasticRestart {
  int world_size = 0;
  std::optional<double> step_ms;
  std::int64_t global_batch = 0;
  double lr_scale = 1;  ///< linear scaling rule: new global batch / old
  std::optional<models::ElasticResume> resume;  ///< mid-epoch, when the scenario names a dataset
};

struct SweepRow {
  models::RunResult run;
  /// The job this row ran: the scenario's, at this row's bucket cap (rows
  /// of one cap share it). Reports read it; nothing rebuilds it.
  std::shared_ptr<const models::DdpJob> job;
  std::optional<models::SamplerAudit> sampler;  ///< when the scenario names a dataset
  double bucket_cap_mb = 25;
  std::optional<double> baseline_ms;  ///< t1: the one-rank step time at this bucket cap
  std::optional<double> speedup;      ///< W * t1 / tW
  std::optional<double> efficiency;   ///< speedup / W = t1 / tW
  std::optional<models::RestartReport> restarts;  ///< failures over the horizon
  std::optional<CrashRecovery> crash_recovery;
  std::optional<ElasticRestart> elastic;
  double closed_form_ms = 0;  ///< the named baseline at this W and cap (models/baseline.hpp)
  models::MemoryEstimate memory;  ///< what each rank needs (loader/memory_plan.hpp)
  /// Files (name, text) a RecordFailed hook made of this row's run, when it hung or crashed.
  std::vector<std::pair<std::string, std::string>> recorded;
  /// What the row's program moves and how it is laid out (the reports read it).
  ProgramSummary program;
};

struct SweepResult {
  std::string engine = "analytic";  ///< which engine timed the collectives
  std::optional<netsim::SimgridStats> simgrid;  ///< what the SimGrid engine simulated
  std::vector<SweepRow> rows;      ///< for each bucket cap, each world size, in file order
  bool baseline_in_sweep = false;  ///< false: W=1 was simulated only as the baseline
  bool bucket_sweep = false;       ///< ddp.bucket_cap_mb is a list
  bool complete = true;            ///< false on a process of a partition other than the first: nothing to report
};

/// Runs a row again with `observer` seeing every operation, on the engine in
/// time order, inside the sweep's engine: the same result as the row's.
using Rerun = std::function<models::RunResult(sim::Observer& observer)>;
/// ddpsim run --flight-recorder: called for each row whose run hung or
/// crashed with a failure report, on the process that simulated it, inside
/// its engine (SimGrid runs once a process), from any of the sweep's
/// threads; the files it returns land in the row's `recorded`.
using RecordFailed = std::function<std::vector<std::pair<std::string, std::string>>(
    const models::DdpJob& job, const models::RunResult& run, const Rerun& rerun)>;
/// After each simulated run: (runs done, runs in the sweep). Called from the
/// sweep's threads, one call at a time; returning false stops the sweep,
/// which then throws Cancelled. The library writes nothing to stderr itself:
/// the command line prints progress on a terminal from this.
using ProgressFn = std::function<bool(std::size_t done, std::size_t total)>;
/// What a caller hooks into a sweep: the failed rows' recorder, progress and cancellation.
struct SweepHooks {
  RecordFailed record;
  ProgressFn progress;
};
/// A sweep stopped by its ProgressFn.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled by the progress callback") {}
};

/// Simulates each bucket cap and world size (and W=1 for the baseline if the sweep lacks it).
/// `trace`, if given, receives every run of the sweep, the baseline excluded.
/// The runs are independent and go to `threads` threads (one with a trace
/// or the SimGrid engine); the result is the same at any thread count.
/// `policy` gives the fast path and the schedule; the runner sets its
/// timer (the scenario's engine) and threads (what each run may take).
/// Split over the processes of `partition` (mpirun), each simulates its
/// share of the runs and the first reports the sweep one process would,
/// byte for byte; the others' results are not complete. With a trace the
/// first process simulates every run.
SweepResult run_scenario(const Scenario& scenario, sim::ChromeTraceWriter* trace = nullptr, int threads = 1,
                         const exec::ExecutionPolicy& policy = {}, const Partition& partition = {},
                         const SweepHooks& hooks = {});
/// run_scenario on other axes (validation: the measured world sizes at the first cap).
SweepResult run_sweep(const Scenario& scenario, const SweepAxes& axes, sim::ChromeTraceWriter* trace = nullptr,
                      int threads = 1, const exec::ExecutionPolicy& policy = {}, const Partition& partition = {},
                      const SweepHooks& hooks = {});

/// Runs `body` with the scenario's engine: a null timer for the analytic
/// engine, or inside SimGrid (once per process, netsim/simgrid_engine.hpp)
/// with its timer, whose statistics land in `stats`. Every run of the
/// scenario must happen inside `body`, with ExecutionPolicy::timer set to it.
void with_timer(const Scenario& scenario, const SweepAxes& axes, const std::function<void(models::CollectiveTimer*)>& body,
                std::optional<netsim::SimgridStats>* stats = nullptr);
/// The SimGrid engine's limit: its full routing zone holds W^2 route slots.
inline constexpr int kMaxSimgridRanks = 16384;
/// Throws InputError when a world size `axes` needs is over kMaxSimgridRanks.
void check_simgrid_size(const Scenario& scenario, const SweepAxes& axes);
/// Throws InputError when the scenario's engine cannot price its collectives
/// (SimGrid with collective.model nccl), whatever this build offers.
void check_engine(const Scenario& scenario);
/// Every world size a sweep simulates: its axis, 1 (the baseline), the elastic restart's.
std::vector<int> world_sizes_needed(const Scenario& scenario, const SweepAxes& axes);

}  // namespace ddpsim::scenarios
