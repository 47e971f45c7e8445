#pragma once
// NCCL's own cost model: the time NCCL's tuner predicts for a collective,
// per (algorithm, protocol), and the choice it makes among them (the
// minimum). Pinned to NCCL v2.30.7's src/graph/tuning.cc
// (ncclTunerConstantsDefaults, ncclTopoTuneModel, ncclTopoGetAlgoTime),
// as ../shared/reference/nccl_model.md transcribes it; the derivation and
// what is left out: docs/cost-models.md#nccls-tuning-model.
//
// Modelled: the Ring, Tree, NVLS, NVLSTree and PAT algorithms, the LL,
// LL128 and Simple protocols, all_reduce, all_gather, reduce_scatter,
// broadcast and reduce, one or several nodes; with in-network reduction
// (cluster.inter.collnet: SHARP switches and NCCL_COLLNET_ENABLE=1), the
// CollNetDirect and CollNetChain algorithms for all_reduce and NVLS across
// nodes. NVLS's and CollNetDirect's graphs (channels and speed) are derived
// from search.cc's accounting, not from a log (nvls_graph,
// collnet_direct_graph). Not modelled: CollNet for all_gather and
// reduce_scatter (it needs a plugin with iallgather / ireducescatter and a
// NIC for every GPU), tuner plugins, grouped launches (numPipeOps 1).

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "sim/op_sink.hpp"

namespace ddpsim::models {

enum class GpuArch : std::uint8_t { kVolta, kAmpere, kHopper, kBlackwell };
/// "volta", "ampere", "hopper", "blackwell" (cluster.gpu), or nothing.
std::optional<GpuArch> parse_gpu_arch(std::string_view name);
std::string_view to_string(GpuArch arch);
/// CUDA compute capability x 10 of each generation (70, 80, 90, 100).
int compute_capability(GpuArch arch);

/// NCCL's loop order is TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3,
/// NVLS 4, NVLS_TREE 5, PAT 6: nccl_costs lists them so (CollNet only where
/// the network reduces).
enum class NcclAlgo : std::uint8_t { kTree, kRing, kNvls, kNvlsTree, kPat, kCollNetDirect, kCollNetChain };
enum class NcclProto : std::uint8_t { kLL, kLL128, kSimple };
std::string_view to_string(NcclAlgo algo);
std::string_view to_string(NcclProto proto);

/// What NCCL's model reads of the machine.
struct NcclTopology {
  GpuArch arch = GpuArch::kAmpere;
  int nodes = 1;
  int gpus_per_node = 1;
  bool nvlink = true;        ///< GPUs of a node talk over NVLink (else PCIe)
  int channels = 1;          ///< graph.nChannels (before NCCL doubles them for launch)
  double bw_intra_GBps = 1;  ///< graph.bwIntra: per channel, inside a node
  double bw_inter_GBps = 1;  ///< graph.bwInter: per channel, between nodes
  bool intel_cpu = true;     ///< the host CPUs: Intel (else AMD or mixed), for the network overhead and LL caps
  double latency_inter_us = 0;  ///< graph.latencyInter: added to every network hop
  bool ll128 = true;         ///< LL128 enabled (NCCL: NVLink inside nodes, and the network path allows it)
  bool nvls = false;         ///< NVLink SHARP: NVSwitch nodes of Hopper or later
  bool nvswitch = false;     ///< a node's GPUs meet at an NVSwitch (CollNetDirect needs one)
  bool collnet = false;      ///< the network reduces (SHARP, NCCL_COLLNET_ENABLE=1): CollNet, and NVLS across nodes
  double nvlink_GBps = 0;    ///< a GPU's NVLink total, what the NVLS graph's search spends
  double net_GBps = 0;       ///< a node's NICs together
  int nics_per_node = 1;
  /// The ring and tree graph of a group across nodes, when it differs from
  /// the node's (channels, bw_intra_GBps, bw_inter_GBps): nccl_topology
  /// derives it from the NICs (net_graph).
  struct Graph {
    int channels = 1;
    double bw_intra_GBps = 1, bw_inter_GBps = 1;
  };
  std::optional<Graph> net;
};

/// The ring graph NCCL's search finds for a group across nodes [derived
/// from search.cc, not a log]: the fastest speed of the inter-node speed
/// array that one NIC carries, as many channels of it as the NICs (one
/// channel a NIC per speed's share) and each GPU's NVLink hold, at most 16;
/// bwIntra = bwInter = that speed, doubled channels at half speed from
/// 25 GB/s as on one node.
NcclTopology::Graph net_graph(GpuArch arch, double nvlink_GBps, int nics_per_node, double nic_GBps);

/// NCCL's NVLS graph for a group of `ppn` GPUs a node on `nodes` nodes, as
/// search.cc's two passes find it [derived from the code, not a log]:
/// - channels: one a GPU on one node ("the more the better"); across nodes
///   one a NIC, each NIC's local GPU its head;
/// - bwIntra: the fastest speed of the speed array (the inter-node array
///   across nodes) such that each GPU's NVSwitch link carries its own
///   channel twice and every other once, (ppn + 1) x speed <= nvlink_GBps,
///   and, across nodes, a NIC carries it;
/// - bwInter: raised from bwIntra along the array while below twice bwIntra
///   and, across nodes, while a NIC carries it.
/// A DGX H100: 8 channels, 40 / 60 GB/s, so all_reduce's bus bandwidth
/// 8 x 40 x 0.85 x 7/8 x 2 = 476 GB/s, nccl-tests#290's plateau (474).
struct NvlsGraph {
  int channels = 0;  ///< 0: no NVLS for this group
  double bw_intra_GBps = 0, bw_inter_GBps = 0;
};
NvlsGraph nvls_graph(const NcclTopology& topo, int ppn, int nodes);

/// CollNetDirect's graph for `ppn` GPUs a node [derived from search.cc's
/// ncclTopoSearchTryCollnetDirect and ncclTopoSearchRecNet, not a log]: a
/// channel a NIC, each headed by a GPU of its own, at most
/// NCCL_MAX_DIRECT_ARITY + 1 = 8 and at most ppn; the fastest speed of the
/// inter-node array that a NIC carries and that each GPU's NVSwitch link
/// holds, as its own channel's head (the speed, to and from every other
/// GPU) and as a member of each other channel (speed / (ppn - 1)):
/// (1 + (channels - 1) / (ppn - 1)) x speed <= nvlink_GBps. bwIntra =
/// bwInter = that speed. No graph (0 channels) without an NVSwitch.
NvlsGraph collnet_direct_graph(const NcclTopology& topo, int ppn);

/// NCCL's graph search on a node whose GPUs reach each other at
/// `intra_GBps` (a GPU's NVLink total through NVSwitch, or PCIe): the
/// per-channel speed, the channel count, and the doubling of
/// ncclTopoDupChannels. Between nodes each channel gets an equal share of
/// the node's NICs, `inter_GBps` in all, at most its intra speed (the
/// ClusterSpec overload sets `net` and `nics_per_node` besides). `nvswitch`:
/// the node is a switch, so Hopper and later get NVLS.
NcclTopology nccl_topology(GpuArch arch, int nodes, int gpus_per_node, bool nvlink, double intra_GBps,
                           double inter_GBps, bool nvswitch = false);

/// NCCL's prediction for one (algorithm, protocol): latency (us),
/// algorithm bandwidth (GB/s; 0: not available) and the resulting time (us).
struct NcclCost {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  double latency_us = 0;      ///< the table's (NCCL_DEBUG_SUBSYS=TUNING prints it)
  double bandwidth_GBps = 0;  ///< the table's
  /// What this call's time uses: the latency after the multi-node ring's
  /// plateau factor, the bandwidth after the tree's size correction.
  double call_latency_us = 0, call_bandwidth_GBps = 0;
  double time_us = -1;  ///< -1: not available for this collective and machine
};

/// Every (algorithm, protocol) NCCL weighs for `kind` of `bytes` (nccl-tests'
/// size: the total for all_gather and reduce_scatter) over `ranks` ranks
/// placed node-major on `topo`, in NCCL's loop order (algorithm, then
/// protocol).
std::vector<NcclCost> nccl_costs(const NcclTopology& topo, sim::CollectiveKind kind, std::int64_t bytes, int ranks);
/// The one NCCL picks: the strict minimum time, the first in loop order on a tie.
NcclCost nccl_choice(const NcclTopology& topo, sim::CollectiveKind kind, std::int64_t bytes, int ranks);

/// NCCL's topology for `cluster` (cluster.gpu required): the intra-node
/// route bandwidth as a GPU's NVLink (or PCIe) total, the NICs of a node as
/// the network (nics_per_node x inter.bandwidth_GBps); NVLS where a node is
/// a switch (intra.topology star); for groups across nodes, net_graph's ring.
NcclTopology nccl_topology(const ClusterSpec& cluster);

/// The analytic engine with NCCL's tuning model (collective.model: nccl):
/// a collective takes what NCCL's model gives for the (algorithm, protocol)
/// NCCL picks, with its bandwidth times `bandwidth_scale`, plus `floor` (the
/// launch and synchronisation NCCL's model leaves out), both fitted by
/// `ddpsim calibrate --nccl-tests`. A slow link divides the bandwidth by its
/// factor (every algorithm crosses every rank's links).
class NcclTimer final : public CollectiveTimer {
 public:
  NcclTimer(const ClusterSpec& cluster, sim::Time floor, double bandwidth_scale);
  std::string_view engine() const override { return "analytic"; }
  sim::Time time(const sim::Collective& c, int group_size, const std::vector<SlowLink>& slow) override;
  /// The time in us and NCCL's choice, before rounding to the nanosecond.
  std::pair<double, NcclCost> predict(sim::CollectiveKind kind, std::int64_t bytes, int group_size, double slow_factor = 1) const;

 private:
  NcclTopology topology_;
  sim::Time floor_;
  double scale_;
};

}  // namespace ddpsim::models
