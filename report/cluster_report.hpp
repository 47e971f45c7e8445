#pragma once
// The cluster section of a run's renderings: its line in the table and its
// object in the JSON (which `ddpsim network|sweep|measure|profile --cluster`
// also hands the emulation: python/ddpsim_torch/fabric.py).

#include <nlohmann/json.hpp>
#include <string>

#include "loader/scenario.hpp"

namespace ddpsim::report {

/// "cluster: N node(s) x G GPUs, intra ..., inter ...; ring all-reduce" (the table's header line).
std::string cluster_line(const models::ClusterSpec& cluster, const models::DdpJob& job);
/// The JSON's "cluster" object; scenario.job.cluster must be set.
nlohmann::ordered_json cluster_doc(const scenarios::Scenario& scenario);
/// cluster_doc as compact JSON text.
std::string cluster_to_json(const scenarios::Scenario& scenario);

}  // namespace ddpsim::report
