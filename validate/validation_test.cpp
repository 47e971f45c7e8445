#include "validate/validation.hpp"

#include "scenarios/input_error.hpp"
#include "scenarios/scenario.hpp"

#include <doctest/doctest.h>

namespace {
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("the scaling plot draws the series it is given, and only those") {
  using ddpsim::validate::PlotPoint;
  const std::vector<PlotPoint> predicted_only = {{1, {}, {}, 100.0, 100.0, {}, 1.0}, {8, {}, {}, 120.0, 125.0, {}, 100.0 / 120}};
  const std::string a = ddpsim::validate::scaling_svg("t", predicted_only);
  CHECK(count(a, "<polyline") == 3);  // predicted and baseline step time, predicted efficiency
  CHECK(count(a, "<circle") == 0);
  CHECK(a.find("black: measured") == std::string::npos);
  CHECK(a.find(">8</text>") != std::string::npos);  // the world-size axis reaches 8
  const std::vector<PlotPoint> measured = {{1, 101.0, 2.0, 100.0, 100.0, 1.0, 1.0}, {2, 110.0, 3.0, 108.0, 112.0, 101.0 / 110, 100.0 / 108}};
  const std::string b = ddpsim::validate::scaling_svg("t", measured);
  CHECK(count(b, "<polyline") == 5);
  CHECK(count(b, "<circle") == 2);  // each measured mean, with its standard deviation
  CHECK(b.find("black: measured (mean, ±1 sd)") != std::string::npos);
}

TEST_CASE("measured world sizes beyond the scenario's cluster are an input error, not an internal one") {
  const auto scenario = ddpsim::scenarios::parse_scenario(R"(name: t
world_size: 1
model: {forward_ms: 1, backward_ms: 2, gradient_bytes: 1000}
cluster:
  nodes: 1
  gpus_per_node: 2
  intra: {topology: star, bandwidth_GBps: 100, latency_us: 2}
)",
                                                          "c.yaml");
  ddpsim::validate::Measured m;
  m.world_size = 4;
  m.step_ms = 10;
  CHECK_THROWS_AS(ddpsim::validate::compare(scenario, {m}), ddpsim::scenarios::InputError);
  try {
    ddpsim::validate::compare(scenario, {m});
  } catch (const ddpsim::scenarios::InputError& e) {
    CHECK(std::string(e.what()).find("c.yaml: key 'cluster': value '1 x 2 GPUs': expected room for every measured world size (a run has W = 4)") !=
          std::string::npos);
  }
}
