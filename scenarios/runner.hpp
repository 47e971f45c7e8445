#pragma once
// Runs every world size of a scenario and derives speedup and efficiency.

#include <optional>
#include <vector>

#include "models/ddp_job.hpp"
#include "models/restart.hpp"
#include "models/sampler.hpp"
#include "scenarios/scenario.hpp"
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
  std::optional<models::SamplerAudit> sampler;  ///< when the scenario names a dataset
  double bucket_cap_mb = 25;
  std::optional<double> baseline_ms;  ///< t1: the one-rank step time at this bucket cap
  std::optional<double> speedup;      ///< W * t1 / tW
  std::optional<double> efficiency;   ///< speedup / W = t1 / tW
  std::optional<models::RestartReport> restarts;  ///< failures over the horizon
  std::optional<CrashRecovery> crash_recovery;
  std::optional<ElasticRestart> elastic;
};

struct SweepResult {
  std::vector<SweepRow> rows;      ///< for each bucket cap, each world size, in file order
  bool baseline_in_sweep = false;  ///< false: W=1 was simulated only as the baseline
  bool bucket_sweep = false;       ///< ddp.bucket_cap_mb is a list
};

/// Simulates each bucket cap and world size (and W=1 for the baseline if the sweep lacks it).
/// `trace`, if given, receives every run of the sweep, the baseline excluded.
SweepResult run_scenario(const Scenario& scenario, sim::ChromeTraceWriter* trace = nullptr);

}  // namespace ddpsim::scenarios
