#include "scenarios/runner.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpsim::scenarios {

SweepResult run_scenario(const Scenario& scenario, sim::ChromeTraceWriter* trace) {
  SweepResult out;
  for (int w : scenario.world_sizes) {
    if (trace != nullptr) trace->begin_run(fmt::format("W={}", w), w);
    SweepRow row{models::simulate_ddp(scenario.job, w, scenario.seed, trace), {}, {}, {}};
    if (scenario.sampler) {
      const SamplerSpec& s = *scenario.sampler;
      row.sampler = models::audit_sampler({s.dataset_size, w, s.shuffle, scenario.seed, s.drop_last},
                                          scenario.job.local_batch_size, s.epochs, s.set_epoch);
    }
    out.rows.push_back(std::move(row));
  }
  const auto one = std::find(scenario.world_sizes.begin(), scenario.world_sizes.end(), 1);
  out.baseline_in_sweep = one != scenario.world_sizes.end();
  out.baseline_ms = out.baseline_in_sweep
                        ? out.rows[static_cast<std::size_t>(one - scenario.world_sizes.begin())].run.step_ms
                        : models::simulate_ddp(scenario.job, 1, scenario.seed).step_ms;
  for (SweepRow& row : out.rows) {
    const auto& r = row.run;
    if (!out.baseline_ms || !r.step_ms || r.outcome != models::Outcome::kCompleted) continue;
    row.efficiency = *out.baseline_ms / *r.step_ms;
    row.speedup = r.world_size * *row.efficiency;
  }
  return out;
}

}  // namespace ddpsim::scenarios
