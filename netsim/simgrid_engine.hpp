#pragma once
// The SimGrid engine: collectives executed as point-to-point transfers on a
// simulated platform (SimGrid's S4U API), built in C++ from a ClusterSpec:
// one host per GPU, links and routes as models/cluster.hpp describes.
//
// Each collective is run as its algorithm's steps: ring all-reduce as 2(W-1)
// steps in which every rank sends bytes/W to its ring neighbour at once,
// hierarchical all-reduce as intra-node reduce-scatter, one inter-node ring
// per local GPU, intra-node all-gather; broadcast as a chunked pipeline down
// the ring; all-gather and reduce-scatter as W-1 ring steps. A step ends when its last transfer
// does. SimGrid shares each link's bandwidth among the transfers crossing
// it (max-min fairness), which is what the analytic formulas leave out.
//
// SimGrid cannot be restarted inside a process (simgrid/simgrid#185), so a
// process runs one SimGrid simulation: run_with_simgrid() builds the platform
// for the largest world size needed and runs `body` (every row of a sweep)
// inside one SimGrid actor, whose timer simulates each distinct collective
// once (a collective on an idle network always takes the same time; see
// CollectiveTimer) and remembers it. Process groups whose collectives start
// together are the exception: time_together runs them at once, uncached.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/cluster.hpp"
#include "netsim/simgrid_options.hpp"

namespace ddpsim::netsim {

using models::Algorithm;
using models::ClusterSpec;
using models::CollectiveTimer;

struct SimgridStats {
  std::uint64_t collectives = 0;  ///< collectives simulated (distinct ones when memoised)
  std::uint64_t transfers = 0;    ///< point-to-point transfers simulated
  int hosts = 0;
  int links = 0;
};

/// False when this build has no SimGrid or its module cannot be loaded
/// (then run_with_simgrid throws, saying why).
bool simgrid_available();
/// Why simgrid_available() is false ("" when it is true).
std::string simgrid_unavailable_reason();

/// Builds the platform for ranks 0 .. max_world_size-1 of `cluster` (ring
/// routes for every size in `world_sizes`, and for the ring of each of
/// `groups`, whose ranks must be below the largest size) and runs `body`
/// inside SimGrid with a timer for it. Once per process; rethrows what
/// `body` throws. The timer's time_together runs the collectives of
/// `groups` (any subset of them) at once, each group as its own SimGrid
/// actor: transfers of different groups on one link share it.
/// `broadcast`: how a broadcast moves (the backend's: models::broadcast_of).
SimgridStats run_with_simgrid(const ClusterSpec& cluster, sim::Time launch_overhead, Algorithm algorithm,
                              const std::vector<int>& world_sizes, const SimgridOptions& options,
                              const std::function<void(CollectiveTimer&)>& body,
                              const std::vector<std::vector<int>>& groups = {},
                              models::Broadcast broadcast = models::Broadcast::kPipelined);

/// What crosses into the SimGrid module (libddpsim_simgrid.so, loaded on
/// first use by run_with_simgrid so that a process that never asks for
/// SimGrid never loads it: libsimgrid costs 50 ms at every start and also
/// defines MPI_*). Its entry point is `ddpsim_netsim_run`.
struct RunRequest {
  const ClusterSpec* cluster;
  sim::Time launch_overhead;
  Algorithm algorithm;
  const std::vector<int>* world_sizes;
  const SimgridOptions* options;
  const std::function<void(CollectiveTimer&)>* body;
  const std::vector<std::vector<int>>* groups;
  models::Broadcast broadcast;
};
using RunEntry = SimgridStats (*)(const RunRequest&);

}  // namespace ddpsim::netsim
