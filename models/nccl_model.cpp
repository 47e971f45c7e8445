// NCCL v2.30.7's tuning model (models/nccl_model.hpp). Names follow
// src/graph/tuning.cc so that each line can be held against it.

#include "models/nccl_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/collective_library.hpp"

namespace ddpsim::models {
namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kTree = 0, kRing = 1;
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

// The algorithm bandwidth NCCL's table holds for (kind, a, p), GB/s; 0: disabled.
double bandwidth(const NcclTopology& t, const Shape& s, sim::CollectiveKind kind, int a, int p) {
  const bool all_reduce = kind == sim::CollectiveKind::kAllReduce;
  if (a == kTree && !all_reduce) return 0;  // Tree: all_reduce only
  if (p == kLL128 && !t.ll128) return 0;
  const int cc = static_cast<int>(t.arch), i2 = s.index2();
  const double nch = t.channels;
  const double ll_max = s.nodes == 1 ? kLlMaxBws[cc][0] : kLlMaxBws[t.intel_cpu ? 0 : 1][i2];
  double bus = nch * (s.nodes <= 2 ? t.bw_intra_GBps : t.bw_inter_GBps);
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

std::string_view to_string(NcclAlgo algo) { return algo == NcclAlgo::kTree ? "tree" : "ring"; }

std::string_view to_string(NcclProto proto) {
  switch (proto) {
    case NcclProto::kLL: return "LL";
    case NcclProto::kLL128: return "LL128";
    case NcclProto::kSimple: return "Simple";
  }
  return "?";
}

NcclTopology nccl_topology(GpuArch arch, int nodes, int gpus_per_node, bool nvlink, double intra_GBps, double inter_GBps) {
  if (nodes < 1 || gpus_per_node < 1 || !(intra_GBps > 0) || (nodes > 1 && !(inter_GBps > 0))) {
    throw std::invalid_argument("NCCL topology: nodes, GPUs and bandwidths must be positive");
  }
  NcclTopology t;
  t.arch = arch;
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  t.nvlink = nvlink;
  t.ll128 = nvlink;
  // The fastest per-channel speed the node's bandwidth holds, and as many channels of it as fit.
  const double* first = arch == GpuArch::kBlackwell ? std::begin(kSpeedIntraSm100)
                        : arch == GpuArch::kHopper  ? std::begin(kSpeedIntraSm90)
                                                    : std::begin(kSpeedIntra);
  const double* last = arch == GpuArch::kBlackwell ? std::end(kSpeedIntraSm100)
                       : arch == GpuArch::kHopper  ? std::end(kSpeedIntraSm90)
                                                   : std::end(kSpeedIntra);
  const double* speed = std::find_if(first, last, [&](double s) { return s <= intra_GBps; });
  const double bw = speed == last ? intra_GBps : *speed;
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
  for (int a : {kTree, kRing}) {
    for (int p : {kLL, kLL128, kSimple}) {
      NcclCost c{static_cast<NcclAlgo>(a), static_cast<NcclProto>(p), latency(topo, s, kind, a, p),
                 bandwidth(topo, s, kind, a, p), 0, 0, -1};
      if (c.bandwidth_GBps > 0) {
        double bw = c.bandwidth_GBps, lat = c.latency_us;
        const int log_size = log2i(bytes >> 6);
        const bool all_reduce = kind == sim::CollectiveKind::kAllReduce;
        if (a == kTree && all_reduce && log_size >= 0 && log_size < 24) bw *= kTreeCorrection[p][log_size];
        if (a == kRing && p == kSimple && all_reduce && s.nodes > 1 &&
            bytes / (static_cast<std::int64_t>(topo.channels) * ranks) >= 64) {
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
  return nccl_topology(*cluster.gpu, cluster.nodes, cluster.gpus_per_node, cluster.nvlink, cluster.intra.bandwidth_GBps,
                       cluster.nics_per_node * cluster.inter.bandwidth_GBps);
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
  return sim::Time::ns(std::llround(1000 * predict(c.kind, c.bytes, group_size, factor).first));
}

}  // namespace ddpsim::models
