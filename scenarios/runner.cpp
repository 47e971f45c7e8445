#include "scenarios/runner.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpsim::scenarios {

SweepResult run_scenario(const Scenario& scenario, sim::ChromeTraceWriter* trace) {
  SweepResult out;
  out.bucket_sweep = scenario.bucket_caps_mb.size() > 1;
  const auto one = std::find(scenario.world_sizes.begin(), scenario.world_sizes.end(), 1);
  out.baseline_in_sweep = one != scenario.world_sizes.end();
  for (double cap : scenario.bucket_caps_mb) {
    models::DdpJob job = scenario.job;
    job.ddp.bucket_cap_bytes = models::bucket_bytes(cap);
    const std::size_t first = out.rows.size();
    for (int w : scenario.world_sizes) {
      if (trace != nullptr) {
        trace->begin_run(out.bucket_sweep ? fmt::format("cap={}MiB W={}", cap, w) : fmt::format("W={}", w), w);
      }
      SweepRow row{models::simulate_ddp(job, w, scenario.seed, trace), {}, cap, {}, {}, {}};
      if (scenario.sampler) {
        const SamplerSpec& s = *scenario.sampler;
        row.sampler = models::audit_sampler({s.dataset_size, w, s.shuffle, scenario.seed, s.drop_last},
                                            job.local_batch_size, s.epochs, s.set_epoch);
      }
      out.rows.push_back(std::move(row));
    }
    const std::optional<double> t1 =
        out.baseline_in_sweep
            ? out.rows[first + static_cast<std::size_t>(one - scenario.world_sizes.begin())].run.step_ms
            : models::simulate_ddp(job, 1, scenario.seed).step_ms;
    for (std::size_t i = first; i < out.rows.size(); ++i) {
      SweepRow& row = out.rows[i];
      row.baseline_ms = t1;
      const auto& r = row.run;
      if (!t1 || !r.step_ms || r.outcome != models::Outcome::kCompleted) continue;
      row.efficiency = *t1 / *r.step_ms;
      row.speedup = r.world_size * *row.efficiency;
    }
  }
  return out;
}

}  // namespace ddpsim::scenarios
