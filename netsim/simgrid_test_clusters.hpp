#pragma once
// Clusters the SimGrid engine's tests build (simgrid_engine_test.cpp,
// simgrid_links_test.cpp): a fabric and a cluster from their numbers.

#include "models/cluster.hpp"

namespace ddpsim::netsim::testing {

inline const sim::Time kLaunch = sim::Time::from_us(15);

inline models::Fabric fabric(double gbps, double us, models::Fabric::Topology t = models::Fabric::Topology::kStar) {
  models::Fabric f;
  f.topology = t;
  f.bandwidth_GBps = gbps;
  f.latency = sim::Time::from_us(us);
  return f;
}

inline models::ClusterSpec cluster(int nodes, int gpus, models::Fabric intra, int nics, models::Fabric inter) {
  models::ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.intra = intra;
  c.nics_per_node = nics;
  c.inter = inter;
  return c;
}

}  // namespace ddpsim::netsim::testing
