#include <fmt/format.h>

#include "loader/scenario.hpp"

namespace ddpsim::scenarios {

std::vector<std::string> caveats(const Scenario& s) {
  std::vector<std::string> out;
  if (s.collective_placeholder) {
    out.push_back(
        "the collective section's latency and bandwidth are placeholders (collective.placeholder: true), not "
        "measured: every communication time here is a guess; measure them (ddpsim_torch sweep, then profile "
        "--collective SWEEP.json, or ddpsim calibrate) before trusting the scaling");
  }
  if (s.measured_on == "cpu" && s.job.cluster) {
    out.push_back(fmt::format(
        "the model's times were measured on a CPU (model.measured_on: cpu) but run here on a cluster of GPUs "
        "({} x {}): compute is the CPU's; profile on the GPU (ddpsim_torch profile --device cuda) for this cluster",
        s.job.cluster->nodes, s.job.cluster->gpus_per_node));
  }
  return out;
}

}  // namespace ddpsim::scenarios
