#pragma once
// Hybrid sharding's replica groups priced by how many of them are in flight
// (sim::SharedCostFn; docs/cost-models.md#process-groups-at-once): one GPU
// of every node in each, so the groups of a node share its NICs.

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "models/cluster.hpp"
#include "models/ddp_job.hpp"
#include "sim/engine.hpp"

namespace ddpsim::models {

class ReplicaPricing {
 public:
  /// `replicas`: the groups, each its ranks in ring order (replica_groups).
  /// `simgrid`: the SimGrid engine's timer, which runs the in-flight groups
  /// together on the platform (any groups: `ddpsim collectives --groups
  /// --stagger-us` prices its own this way); null: the analytic engine,
  /// which gives each of m replica groups in flight min(1, nics_per_node /
  /// m) of a NIC. Not owned.
  ReplicaPricing(const DdpJob& job, std::vector<std::vector<int>> replicas, CollectiveTimer* simgrid);

  /// The time of group `group`'s `c` were the groups `in_flight`
  /// (ascending, `group` among them) running throughout; each distinct
  /// question is answered once.
  sim::Time time(const sim::Collective& c, int group, const std::vector<int>& in_flight);

 private:
  const DdpJob& job_;
  std::vector<std::vector<int>> replicas_;
  CollectiveTimer* simgrid_;
  std::map<int, std::unique_ptr<CollectiveTimer>> fair_share_;  // analytic: by the count in flight
  std::map<std::tuple<sim::CollectiveKind, std::int64_t, std::vector<int>>, std::vector<sim::Time>> together_;
};

}  // namespace ddpsim::models
