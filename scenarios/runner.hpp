#pragma once
// Runs every world size of a scenario and derives speedup and efficiency.

#include <optional>
#include <vector>

#include "models/ddp_job.hpp"
#include "models/sampler.hpp"
#include "scenarios/scenario.hpp"
#include "sim/chrome_trace.hpp"

namespace ddpsim::scenarios {

struct SweepRow {
  models::RunResult run;
  std::optional<models::SamplerAudit> sampler;  ///< when the scenario names a dataset
  double bucket_cap_mb = 25;
  std::optional<double> baseline_ms;  ///< t1: the one-rank step time at this bucket cap
  std::optional<double> speedup;      ///< W * t1 / tW
  std::optional<double> efficiency;   ///< speedup / W = t1 / tW
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
