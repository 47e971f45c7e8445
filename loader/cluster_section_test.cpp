// cluster.intra.gpus_per_switch and uplink_GBps (a PCIe tree inside a node):
// what they load, and one located error per bad input.

#include <doctest/doctest.h>

#include <string>

#include "loader/scenario.hpp"
#include "loader/test_scenarios.hpp"

using namespace ddpsim;
using scenarios::testing::error_of;
using scenarios::testing::replace;

namespace {

// Two nodes of 8 GPUs on PCIe, two switches of 4 a node, a NIC under each.
const std::string kTree = R"(world_size: [8, 16]
model: {forward_ms: 1, backward_ms: 2, gradient_bytes: 1000}
cluster:
  nodes: 2
  gpus_per_node: 8
  intra: {topology: star, link: pcie, bandwidth_GBps: 24, latency_us: 10, gpus_per_switch: 4, uplink_GBps: 10}
  nics_per_node: 2
  inter: {topology: star, bandwidth_GBps: 25, latency_us: 5}
)";

}  // namespace

TEST_CASE("a PCIe tree loads: GPUs per switch and the switches' uplinks") {
  const auto s = scenarios::parse_scenario(kTree, "s.yaml");
  REQUIRE(s.job.cluster);
  CHECK(s.job.cluster->gpus_per_switch == 4);
  CHECK(s.job.cluster->switch_uplink_GBps == 10);
  CHECK(s.job.cluster->pcie_switches() == 2);
  // Without the keys: one switch, as before.
  const auto flat = scenarios::parse_scenario(replace(kTree, ", gpus_per_switch: 4, uplink_GBps: 10", ""), "s.yaml");
  CHECK(flat.job.cluster->pcie_switches() == 1);
}

TEST_CASE("PCIe trees that cannot describe a node are refused") {
  CHECK(error_of(replace(kTree, "link: pcie, ", ""))
            .find("key 'cluster.intra.gpus_per_switch': only a PCIe node (link: pcie, topology: star)") !=
        std::string::npos);
  CHECK(error_of(replace(kTree, "gpus_per_switch: 4", "gpus_per_switch: 3"))
            .find("key 'cluster.intra.gpus_per_switch': value '3': expected a divisor of gpus_per_node (8)") !=
        std::string::npos);
  CHECK(error_of(replace(kTree, "gpus_per_switch: 4", "gpus_per_switch: 9")).find("key 'cluster.intra.gpus_per_switch'") !=
        std::string::npos);
  CHECK(error_of(replace(kTree, ", uplink_GBps: 10", "")).find("key 'cluster.intra.uplink_GBps': missing") !=
        std::string::npos);
  CHECK(error_of(replace(kTree, "uplink_GBps: 10", "uplink_GBps: 0")).find("key 'cluster.intra.uplink_GBps': value '0'") !=
        std::string::npos);
  CHECK(error_of(replace(kTree, "gpus_per_switch: 4", "gpus_per_switch: 8"))
            .find("key 'cluster.intra.uplink_GBps': one switch for all the node's GPUs") != std::string::npos);
  CHECK(error_of(replace(kTree, "nics_per_node: 2", "nics_per_node: 3"))
            .find("key 'cluster.nics_per_node': value '3': expected a multiple of the PCIe switches (2") !=
        std::string::npos);
  CHECK(error_of(replace(kTree, "  nics_per_node: 2\n", ""))
            .find("key 'cluster.nics_per_node': missing; expected a multiple of the PCIe switches (2") !=
        std::string::npos);
  CHECK(
      error_of(kTree + "collective: {model: nccl}\n")
          .find(
              "key 'collective.model': value 'nccl': expected ring (the default) with cluster.intra.gpus_per_switch") ==
      std::string::npos);  // the GPU generation is asked for first
  // NCCL's tuning model prices NCCL's collectives, not gloo's.
  CHECK(error_of(replace(kTree, "  nodes: 2\n", "  nodes: 2\n  gpu: ampere\n") + "collective: {model: nccl, backend: gloo}\n")
            .find("key 'collective.model': value 'nccl': expected ring (the default) with backend gloo") != std::string::npos);
  CHECK(
      error_of(replace(kTree, "  nodes: 2\n", "  nodes: 2\n  gpu: ampere\n") + "collective: {model: nccl}\n")
          .find(
              "key 'collective.model': value 'nccl': expected ring (the default) with cluster.intra.gpus_per_switch") !=
      std::string::npos);
}
