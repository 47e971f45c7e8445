#include "loader/calibration_file.hpp"

#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "loader/scenario.hpp"
#include "loader/test_scenarios.hpp"

using namespace ddpsim;
using scenarios::parse_scenario;

namespace {

using scenarios::testing::kLayered;

}  // namespace

TEST_CASE("the calibration file's writer and reader agree: what to_yaml writes, apply_calibration reads back") {
  scenarios::CalibrationFile c;
  c.sources = {"sweep_w1.json", "w1.rank0.json"};
  c.collective = scenarios::CalibrationFile::Collective{{"a fit", "note: its quality"}, 7.5, 2.5, 3.25, std::nullopt};
  scenarios::CalibrationFile::Compute compute;
  compute.comments = {"model: per-layer means"};
  compute.layers = {{"layers.0", {"layers.0.weight", "layers.0.bias"}, 0.3, 0.6},
                    {"layers.1", {"layers.1.weight", "layers.1.bias"}, 0.1, 0.2}};
  compute.optimizer_ms = 0.05;
  compute.load_ms = 0.02;
  c.compute = compute;
  c.straggler = scenarios::CalibrationFile::Straggler{{"skew"}, 1.5};
  c.contention = scenarios::CalibrationFile::Contention{{"fitted"}, 0.75, std::nullopt};
  const std::string yaml = scenarios::to_yaml(c);
  CHECK(yaml.find("# ddpsim calibrate, from:\n#   sweep_w1.json\n#   w1.rank0.json\n# a fit\n# note: its quality\n"
                  "collective:\n  latency_us: 7.5\n") == 0);
  scenarios::Scenario s = parse_scenario(kLayered, "s.yaml");
  scenarios::apply_calibration_text(s, yaml, "c.yaml");
  CHECK(s.job.network.latency.us() == doctest::Approx(7.5));
  CHECK(s.job.network.bandwidth_GBps == doctest::Approx(2.5));
  CHECK(s.job.network.launch_overhead.us() == doctest::Approx(3.25));
  CHECK(s.job.model.forward_total().ms() == doctest::Approx(0.4));
  CHECK(s.job.model.backward_total().ms() == doctest::Approx(0.8));
  CHECK(s.job.model.optimizer.ms() == doctest::Approx(0.05));
  CHECK(s.job.data_load.ms() == doctest::Approx(0.02));
  REQUIRE(std::get_if<models::Log2Straggler>(&s.job.straggler));
  CHECK(std::get_if<models::Log2Straggler>(&s.job.straggler)->penalty.ms() == doctest::Approx(1.5));
  CHECK(yaml.find("# fitted\ncontention:\n  compute_slowdown: 0.75\n") != std::string::npos);
  CHECK(s.job.compute_slowdown == 0.75);
  CHECK(s.job.comm_slowdown == 0);
  // A measured overlap (ddpsim_torch overlap) carries the communication side too.
  c.contention->comm_slowdown = 0.4;
  const std::string measured = scenarios::to_yaml(c);
  CHECK(measured.find("contention:\n  compute_slowdown: 0.75\n  comm_slowdown: 0.4\n") != std::string::npos);
  scenarios::Scenario m = parse_scenario(kLayered, "s.yaml");
  scenarios::apply_calibration_text(m, measured, "c.yaml");
  CHECK(m.job.comm_slowdown == 0.4);
  c.contention->comm_slowdown.reset();
  // A fit without the network's split keeps the scenario's latency and bandwidth.
  c.collective->latency_us.reset();
  c.collective->bandwidth_GBps.reset();
  c.compute->layers.clear();
  c.compute->forward_ms = 2;
  c.compute->backward_ms = 4;
  scenarios::Scenario t = parse_scenario(kLayered, "s.yaml");
  const double bandwidth = t.job.network.bandwidth_GBps;
  scenarios::apply_calibration_text(t, scenarios::to_yaml(c), "c.yaml");
  CHECK(t.job.network.bandwidth_GBps == bandwidth);
  CHECK(t.job.model.forward_total().ms() == doctest::Approx(2));
  CHECK(t.job.model.backward_total().ms() == doctest::Approx(4));
}

TEST_CASE("a calibration fitted as the binomial all-reduce prices only a binomial scenario, and the ring's only a ring's") {
  scenarios::CalibrationFile c;
  c.collective = scenarios::CalibrationFile::Collective{{}, 7.5, 2.5, 3.25, std::nullopt};
  c.collective->binomial = true;
  const std::string yaml = scenarios::to_yaml(c);
  CHECK(yaml.find("collective:\n  algorithm: binomial\n  latency_us: 7.5\n") != std::string::npos);
  const auto error = [](scenarios::Scenario& s, const std::string& text) -> std::string {
    try {
      scenarios::apply_calibration_text(s, text, "c.yaml");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  scenarios::Scenario ring = parse_scenario(kLayered, "s.yaml");
  CHECK(error(ring, yaml).find("key 'collective.algorithm': value 'binomial': expected the scenario's "
                               "collective.algorithm (ring)") != std::string::npos);
  const std::string binomial_text = std::string(kLayered).replace(std::string(kLayered).find("collective:"), 11,
                                                                  "collective:\n  algorithm: binomial");
  scenarios::Scenario binomial = parse_scenario(binomial_text, "s.yaml");
  CHECK(error(binomial, yaml).empty());
  CHECK(binomial.job.network.latency.us() == doctest::Approx(7.5));
  c.collective->binomial = false;
  scenarios::Scenario again = parse_scenario(binomial_text, "s.yaml");
  CHECK(error(again, scenarios::to_yaml(c)).find("key 'collective.algorithm': missing; expected binomial, the "
                                                  "scenario's collective.algorithm") != std::string::npos);
}
