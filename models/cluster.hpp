#pragma once
// The machine a job runs on, and how long its collectives take there.
//
// A cluster is `nodes` nodes of `gpus_per_node` GPUs. Rank r runs on GPU
// r % gpus_per_node of node r / gpus_per_node (node-major placement, as
// torchrun assigns local ranks). Inside a node the GPUs share an intra-node
// fabric: a switch (NVSwitch-like star, one full-duplex link per GPU) or a
// ring of links between neighbours. Between nodes, each node's NICs (GPU g
// uses NIC g * nics_per_node / gpus_per_node) connect to a network: one
// switch (star), or a two-level fat tree whose leaf switches take
// nodes_per_switch nodes each and have uplinks oversubscribed by a ratio.
//
// Latency and bandwidth are GPU-to-GPU (intra) and NIC-to-NIC (inter) route
// figures: an uncontended transfer of n bytes between two GPUs of one node
// takes intra.latency + n / intra.bandwidth (a star's two links carry half
// the latency each). docs/cost-models.md#clusters derives every formula here.
//
// CollectiveTimer is the engine interface: the only thing that differs
// between the analytic engine and the SimGrid engine is how long a
// collective takes. Per-rank programs, rendezvous, faults and hang reports
// are the discrete-event engine's (sim/engine.hpp) for both.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/link_load.hpp"
#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace ddpsim::models {

struct Fabric {
  enum class Topology : std::uint8_t { kStar, kRing, kFatTree };
  Topology topology = Topology::kStar;
  double bandwidth_GBps = 1;  ///< route bandwidth (1 GB/s = 1 byte/ns)
  sim::Time latency;          ///< route latency
  bool full_duplex = true;    ///< false: a link's two directions share its bandwidth
  int nodes_per_switch = 1;   ///< fat tree: nodes under one leaf switch
  double oversubscription = 1;  ///< fat tree: leaf downlink capacity / uplink capacity
  bool collnet = false;         ///< inter only: the switches reduce (SHARP), for NCCL's CollNet algorithms
};

enum class GpuArch : std::uint8_t;

struct ClusterSpec {
  int nodes = 1;
  int gpus_per_node = 1;
  std::optional<GpuArch> gpu;  ///< cluster.gpu: what NCCL's tuning model reads (collective.model nccl)
  bool nvlink = true;          ///< cluster.intra.link: NVLink, else PCIe (nic_routes_cross_gpu_links) inside a node
  Fabric intra;          ///< star or ring
  int nics_per_node = 1;
  Fabric inter;          ///< star or fat tree
  /// PCIe nodes (a star): GPUs behind one PCIe switch; 0 or gpus_per_node:
  /// one switch for all. A route between two switches crosses both
  /// switches' uplinks, each `switch_uplink_GBps` a direction; a GPU's NICs
  /// sit under its own switch.
  int gpus_per_switch = 0;
  double switch_uplink_GBps = 0;
  int gpus() const { return nodes * gpus_per_node; }
  /// PCIe switches a node (1 without a PCIe tree).
  int pcie_switches() const {
    return gpus_per_switch > 0 && gpus_per_switch < gpus_per_node ? gpus_per_node / gpus_per_switch : 1;
  }
};

/// A homogeneous single-node cluster: `gpus` GPUs on a star whose routes
/// have the collective section's latency and bandwidth. What a scenario
/// without a cluster section runs on.
ClusterSpec single_switch(int gpus, const NetworkParams& net);

/// kAuto: per call, the faster of the ring run with a channel per NIC and the
/// hierarchical all-reduce (docs/cost-models.md#the-per-call-choice-auto).
/// kBinomial: Open MPI's non-blocking in-place all-reduce (libnbc's
/// allred_sched_diss): the whole buffer reduced up a binomial tree to rank 0,
/// then sent down one, each rank sending to all its children at once
/// (docs/cost-models.md#open-mpis-binomial-all-reduce).
enum class Algorithm : std::uint8_t { kRing, kHierarchical, kAuto, kBinomial };
/// What a binomial all-reduce (kBinomial) over W ranks costs on links all
/// alike, as multiples of one message's latency and of its bytes / bandwidth
/// along its slowest chain: W = 2 {2, 2}, 4 {4, 5}, 8 {6, 9}.
struct BinomialCounts {
  int latencies = 0;
  int transfers = 0;
};
BinomialCounts binomial_all_reduce_counts(int world_size);
/// The binomial all-reduce's transfers over ranks 0 .. world_size-1, as the
/// SimGrid engine runs them: up, rounds of span 1, 2, 4, ... (v + span -> v
/// for v a multiple of 2 span); down, waves: the root's sends to all its
/// children, then every rank reached in the last wave to all of its own.
std::vector<std::vector<std::pair<int, int>>> binomial_up_rounds(int world_size);
std::vector<std::vector<std::pair<int, int>>> binomial_down_waves(int world_size);
/// How a broadcast moves its buffer. NCCL pipelines it in chunks down a
/// ring (one buffer's time, plus a latency a hop); gloo sends the whole
/// buffer down a binomial tree (gloo/broadcast.cc): in round i each rank
/// that has it sends it to the rank 2^i places on, ceil(log2 W) rounds.
enum class Broadcast : std::uint8_t { kPipelined, kBinomialTree };
/// The rounds of a binomial broadcast from rank 0 over ranks 0 .. world_size-1:
/// in the round of span 1, 2, 4, ..., each rank below span sends to rank + span.
std::vector<std::vector<std::pair<int, int>>> binomial_tree_rounds(int world_size);
/// How a collective is priced: alpha-beta ring formulas, or NCCL's tuning model.
enum class CollectiveModel : std::uint8_t { kRing, kNccl };
std::string_view to_string(Algorithm algorithm);
/// The scenario file's spelling: "star", "ring" or "fat_tree".
std::string_view to_string(Fabric::Topology topology);

/// A rank whose links run `factor` times slower (the slow_link fault).
struct SlowLink {
  int rank = 0;
  double factor = 1;
};

/// A rank's link that runs `factor` times slower from `at` on (the
/// slow_link fault with at_ms): from then its rate is the hop's bandwidth /
/// factor, whatever it was before.
struct LinkSlowdown {
  SlowLink link;
  sim::Time at;
};

/// `slow` as it is after `change`: the rank's earlier factor replaced.
std::vector<SlowLink> after_change(std::vector<SlowLink> slow, const SlowLink& change);

/// The slow links among `ranks` (global rank numbers), each renumbered as
/// its position in `ranks`: what a collective over that group, priced as
/// ranks 0 .. size-1, slows (a node's shard group, a replica group).
std::vector<SlowLink> slow_links_in(const std::vector<SlowLink>& slow, const std::vector<int>& ranks);

/// A collective timed `count` times in a run (CollectiveTimer::link_loads).
struct TimedCall {
  sim::Collective collective;
  int group_size = 0;
  std::vector<SlowLink> slow;
  std::int64_t count = 1;
};

/// One process group's collective, run beside others (CollectiveTimer::time_together).
struct GroupCall {
  sim::Collective collective;
  std::vector<int> ranks;  ///< the group, its ring in this order
};

/// Whether a route between nodes crosses the sending and the receiving GPU's
/// own link inside its node: on PCIe nodes (`cluster.intra.link: pcie`, a
/// star) a GPU reaches its NIC over the PCIe link it also talks to the
/// node's other GPUs on; on NVLink nodes it reaches it over PCIe, which is
/// not its NVLink (docs/cost-models.md#process-groups-at-once).
bool nic_routes_cross_gpu_links(const ClusterSpec& cluster);

/// How long collectives take: the engine-specific part of a simulation.
/// Called with the collectives the discrete-event engine starts, which in a
/// single process group never overlap in time (each rank's communication
/// stream runs one at a time and a collective starts only when every member
/// is free), so a collective can be timed on an otherwise idle network.
class CollectiveTimer {
 public:
  virtual ~CollectiveTimer() = default;
  virtual std::string_view engine() const = 0;  ///< "analytic" or "simgrid"
  /// Time of `c` over ranks 0 .. group_size-1, with `slow` ranks' links slowed.
  virtual sim::Time time(const sim::Collective& c, int group_size, const std::vector<SlowLink>& slow) = 0;
  /// Process groups that each start their collective at the same instant:
  /// the time each takes while the others run, in the order given.
  /// Collectives of different groups do overlap, and share the links they
  /// both cross; only the SimGrid engine simulates that, and this default
  /// says so (throws std::invalid_argument). `slow`: ranks (global numbers,
  /// as in the calls) whose links run slower meanwhile.
  virtual std::vector<sim::Time> time_together(const std::vector<GroupCall>& calls, const std::vector<SlowLink>& slow);
  /// The same, no link slowed.
  std::vector<sim::Time> time_together(const std::vector<GroupCall>& calls) { return time_together(calls, {}); }
  /// The same, every group (its ranks, its ring in that order) running `c`.
  std::vector<sim::Time> time_together(const sim::Collective& c, const std::vector<std::vector<int>>& groups);
  /// What each link carried over `calls` (each collective as time() ran
  /// it, alone on the network, `count` times) and how long it was busy;
  /// only bytes and busy_s are set. Empty for an engine without links (the
  /// analytic ones); the SimGrid engine simulates each call again, link by link.
  virtual std::vector<LinkLoad> link_loads(const std::vector<TimedCall>& calls) {
    (void)calls;
    return {};
  }
};

/// Where each hop of a transfer goes, with its route latency and bandwidth.
struct Hop {
  sim::Time latency;
  double bandwidth_GBps = 1;
};

/// The analytic engine: ring (and hierarchical) formulas, priced at the
/// slowest hop class the collective's rings cross. Exact where no link
/// carries two transfers at once; the SimGrid engine shows what it misses.
class AnalyticTimer final : public CollectiveTimer {
 public:
  AnalyticTimer(ClusterSpec cluster, sim::Time launch_overhead, Algorithm algorithm,
                Broadcast broadcast = Broadcast::kPipelined);
  std::string_view engine() const override { return "analytic"; }
  sim::Time time(const sim::Collective& c, int group_size, const std::vector<SlowLink>& slow) override;
  /// What `time` prices `c` over `group_size` ranks as: kRing or kHierarchical.
  Algorithm algorithm_for(const sim::Collective& c, int group_size);

 private:
  sim::Time ring_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow);
  sim::Time hierarchical_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow);
  sim::Time tree_broadcast_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow);
  sim::Time binomial_all_reduce_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow);
  ClusterSpec cluster_;
  sim::Time launch_;
  Algorithm algorithm_;
  Broadcast broadcast_;
  std::map<int, std::vector<std::vector<Hop>>> tree_hops_;  ///< distinct hops of each binomial round over W ranks, by W
  std::map<std::pair<int, bool>, std::vector<Hop>> flat_hops_;  ///< distinct hops of the ring over W ranks, by W and channels
  std::map<std::pair<int, std::int64_t>, sim::Time> binomial_times_;  ///< binomial all-reduces without slow links, by W and bytes
};

/// How the flows of several rings share a hop: `nic` scales the NIC's
/// bandwidth between nodes (a ring's channels, one NIC each: their count;
/// rings sharing NICs: a fraction), `uplink` flows share a fat tree's leaf
/// uplink, and `intra` scales a GPU's link inside a node (channels whose
/// flows skip it: k / (k - 1) where each of the k GPUs heads a channel).
struct Sharing {
  double nic = 1;
  double uplink = 1;
  double intra = 1;
  double switch_uplink = 1;  ///< a PCIe switch's uplink: its bandwidth times this (kAuto's channels)
};
/// The hop from rank a to rank b on `cluster` (a != b).
Hop route(const ClusterSpec& cluster, int a, int b, Sharing sharing = {});
/// The channels of kAuto's ring over ranks 0 .. world_size-1: one per NIC,
/// at most one per GPU, on whole nodes (two or more); else 1. Channel j is
/// the ring that visits each node's GPUs from j * G / channels on, so it
/// leaves a node on its last GPU's NIC and enters the next on its first's.
int ring_channels(const ClusterSpec& cluster, int world_size);
/// Whether kAuto runs `kind` on ring_channels: the ring-step collectives
/// (all-reduce, barrier, all-gather, reduce-scatter).
bool runs_on_channels(Algorithm algorithm, sim::CollectiveKind kind);
/// Whether an all-reduce over the first `world_size` ranks runs as
/// `algorithm` says hierarchically: only over two or more whole nodes of
/// several GPUs; anything else (one node, a partial node) is the flat ring.
/// Both engines decide by it; under kAuto, where it holds, each all-reduce
/// takes the faster of this and the channels' ring.
bool runs_hierarchical(Algorithm algorithm, const ClusterSpec& cluster, int world_size);
/// Hierarchical all-reduce on `nodes` full nodes: intra-node reduce-scatter,
/// one inter-node ring all-reduce per local GPU (n / G bytes each, all at
/// once), intra-node all-gather. Assumes each inter-node ring has a NIC to
/// itself; with fewer NICs than GPUs per node SimGrid shows the sharing.
sim::Time hierarchical_all_reduce_time(const Hop& intra, const Hop& inter, sim::Time launch, std::int64_t bytes,
                                       int gpus_per_node, int nodes);

}  // namespace ddpsim::models
