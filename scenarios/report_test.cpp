#include "scenarios/report.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

using namespace ddpsim;

namespace {

const char* kLab = R"(name: lab
world_size: [2, 4]
training: {iterations: 3}
model: {forward_ms: 40, backward_ms: 80, gradient_bytes: 4000000}
collective: {latency_us: 180, bandwidth_GBps: 25, launch_overhead_us: 50}
)";

}  // namespace

TEST_CASE("without W=1 in the sweep, the baseline is simulated and said so") {
  const auto s = scenarios::parse_scenario(kLab, "lab.yaml");
  const auto r = scenarios::run_scenario(s);
  REQUIRE(r.baseline_ms.has_value());
  CHECK(*r.baseline_ms == doctest::Approx(120.05));
  CHECK_FALSE(r.baseline_in_sweep);
  REQUIRE(r.rows.size() == 2);
  CHECK(*r.rows[1].speedup == doctest::Approx(4 * 120.05 / *r.rows[1].run.step_ms));
  std::ostringstream table;
  scenarios::write_table(table, s, r);
  CHECK(table.str().find("with t1 = 120.0 ms simulated at W=1") != std::string::npos);
}

TEST_CASE("the JSON result has the documented fields") {
  const auto s = scenarios::parse_scenario(kLab, "lab.yaml");
  const auto doc = nlohmann::json::parse(scenarios::to_json(s, scenarios::run_scenario(s)));
  CHECK(doc.at("scenario") == "lab");
  CHECK(doc.at("engine") == "analytic");
  CHECK(doc.at("seed") == 0);
  const auto& run = doc.at("runs").at(1);
  CHECK(run.at("world_size") == 4);
  CHECK(run.at("outcome") == "completed");
  CHECK(run.at("global_batch") == 128);
  CHECK(run.at("iterations") == 3);
  CHECK(run.at("ranks").size() == 4);
  for (const char* key : {"data_ms", "compute_ms", "collective_ms", "exposed_comm_ms", "wait_ms"}) {
    CHECK(run.at("ranks").at(0).contains(key));
  }
  // 120 ms compute + 50 us launch + 6 * 180 us + 1.5 * 160 us.
  CHECK(run.at("step_ms").get<double>() == doctest::Approx(121.37));
}
