// NCCL v2.30.7's tuning model (models/nccl_model.hpp). Names follow
// src/graph/tuning.cc so that each line can be held against it.

#include "models/nccl_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>

#include "models/collective_library.hpp"

namespace ddpsim::models {
namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kPat = 4, kCollNetDirect = 5, kCollNetChain = 6;  // NcclAlgo's
constexpr int kNvlink = 0, kPci = 1, kNet = 2;

// ncclTunerConstantsDefaults, us; [algorithm][protocol].
constexpr double kBaseLat[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
// [link][algorithm][protocol]
constexpr double kHwLat[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},   // NVLink
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},    // PCI
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},  // NET
};
// GB/s; [Volta, Ampere, Hopper, Blackwell][1 node, 2 nodes, more].
constexpr double kLlMaxBws[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChMaxRingLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChMaxTreeLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChMaxTreeBws[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
// NVLS and NVLSTree: Simple only, base latency 0; hwLat [algorithm - kNvls][link].
constexpr double kNvlsHwLat[2][3] = {{25, 0, 18}, {25, 0, 20.9}};
constexpr double kPerChMaxNvlsTreeBws[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 57.7, 45.5}, {0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0, 0, 0.85, 0.74};
constexpr double kPatBaseLat = 8.0;  // every protocol; only Simple runs
// CollNetDirect and CollNetChain: Simple only, base latency 0; hwLat [algorithm - kCollNetDirect][link].
constexpr double kCollNetHwLat[2][3] = {{3.7, 3.7, 31}, {2.8, 2.8, 30}};
constexpr int kMaxDirectHeads = 8;  // NCCL_MAX_DIRECT_ARITY + 1
// treeCorrectionFactor[protocol][log2(bytes / 64)].
constexpr double kTreeCorrection[3][24] = {
    {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1},
    {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
};
// ncclTopoCompute's per-channel speeds, GB/s: speedArrayIntra, sm90SpeedArrayIntra; Blackwell's
// starts at 90 (the reference gives only its first entry; the rest are sm90's).
constexpr double kSpeedIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr double kSpeedIntraSm90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSpeedIntraSm100[] = {90, 60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
// The multi-node search's (speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter), v2.30.7.
constexpr double kSpeedInter[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
constexpr double kSpeedInterSm90[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
constexpr double kSpeedInterSm100[] = {96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};

std::span<const double> speed_array(GpuArch arch, bool inter) {
  if (arch == GpuArch::kBlackwell) return inter ? std::span<const double>(kSpeedInterSm100) : kSpeedIntraSm100;
  if (arch == GpuArch::kHopper) return inter ? std::span<const double>(kSpeedInterSm90) : kSpeedIntraSm90;
  return inter ? std::span<const double>(kSpeedInter) : kSpeedIntra;
}
constexpr int kMaxSearchChannels = 16;  // MAXCHANNELS / 2

int log2i(std::int64_t n) {
  int l = -1;
  while (n > 0) {
    n >>= 1;
    ++l;
  }
  return l;
}

struct Shape {
  int nodes, ppn, ranks;
  int index2() const { return nodes == 1 ? 0 : nodes == 2 ? 1 : 2; }
};

int nsteps_of(sim::CollectiveKind kind, int n) {
  switch (kind) {
    case sim::CollectiveKind::kAllReduce: return 2 * (n - 1);
    case sim::CollectiveKind::kAllGather:
    case sim::CollectiveKind::kReduceScatter: return n - 1;
    case sim::CollectiveKind::kBroadcast:
    case sim::CollectiveKind::kReduce: return n;
    case sim::CollectiveKind::kBarrier:
    case sim::CollectiveKind::kAllToAll: break;
  }
  throw std::logic_error("NCCL model: no step count for this collective");
}

// The ring and tree graph of a group of this shape.
NcclTopology::Graph graph_of(const NcclTopology& t, const Shape& s) {
  if (s.nodes > 1 && t.net) return *t.net;
  return {t.channels, t.bw_intra_GBps, t.bw_inter_GBps};
}

// NVLS and NVLSTree's algorithm bandwidth, GB/s; 0: disabled.
double nvls_bandwidth(const NcclTopology& t, const Shape& s, sim::CollectiveKind kind, int a, int p) {
  const bool all_reduce = kind == sim::CollectiveKind::kAllReduce;
  const bool gather_scatter = kind == sim::CollectiveKind::kAllGather || kind == sim::CollectiveKind::kReduceScatter;
  if (p != kSimple || !(all_reduce || (gather_scatter && a == kNvls))) return 0;
  // NVLSTree is off on one node; NVLS across nodes needs CollNet (the network's SHARP).
  if ((a == kNvlsTree && s.nodes == 1) || (a == kNvls && s.nodes > 1 && !t.collnet)) return 0;
  const NvlsGraph g = nvls_graph(t, s.ppn, s.nodes);
  if (g.channels < 2) return 0;
  const int cc = static_cast<int>(t.arch);
  double intra = g.bw_intra_GBps * kNvlsEfficiency[cc] * (g.channels - 1) / g.channels;
  intra *= all_reduce ? 2.0 : (s.ppn - 1.0) / s.ppn;  // all_reduce pipelines two operations
  const double inter = g.bw_inter_GBps * (a == kNvlsTree && s.nodes <= 2 ? 2 : 1);
  double bw = std::min(intra, inter);
  if (a == kNvlsTree) bw = std::min(bw, kPerChMaxNvlsTreeBws[cc][s.index2()]);
  const double bus = g.channels * bw;
  return all_reduce ? bus * s.ranks / nsteps_of(kind, s.ranks) : bus;  // no ratio for all_gather, reduce_scatter
}

// PAT's: all_gather and reduce_scatter, Simple, one GPU a node (ncclPatEnable; its SM60 rule holds for
// every generation modelled), on the tree's graph; x 0.75, and no ratio n / nsteps (not a ring).
double pat_bandwidth(const NcclTopology& t, const Shape& s, sim::CollectiveKind kind, int p) {
  const bool gather_scatter = kind == sim::CollectiveKind::kAllGather || kind == sim::CollectiveKind::kReduceScatter;
  if (!gather_scatter || p != kSimple || s.ppn != 1) return 0;
  const NcclTopology::Graph g = graph_of(t, s);
  return 0.75 * g.channels * (s.nodes <= 2 ? g.bw_intra_GBps : g.bw_inter_GBps);
}

// CollNetDirect's and CollNetChain's: all_reduce, Simple, across nodes where the network reduces
// (NCCL_COLLNET_NODE_THRESHOLD 2); bw is bwIntra whatever the node count; Direct needs an NVSwitch and
// divides by its GPU:NIC factor (x 0.85 from sm90); x 0.5, not a ring.
double collnet_bandwidth(const NcclTopology& t, const Shape& s, sim::CollectiveKind kind, int a, int p) {
  if (!t.collnet || s.nodes < 2 || kind != sim::CollectiveKind::kAllReduce || p != kSimple) return 0;
  double bus = 0;
  if (a == kCollNetDirect) {
    const NvlsGraph g = collnet_direct_graph(t, s.ppn);
    if (g.channels == 0) return 0;
    double factor = static_cast<double>(s.ppn) / g.channels;
    factor -= (factor - 1) / 2;
    bus = g.channels * g.bw_intra_GBps / factor;
    if (compute_capability(t.arch) >= 90) bus *= 0.85;
  } else {  // CollNetChain: the tree pattern on the ring's channels
    const NcclTopology::Graph g = graph_of(t, s);
    bus = g.channels * g.bw_intra_GBps;
  }
  return bus * 0.5;
}

// The algorithm bandwidth NCCL's table holds for (kind, a, p), GB/s; 0: disabled.
double bandwidth(const NcclTopology& t, const Shape& s, sim::CollectiveKind kind, int a, int p) {
  if (a == kCollNetDirect || a == kCollNetChain) return collnet_bandwidth(t, s, kind, a, p);
  if (a == kPat) return pat_bandwidth(t, s, kind, p);
  if (a >= kNvls) return nvls_bandwidth(t, s, kind, a, p);
  const bool all_reduce = kind == sim::CollectiveKind::kAllReduce;
  if (a == kTree && !all_reduce) return 0;  // Tree: all_reduce only
  if (p == kLL128 && !t.ll128) return 0;
  const int cc = static_cast<int>(t.arch), i2 = s.index2();
  const NcclTopology::Graph g = graph_of(t, s);
  const double nch = g.channels;
  const double ll_max = s.nodes == 1 ? kLlMaxBws[cc][0] : kLlMaxBws[t.intel_cpu ? 0 : 1][i2];
  double bus = nch * (s.nodes <= 2 ? g.bw_intra_GBps : g.bw_inter_GBps);
  if (a == kRing && p == kLL) bus = std::min(ll_max, 0.5 * bus);
  if (a == kRing && p == kLL128) bus = std::min(0.92 * bus, nch * kPerChMaxRingLL128Bws[cc][i2]);
  if (a == kTree && all_reduce) bus = std::min(0.92 * bus, nch * kPerChMaxTreeBws[cc][i2]);
  if (a == kTree && p == kLL) bus = std::min(bus / 3.8, ll_max);
  if (a == kTree && p == kLL128) bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * kPerChMaxTreeLL128Bws[cc][i2]);
  const int nsteps = nsteps_of(kind, s.ranks);
  return a == kRing ? bus * s.ranks / nsteps : bus * 0.5;
}

// The latency NCCL's table holds for (kind, a, p), us.
double latency(const NcclTopology& t, const Shape& s, sim::CollectiveKind kind, int a, int p) {
  if (a == kCollNetDirect || a == kCollNetChain) {  // Simple only; base latency 0
    const double intra = kCollNetHwLat[a - kCollNetDirect][t.nvlink ? kNvlink : kPci];
    const double inter = (s.ppn == 1 ? kHwLat[kNet][kTree][p] : kCollNetHwLat[a - kCollNetDirect][kNet]) +
                         (p == kSimple ? 2 : 1) * t.latency_inter_us;
    if (a == kCollNetChain) return 2 * (s.ppn - 1) * intra + inter;
    return 2 * (std::min(1, s.ppn - 1) * intra + (s.ppn - 1) * 0.4) + inter;  // 0.4 us of arity serialization
  }
  if (a == kPat) {  // one GPU a node, so the network's Tree latency; a log and a linear part
    const double inter = kHwLat[kNet][kTree][p] + (p == kSimple ? 2 : 1) * t.latency_inter_us;
    return kPatBaseLat + log2i(s.nodes) * inter / 3.5 + 2.8 * s.ranks;
  }
  if (a >= kNvls) {  // Simple only; base latency 0
    const double intra = kNvlsHwLat[a - kNvls][t.nvlink ? kNvlink : kPci];
    const double inter = (s.ppn == 1 ? kHwLat[kNet][kTree][p] : kNvlsHwLat[a - kNvls][kNet]) + 2 * t.latency_inter_us;
    if (a == kNvls) return intra + (s.nodes > 1 ? inter : 0);
    return intra + 2 * log2i(s.nodes) * inter;
  }
  double lat = kBaseLat[a][p];
  double intra = kHwLat[t.nvlink ? kNvlink : kPci][a][p];
  double inter = (s.ppn == 1 ? kHwLat[kNet][kTree][p] : kHwLat[kNet][a][p]) + t.latency_inter_us;
  if (p == kSimple) inter += t.latency_inter_us;  // the flush
  const bool ring_like = kind == sim::CollectiveKind::kAllReduce || kind == sim::CollectiveKind::kAllGather ||
                         kind == sim::CollectiveKind::kReduceScatter;
  if (a == kRing && ring_like) {
    const double net_overhead = (t.intel_cpu ? 1.0 : 2.0) * (p == kSimple ? 3 : 1);
    if (s.nodes > 1) intra = std::max(intra, net_overhead);
    const int nsteps = nsteps_of(kind, s.ranks);
    const int inter_steps = s.nodes == 1 ? 0 : kind == sim::CollectiveKind::kAllReduce ? 2 * (s.nodes - 1) : s.nodes - 1;
    lat += (nsteps - inter_steps) * intra + inter_steps * inter;
  } else if (a == kRing) {  // broadcast, reduce: one hop's latency on the same channels
    lat += s.nodes > 1 ? kHwLat[kNet][kRing][p] : intra;
  } else {  // Tree all_reduce
    lat += 2 * ((s.ppn - 1) * intra + log2i(s.nodes) * inter);
  }
  return lat;
}

}  // namespace

std::optional<GpuArch> parse_gpu_arch(std::string_view name) {
  for (GpuArch a : {GpuArch::kVolta, GpuArch::kAmpere, GpuArch::kHopper, GpuArch::kBlackwell}) {
    if (to_string(a) == name) return a;
  }
  return std::nullopt;
}

std::string_view to_string(GpuArch arch) {
  switch (arch) {
    case GpuArch::kVolta: return "volta";
    case GpuArch::kAmpere: return "ampere";
    case GpuArch::kHopper: return "hopper";
    case GpuArch::kBlackwell: return "blackwell";
  }
  return "?";
}

int compute_capability(GpuArch arch) {
  switch (arch) {
    case GpuArch::kVolta: return 70;
    case GpuArch::kAmpere: return 80;
    case GpuArch::kHopper: return 90;
    case GpuArch::kBlackwell: return 100;
  }
  return 0;
}

std::string_view to_string(NcclAlgo algo) {
  switch (algo) {
    case NcclAlgo::kTree: return "tree";
    case NcclAlgo::kRing: return "ring";
    case NcclAlgo::kNvls: return "nvls";
    case NcclAlgo::kNvlsTree: return "nvls_tree";
    case NcclAlgo::kPat: return "pat";
    case NcclAlgo::kCollNetDirect: return "collnet_direct";
    case NcclAlgo::kCollNetChain: return "collnet_chain";
  }
  return "?";
}

std::string_view to_string(NcclProto proto) {
  switch (proto) {
    case NcclProto::kLL: return "LL";
    case NcclProto::kLL128: return "LL128";
    case NcclProto::kSimple: return "Simple";
  }
  return "?";
}

NcclTopology nccl_topology(GpuArch arch, int nodes, int gpus_per_node, bool nvlink, double intra_GBps, double inter_GBps,
                           bool nvswitch) {
  if (nodes < 1 || gpus_per_node < 1 || !(intra_GBps > 0) || (nodes > 1 && !(inter_GBps > 0))) {
    throw std::invalid_argument("NCCL topology: nodes, GPUs and bandwidths must be positive");
  }
  NcclTopology t;
  t.arch = arch;
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  t.nvlink = nvlink;
  t.ll128 = nvlink;
  // NVLS: NVSwitch (multicast) and compute capability 9.0 or later (search.cc).
  t.nvls = nvswitch && nvlink && compute_capability(arch) >= 90;
  t.nvswitch = nvswitch && nvlink;
  t.nvlink_GBps = intra_GBps;
  t.net_GBps = nodes > 1 ? inter_GBps : 0;
  // The fastest per-channel speed the node's bandwidth holds, and as many channels of it as fit.
  const std::span<const double> speeds = speed_array(arch, false);
  const auto speed = std::find_if(speeds.begin(), speeds.end(), [&](double s) { return s <= intra_GBps; });
  const double bw = speed == speeds.end() ? intra_GBps : *speed;
  int channels = std::clamp(static_cast<int>(intra_GBps / bw), 1, kMaxSearchChannels);
  double per_channel = bw;
  // ncclTopoDupChannels.
  const int cc = compute_capability(arch);
  if (per_channel >= 25 && !(cc > 80 && per_channel < 50 && channels > 4)) {
    channels *= 2;
    per_channel /= 2;
  }
  t.channels = channels;
  t.bw_intra_GBps = per_channel;
  t.bw_inter_GBps = per_channel;
  // Each channel crosses the network on one NIC: the node's NIC bandwidth
  // shared by the channels. NCCL's model reads it only beyond two nodes
  // (ncclTopoTuneModel: bw = nNodes <= 2 ? bwIntra : bwInter).
  if (nodes > 1) t.bw_inter_GBps = std::min(per_channel, inter_GBps / channels);
  return t;
}

NcclTopology::Graph net_graph(GpuArch arch, double nvlink_GBps, int nics_per_node, double nic_GBps) {
  const std::span<const double> speeds = speed_array(arch, true);
  const auto fits = std::find_if(speeds.begin(), speeds.end(), [&](double v) { return v <= nic_GBps && v <= nvlink_GBps; });
  const double speed = fits == speeds.end() ? std::min(nic_GBps, nvlink_GBps) : *fits;
  const int by_nics = nics_per_node * std::max(1, static_cast<int>(nic_GBps / speed));
  const int by_nvlink = std::max(1, static_cast<int>(nvlink_GBps / speed));
  NcclTopology::Graph g{std::min({by_nics, by_nvlink, kMaxSearchChannels}), speed, speed};
  const int cc = compute_capability(arch);
  if (speed >= 25 && !(cc > 80 && speed < 50 && g.channels > 4)) {  // ncclTopoDupChannels
    g.channels *= 2;
    g.bw_intra_GBps /= 2;
    g.bw_inter_GBps /= 2;
  }
  return g;
}

NvlsGraph nvls_graph(const NcclTopology& t, int ppn, int nodes) {
  NvlsGraph g;
  if (!t.nvls || ppn < 2 || nodes < 1) return g;
  // Across nodes each channel's head GPU has its own NIC (at most one channel a NIC), whose bandwidth
  // bounds bwInter; the search then starts from the inter-node speed array.
  const bool multi = nodes > 1;
  const int nics = multi ? std::max(1, std::min(ppn, t.nics_per_node)) : ppn;
  const double nic_GBps = multi ? t.net_GBps / t.nics_per_node : std::numeric_limits<double>::infinity();
  const std::span<const double> speeds = speed_array(t.arch, multi);
  // Pass 1: each GPU's NVSwitch link carries its own channel twice and every other once, both ways.
  std::size_t i = 0;
  while (i < speeds.size() && (speeds[i] > nic_GBps || (ppn + 1) * speeds[i] > t.nvlink_GBps)) ++i;
  if (i == speeds.size()) return g;
  g.channels = nics;
  g.bw_intra_GBps = g.bw_inter_GBps = speeds[i];
  // Pass 2 (NVLS): raise bwInter while the NICs carry it, up to twice bwIntra.
  while (i > 0 && g.bw_inter_GBps < 2 * g.bw_intra_GBps && speeds[i - 1] <= nic_GBps) g.bw_inter_GBps = speeds[--i];
  return g;
}

NvlsGraph collnet_direct_graph(const NcclTopology& t, int ppn) {
  NvlsGraph g;
  if (!t.nvswitch || ppn < 1) return g;
  const int heads = std::max(1, std::min({t.nics_per_node, ppn, kMaxDirectHeads}));
  const double nic_GBps = t.net_GBps / t.nics_per_node;
  const double per_speed = ppn > 1 ? 1 + static_cast<double>(heads - 1) / (ppn - 1) : 1;
  const std::span<const double> speeds = speed_array(t.arch, true);
  const auto fits = std::find_if(speeds.begin(), speeds.end(),
                                 [&](double v) { return v <= nic_GBps && per_speed * v <= t.nvlink_GBps; });
  if (fits == speeds.end()) return g;
  g.channels = heads;
  g.bw_intra_GBps = g.bw_inter_GBps = *fits;
  return g;
}

std::vector<NcclCost> nccl_costs(const NcclTopology& topo, sim::CollectiveKind kind, std::int64_t bytes, int ranks) {
  if (ranks < 1 || bytes < 0) throw std::invalid_argument("NCCL model: ranks must be at least 1 and bytes >= 0");
  if (kind == sim::CollectiveKind::kAllToAll) {
    throw std::invalid_argument("NCCL runs all_to_all as grouped send/recv, outside its tuning model");
  }
  if (kind == sim::CollectiveKind::kBarrier) {
    const sim::Collective as = priced_as(sim::Collective{kind, bytes});
    kind = as.kind;
    bytes = as.bytes;
  }
  if (ranks == 1) return {NcclCost{NcclAlgo::kRing, NcclProto::kSimple, 0, 0, 0, 0, 0}};
  const Shape s{(ranks + topo.gpus_per_node - 1) / topo.gpus_per_node, std::min(ranks, topo.gpus_per_node), ranks};
  const int cc = compute_capability(topo.arch);
  std::vector<NcclCost> out;
  static constexpr int kOrder[] = {kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat};
  for (int a : kOrder) {
    if ((a == kCollNetDirect || a == kCollNetChain) && !topo.collnet) continue;  // listed where the network reduces
    for (int p : {kLL, kLL128, kSimple}) {
      NcclCost c{static_cast<NcclAlgo>(a), static_cast<NcclProto>(p), latency(topo, s, kind, a, p),
                 bandwidth(topo, s, kind, a, p), 0, 0, -1};
      if (c.bandwidth_GBps > 0) {
        double bw = c.bandwidth_GBps, lat = c.latency_us;
        const int log_size = log2i(bytes >> 6);
        const bool all_reduce = kind == sim::CollectiveKind::kAllReduce;
        if (a == kTree && all_reduce && log_size >= 0 && log_size < 24) bw *= kTreeCorrection[p][log_size];
        if (a == kNvlsTree && all_reduce && log_size >= 0 && log_size < 24 && cc >= 100) {
          bw *= kTreeCorrection[p][log_size];  // x86 hosts, which the model assumes
        }
        if (a == kRing && p == kSimple && all_reduce && s.nodes > 1 &&
            bytes / (static_cast<std::int64_t>(graph_of(topo, s).channels) * ranks) >= 64) {
          lat *= cc < 80 ? 1.9 : 1.4;  // the multi-node ring's "plateau effect"
        }
        c.call_latency_us = lat;
        c.call_bandwidth_GBps = bw;
        c.time_us = lat + static_cast<double>(bytes) / (1000 * bw);
      }
      out.push_back(c);
    }
  }
  return out;
}

NcclCost nccl_choice(const NcclTopology& topo, sim::CollectiveKind kind, std::int64_t bytes, int ranks) {
  NcclCost best;
  double best_time = std::numeric_limits<double>::infinity();
  for (const NcclCost& c : nccl_costs(topo, kind, bytes, ranks)) {
    if (c.time_us >= 0 && c.time_us < best_time) {
      best = c;
      best_time = c.time_us;
    }
  }
  if (!std::isfinite(best_time)) throw std::logic_error("NCCL model: no algorithm and protocol available");
  return best;
}

NcclTopology nccl_topology(const ClusterSpec& cluster) {
  if (!cluster.gpu) throw std::invalid_argument("NCCL's model needs the cluster's GPU generation");
  NcclTopology t = nccl_topology(*cluster.gpu, cluster.nodes, cluster.gpus_per_node, cluster.nvlink,
                                 cluster.intra.bandwidth_GBps, cluster.nics_per_node * cluster.inter.bandwidth_GBps,
                                 cluster.intra.topology == Fabric::Topology::kStar);
  t.nics_per_node = cluster.nics_per_node;
  t.collnet = cluster.nodes > 1 && cluster.inter.collnet;
  if (cluster.nodes > 1) {
    t.net = net_graph(*cluster.gpu, cluster.intra.bandwidth_GBps, cluster.nics_per_node, cluster.inter.bandwidth_GBps);
  }
  return t;
}

NcclTimer::NcclTimer(const ClusterSpec& cluster, sim::Time floor, double bandwidth_scale)
    : topology_(nccl_topology(cluster)), floor_(floor), scale_(bandwidth_scale) {
  if (!(bandwidth_scale > 0) || !std::isfinite(bandwidth_scale)) throw std::invalid_argument("bandwidth scale must be positive");
}

std::pair<double, NcclCost> NcclTimer::predict(sim::CollectiveKind kind, std::int64_t bytes, int group_size,
                                               double slow_factor) const {
  const NcclCost c = nccl_choice(topology_, kind, bytes, group_size);
  if (group_size == 1) return {floor_.us(), c};
  const auto sent = static_cast<double>(priced_as(sim::Collective{kind, bytes}).bytes);
  return {floor_.us() + c.call_latency_us + sent / (1000 * c.call_bandwidth_GBps * scale_) * slow_factor, c};
}

sim::Time NcclTimer::time(const sim::Collective& c, int group_size, const std::vector<SlowLink>& slow) {
  if (group_size < 1 || group_size > topology_.nodes * topology_.gpus_per_node) {
    throw std::invalid_argument("group larger than the cluster");
  }
  double factor = 1;
  for (const SlowLink& s : slow) {
    if (s.rank < group_size) factor = std::max(factor, s.factor);
  }
  return sim::Time::from_ns(1000 * predict(c.kind, c.bytes, group_size, factor).first,
                            "a collective's time under NCCL's model (collective.* and cluster: against world_size)");
}

}  // namespace ddpsim::models
