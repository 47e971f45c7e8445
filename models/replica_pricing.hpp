#pragma once
// Hybrid sharding's replica groups priced by how many of them are in flight
// (sim::SharedCostFn; docs/cost-models.md#process-groups-at-once): one GPU
// of every node in each, so the groups of a node share its NICs. On PCIe
// nodes under the SimGrid engine the shard groups join them: a GPU's PCIe
// link carries its shard ring and its replica ring.

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
  /// `groups`: each its ranks in ring order (replica_groups, and on PCIe
  /// nodes under SimGrid the shard groups too). `simgrid`: the SimGrid
  /// engine's timer, which runs the collectives in flight together on the
  /// platform (any groups: `ddpsim collectives --groups --stagger-us`
  /// prices its own this way); null: the analytic engine, whose groups are
  /// all replica groups, each of m in flight given min(1, nics_per_node /
  /// m) of a NIC. Not owned. The job's slow links slow the groups whose
  /// rings cross them, on either engine.
  ReplicaPricing(const DdpJob& job, std::vector<std::vector<int>> groups, CollectiveTimer* simgrid);

  /// The time of group `group`'s `c` were the collectives `in_flight`
  /// (`group`'s among them) running throughout; each distinct question is
  /// answered once.
  sim::Time time(const sim::Collective& c, int group, const std::vector<sim::InFlight>& in_flight);

 private:
  const DdpJob& job_;
  std::vector<std::vector<int>> groups_;
  CollectiveTimer* simgrid_;
  std::vector<SlowLink> slow_;                                  // the job's slow links (global ranks)
  std::vector<std::vector<SlowLink>> slow_in_group_;            // each group's, at their places in it
  std::map<int, std::unique_ptr<CollectiveTimer>> fair_share_;  // analytic: by the count in flight
  std::map<std::vector<std::tuple<int, sim::CollectiveKind, std::int64_t>>, std::vector<sim::Time>> together_;
};

}  // namespace ddpsim::models
