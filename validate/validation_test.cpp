#include "validate/validation.hpp"

#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

#include <doctest/doctest.h>


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
