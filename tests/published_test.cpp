// Oracle tests: ddpsim's predictions against published measurements
// (../shared/reference/published_numbers.md). The measured numbers below are
// copied from the cited sources; the predictions come from the scenarios.

#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "models/baseline.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"

using namespace ddpsim;

namespace {
std::string scenario_path(const char* rel) { return std::string(DDPSIM_SOURCE_DIR) + "/scenarios/" + rel; }
}  // namespace

TEST_CASE("ResNet-50 on V100s: every row within 5% of PyTorch's DDP benchmark (p50)") {
  // pytorch/pytorch benchmarks/distributed/ddp/README.md, seconds per iteration.
  const std::map<int, double> measured_ms = {{1, 100}, {2, 103}, {4, 103}, {8, 104}, {16, 104}};
  const auto s = scenarios::load_scenario(scenario_path("published/resnet50_v100.yaml"));
  const auto r = scenarios::run_scenario(s);
  REQUIRE(r.rows.size() == measured_ms.size());
  for (const auto& row : r.rows) {
    const double measured = measured_ms.at(row.run.world_size);
    const double error = std::fabs(*row.run.step_ms - measured) / measured;
    CAPTURE(row.run.world_size);
    CAPTURE(*row.run.step_ms);
    CHECK(error < 0.05);
    // The named baseline on the same rows: docs/validation.md compares the two.
    const double closed = models::closed_form_step_ms(s.job, row.run.world_size);
    MESSAGE("W=" << row.run.world_size << ": simulated " << *row.run.step_ms << " ms (" << 100 * (*row.run.step_ms - measured) / measured
                 << " %), closed form " << closed << " ms (" << 100 * (closed - measured) / measured << " %)");
    CHECK(std::fabs(closed - measured) / measured < 0.05);
  }
}
