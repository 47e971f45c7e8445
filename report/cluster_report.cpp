#include "report/cluster_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/nccl_model.hpp"

namespace ddpsim::report {

using nlohmann::ordered_json;
using scenarios::Scenario;

namespace {

std::string fabric_text(const models::Fabric& f) {
  std::string topology(models::to_string(f.topology));
  std::replace(topology.begin(), topology.end(), '_', ' ');  // "fat tree" in prose
  std::string out = fmt::format("{} {:g} GB/s {:g} us", topology, f.bandwidth_GBps, f.latency.us());
  if (f.topology == models::Fabric::Topology::kFatTree) {
    out += fmt::format(" ({} nodes per leaf, {:g}:1 oversubscribed)", f.nodes_per_switch, f.oversubscription);
  }
  return out + (f.full_duplex ? "" : " half duplex") + (f.collnet ? ", switches reduce (collnet)" : "");
}

}  // namespace

std::string cluster_line(const models::ClusterSpec& c, const models::DdpJob& job) {
  std::string out =
      fmt::format("cluster: {} node(s) x {} GPUs, intra {}", c.nodes, c.gpus_per_node, fabric_text(c.intra));
  if (c.pcie_switches() > 1) {
    out += fmt::format(" ({} GPUs per PCIe switch, {:g} GB/s uplinks)", c.gpus_per_switch, c.switch_uplink_GBps);
  }
  if (c.nodes > 1) out += fmt::format(", {} NIC(s) per node, inter {}", c.nics_per_node, fabric_text(c.inter));
  if (job.collective_model == models::CollectiveModel::kNccl) {
    return out + fmt::format("; {} GPUs, NCCL's tuning model (floor {:g} us, bandwidth x {:g})",
                             models::to_string(*c.gpu), job.network.launch_overhead.us(), job.nccl_bandwidth_scale);
  }
  if (job.algorithm == models::Algorithm::kAuto) {
    return out + "; algorithm auto (per call: a ring with a channel per NIC, or a hierarchical all-reduce)";
  }
  return out + fmt::format("; {} all-reduce", models::to_string(job.algorithm));
}

// The scenario's cluster section as the JSON's "cluster" (and `ddpsim network --cluster`'s description).
ordered_json cluster_doc(const Scenario& scenario) {
  const models::ClusterSpec* c = &*scenario.job.cluster;
  const auto fabric = [](const models::Fabric& f) {
    ordered_json j = {{"topology", models::to_string(f.topology)},
                      {"bandwidth_GBps", f.bandwidth_GBps},
                      {"latency_us", f.latency.us()},
                      {"duplex", f.full_duplex ? "full" : "half"}};
    if (f.topology == models::Fabric::Topology::kFatTree) {
      j["nodes_per_switch"] = f.nodes_per_switch;
      j["oversubscription"] = f.oversubscription;
    }
    if (f.collnet) j["collnet"] = true;
    return j;
  };
  ordered_json doc = {{"nodes", c->nodes},
                      {"gpus_per_node", c->gpus_per_node},
                      {"intra", fabric(c->intra)},
                      {"nics_per_node", c->nics_per_node},
                      {"inter", c->nodes > 1 ? fabric(c->inter) : ordered_json(nullptr)},
                      {"algorithm", models::to_string(scenario.job.algorithm)}};
  if (c->pcie_switches() > 1) {
    doc["intra"]["gpus_per_switch"] = c->gpus_per_switch;
    doc["intra"]["uplink_GBps"] = c->switch_uplink_GBps;
  }
  if (scenario.job.collective_model == models::CollectiveModel::kNccl) {
    doc["gpu"] = models::to_string(*c->gpu);
    doc["collective_model"] = {{"model", "nccl"},
                               {"nccl_version", "2.30.7"},
                               {"floor_us", scenario.job.network.launch_overhead.us()},
                               {"bandwidth_scale", scenario.job.nccl_bandwidth_scale}};
  }
  return doc;
}

std::string cluster_to_json(const Scenario& scenario) {
  return cluster_doc(scenario).dump();
}

}  // namespace ddpsim::report
