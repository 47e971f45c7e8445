#include "models/cluster.hpp"

#include "models/collective_library.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddpsim::models {

std::vector<sim::Time> CollectiveTimer::time_together(const std::vector<GroupCall>&, const std::vector<SlowLink>&) {
  throw std::invalid_argument("only the SimGrid engine runs the collectives of several process groups at once");
}

std::vector<sim::Time> CollectiveTimer::time_together(const sim::Collective& c,
                                                      const std::vector<std::vector<int>>& groups) {
  std::vector<GroupCall> calls;
  for (const std::vector<int>& ranks : groups) calls.push_back({c, ranks});
  return time_together(calls);
}

std::vector<SlowLink> after_change(std::vector<SlowLink> slow, const SlowLink& change) {
  std::erase_if(slow, [&](const SlowLink& s) { return s.rank == change.rank; });
  if (change.factor > 1) slow.push_back(change);
  return slow;
}

std::vector<std::vector<std::pair<int, int>>> binomial_tree_rounds(int world_size) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (int span = 1; span < world_size; span *= 2) {
    std::vector<std::pair<int, int>>& round = rounds.emplace_back();
    for (int v = 0; v < span && v + span < world_size; ++v) round.emplace_back(v, v + span);
    if (span > world_size / 2) break;  // the next doubling would pass world_size (and could overflow)
  }
  return rounds;
}

std::vector<SlowLink> slow_links_in(const std::vector<SlowLink>& slow, const std::vector<int>& ranks) {
  std::vector<SlowLink> out;
  for (const SlowLink& s : slow) {
    const auto at = std::find(ranks.begin(), ranks.end(), s.rank);
    if (at != ranks.end()) out.push_back({static_cast<int>(at - ranks.begin()), s.factor});
  }
  return out;
}

bool nic_routes_cross_gpu_links(const ClusterSpec& cluster) {
  return !cluster.nvlink && cluster.intra.topology == Fabric::Topology::kStar && cluster.gpus_per_node > 1 &&
         cluster.nodes > 1;
}

ClusterSpec single_switch(int gpus, const NetworkParams& net) {
  ClusterSpec c;
  c.nodes = 1;
  c.gpus_per_node = std::max(1, gpus);
  c.intra = Fabric{Fabric::Topology::kStar, net.bandwidth_GBps, net.latency, true, 1, 1};
  c.nics_per_node = 1;
  c.inter = c.intra;
  return c;
}

std::string_view to_string(Fabric::Topology topology) {
  switch (topology) {
    case Fabric::Topology::kStar: return "star";
    case Fabric::Topology::kRing: return "ring";
    case Fabric::Topology::kFatTree: return "fat_tree";
  }
  return "?";
}

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kHierarchical: return "hierarchical";
    case Algorithm::kAuto: return "auto";
    case Algorithm::kBinomial: return "binomial";
  }
  return "?";
}

Hop route(const ClusterSpec& cluster, int a, int b, Sharing sharing) {
  const int g = cluster.gpus_per_node;
  const int node_a = a / g, node_b = b / g;
  if (node_a == node_b) {
    if (cluster.intra.topology == Fabric::Topology::kRing) {
      const int d = ((b % g) - (a % g) + g) % g;
      const int links = std::min(d, g - d);
      return {cluster.intra.latency.times(links, "a route's latency (cluster.intra latency x its links)"), cluster.intra.bandwidth_GBps * sharing.intra};
    }
    double bw = cluster.intra.bandwidth_GBps * sharing.intra;
    // Behind two PCIe switches: both uplinks, one direction each.
    if (cluster.pcie_switches() > 1 && (a % g) / cluster.gpus_per_switch != (b % g) / cluster.gpus_per_switch) {
      bw = std::min(bw, cluster.switch_uplink_GBps * sharing.switch_uplink);
    }
    return {cluster.intra.latency, bw};
  }
  const Fabric& f = cluster.inter;
  double bw = f.bandwidth_GBps * sharing.nic;
  // On PCIe nodes the route leaves and enters through the GPUs' own links:
  // one a ring (or a hierarchical algorithm's inter-node ring), k where the
  // crossings of k channels each leave through a GPU of their own.
  if (nic_routes_cross_gpu_links(cluster)) bw = std::min(bw, cluster.intra.bandwidth_GBps * std::max(1.0, sharing.nic));
  if (f.topology == Fabric::Topology::kFatTree && node_a / f.nodes_per_switch != node_b / f.nodes_per_switch) {
    // The leaf's uplink: every NIC under the leaf, divided by the oversubscription.
    bw = std::min(bw, f.nodes_per_switch * cluster.nics_per_node * f.bandwidth_GBps / f.oversubscription / sharing.uplink);
  }
  return {f.latency, bw};
}

int ring_channels(const ClusterSpec& cluster, int world_size) {
  const int g = cluster.gpus_per_node;
  if (world_size <= g || world_size % g != 0) return 1;
  return std::max(1, std::min(cluster.nics_per_node, g));
}

bool runs_on_channels(Algorithm algorithm, sim::CollectiveKind kind) {
  return algorithm == Algorithm::kAuto &&
         (kind == sim::CollectiveKind::kAllReduce || kind == sim::CollectiveKind::kBarrier ||
          kind == sim::CollectiveKind::kAllGather || kind == sim::CollectiveKind::kReduceScatter);
}

bool runs_hierarchical(Algorithm algorithm, const ClusterSpec& cluster, int world_size) {
  const int g = cluster.gpus_per_node;
  return (algorithm == Algorithm::kHierarchical || algorithm == Algorithm::kAuto) && g > 1 && world_size > g &&
         world_size % g == 0;
}

sim::Time hierarchical_all_reduce_time(const Hop& intra, const Hop& inter, sim::Time launch, std::int64_t bytes,
                                       int gpus_per_node, int nodes) {
  const double g = gpus_per_node, n = nodes, b = static_cast<double>(bytes);
  // Reduce-scatter and all-gather inside the node: 2(G-1) steps of b/G;
  // the inter-node ring all-reduce of b/G: 2(N-1) steps of b/(G N).
  const double ns = 2 * (g - 1) * (b / g) / intra.bandwidth_GBps + 2 * (n - 1) * (b / (g * n)) / inter.bandwidth_GBps;
  return launch + intra.latency.times(2 * (gpus_per_node - 1), "the intra-node latency term (cluster.intra latency x 2(gpus_per_node - 1))") +
         inter.latency.times(2 * (nodes - 1), "the inter-node latency term (cluster.inter latency x 2(nodes - 1))") +
         sim::Time::from_ns(ns, "a hierarchical all-reduce's transfer time (cluster: bandwidths against the bytes it moves)");
}

AnalyticTimer::AnalyticTimer(ClusterSpec cluster, sim::Time launch_overhead, Algorithm algorithm, Broadcast broadcast)
    : cluster_(cluster), launch_(launch_overhead), algorithm_(algorithm), broadcast_(broadcast) {}

namespace {

Hop slowed(Hop h, double factor) {
  h.bandwidth_GBps /= factor;
  return h;
}

double slow_factor(const std::vector<SlowLink>& slow, int rank) {
  double f = 1;
  for (const SlowLink& s : slow) {
    if (s.rank == rank) f = std::max(f, s.factor);
  }
  return f;
}

// Adds the hop a -> b to `hops` unless one alike is there, slowed by the
// factor of a slow rank at either end.
void add_hop(std::vector<Hop>& hops, const ClusterSpec& cluster, int a, int b, const std::vector<SlowLink>& slow,
             Sharing sharing) {
  Hop h = route(cluster, a, b, sharing);
  const double f = std::max(slow_factor(slow, a), slow_factor(slow, b));
  if (f > 1) h = slowed(h, f);
  const bool seen = std::any_of(hops.begin(), hops.end(), [&h](const Hop& o) {
    return o.latency == h.latency && o.bandwidth_GBps == h.bandwidth_GBps;
  });
  if (!seen) hops.push_back(h);
}

// The distinct hops of the ring members[0] -> members[1] -> ... -> members[0],
// the hops into and out of a slow rank slowed by its factor.
std::vector<Hop> ring_hops(const ClusterSpec& cluster, const std::vector<int>& members, const std::vector<SlowLink>& slow,
                           Sharing sharing = {}) {
  std::vector<Hop> hops;
  const std::size_t n = members.size();
  for (std::size_t i = 0; i < n; ++i) add_hop(hops, cluster, members[i], members[(i + 1) % n], slow, sharing);
  return hops;
}

// The most of a round's transfers that leave or enter one node.
int busiest_node(const ClusterSpec& cluster, int w, const std::vector<std::pair<int, int>>& round) {
  const int g = cluster.gpus_per_node;
  std::vector<int> out(static_cast<std::size_t>((w + g - 1) / g)), in(out.size());
  int most = 0;
  for (const auto& [from, to] : round) {
    const auto a = static_cast<std::size_t>(from / g), b = static_cast<std::size_t>(to / g);
    if (a != b) most = std::max({most, ++out[a], ++in[b]});
  }
  return most;
}

// The distinct hops of each round of a binomial broadcast over ranks 0 ..
// w-1 (binomial_tree_rounds). The transfers of a round that leave (or
// enter) one node share its NICs.
std::vector<std::vector<Hop>> tree_round_hops(const ClusterSpec& cluster, int w, const std::vector<SlowLink>& slow) {
  std::vector<std::vector<Hop>> rounds;
  for (const std::vector<std::pair<int, int>>& round : binomial_tree_rounds(w)) {
    const int crossing = busiest_node(cluster, w, round);
    const Sharing sharing{crossing > 0 ? std::min(1.0, static_cast<double>(cluster.nics_per_node) / crossing) : 1.0};
    std::vector<Hop>& hops = rounds.emplace_back();
    for (const auto& [from, to] : round) add_hop(hops, cluster, from, to, slow, sharing);
  }
  return rounds;
}

std::vector<int> iota_ranks(int first, int count, int stride) {
  std::vector<int> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[static_cast<std::size_t>(i)] = first + i * stride;
  return v;
}

}  // namespace

namespace {

std::vector<SlowLink> slow_in_group(const std::vector<SlowLink>& given, int w) {
  std::vector<SlowLink> slow;
  for (const SlowLink& s : given) {
    if (s.rank < w && s.factor > 1) slow.push_back(s);
  }
  return slow;
}

}  // namespace

sim::Time AnalyticTimer::time(const sim::Collective& given, int w, const std::vector<SlowLink>& given_slow) {
  const sim::Collective c = priced_as(given);
  if (w < 1 || w > cluster_.gpus()) throw std::invalid_argument("group larger than the cluster");
  if (w == 1) return collective_time(NetworkParams{sim::Time{}, 1, launch_}, c, 1);
  const std::vector<SlowLink> slow = slow_in_group(given_slow, w);
  if (c.kind == sim::CollectiveKind::kBroadcast && broadcast_ == Broadcast::kBinomialTree) {
    return tree_broadcast_time(c, w, slow);
  }
  if (c.kind == sim::CollectiveKind::kAllReduce && algorithm_ == Algorithm::kBinomial) {
    return binomial_all_reduce_time(c, w, slow);
  }
  const bool hierarchical = c.kind == sim::CollectiveKind::kAllReduce && runs_hierarchical(algorithm_, cluster_, w);
  if (hierarchical && algorithm_ == Algorithm::kHierarchical) return hierarchical_time(c, w, slow);
  const sim::Time ring = ring_time(c, w, slow);
  return hierarchical ? std::min(ring, hierarchical_time(c, w, slow)) : ring;
}

Algorithm AnalyticTimer::algorithm_for(const sim::Collective& given, int w) {
  const sim::Collective c = priced_as(given);
  if (w < 2 || c.kind != sim::CollectiveKind::kAllReduce || !runs_hierarchical(algorithm_, cluster_, w)) return Algorithm::kRing;
  if (algorithm_ == Algorithm::kHierarchical) return algorithm_;
  return hierarchical_time(c, w, {}) < ring_time(c, w, {}) ? Algorithm::kHierarchical : Algorithm::kRing;
}

sim::Time AnalyticTimer::hierarchical_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow) {
  // Every node's ring is alike, and so is every local GPU's inter-node
  // ring, except around a slow rank: take the slowest of each kind. Under
  // kAuto the G inter-node rings share the node's NICs and uplinks (the
  // hierarchical algorithm itself gives each a NIC: its goldens predate this).
  const int g = cluster_.gpus_per_node, nodes = w / g;
  const Sharing sharing = algorithm_ == Algorithm::kAuto
                              ? Sharing{std::min(1.0, static_cast<double>(cluster_.nics_per_node) / g), static_cast<double>(g)}
                              : Sharing{};
  std::vector<Hop> intra, inter;
  for (int n = 0; n < nodes; ++n) {
    for (const Hop& h : ring_hops(cluster_, iota_ranks(n * g, g, 1), slow)) intra.push_back(h);
  }
  for (int i = 0; i < g; ++i) {
    for (const Hop& h : ring_hops(cluster_, iota_ranks(i, nodes, g), slow, sharing)) inter.push_back(h);
  }
  sim::Time worst;
  for (const Hop& a : intra) {
    for (const Hop& b : inter) worst = std::max(worst, hierarchical_all_reduce_time(a, b, launch_, c.bytes, g, nodes));
  }
  return worst;
}

// gloo's broadcast: each round the whole buffer, one transfer a sender, at
// the round's slowest hop (latency + bytes / bandwidth, the NICs a round's
// transfers share out of one node divided among them: tree_round_hops);
// the rounds one after the other (a rank forwards what it received in full).
// Without slow links each W's rounds are kept (tree_hops_).
sim::Time AnalyticTimer::tree_broadcast_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow) {
  std::vector<std::vector<Hop>> with_slow;
  auto kept = tree_hops_.find(w);
  if (!slow.empty()) {
    with_slow = tree_round_hops(cluster_, w, slow);
  } else if (kept == tree_hops_.end()) {
    kept = tree_hops_.emplace(w, tree_round_hops(cluster_, w, slow)).first;
  }
  const std::vector<std::vector<Hop>>& rounds = slow.empty() ? kept->second : with_slow;
  sim::Time total = launch_;
  for (const std::vector<Hop>& hops : rounds) {
    sim::Time round;
    for (const Hop& h : hops) {
      round = std::max(round, collective_time(NetworkParams{h.latency, h.bandwidth_GBps, sim::Time{}}, c, 2));
    }
    total += round;
  }
  return total;
}

// The ring over ranks 0 .. w-1 priced at its slowest hop class; under kAuto
// with a channel per NIC, each crossing between nodes on a NIC of its own.
// Its GPU links inside a node carry every channel's flow, or all but one
// where every GPU heads a channel (on a star; a ring fabric is taken as
// fully loaded).
sim::Time AnalyticTimer::ring_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow) {
  const bool channels = runs_on_channels(algorithm_, c.kind) && ring_channels(cluster_, w) > 1;
  Sharing sharing;
  if (channels) {
    const int k = ring_channels(cluster_, w);
    sharing.nic = k;
    // Where every GPU heads a channel, its NVLink carries all channels but
    // that one, which leaves over PCIe; a PCIe link carries them all.
    if (k == cluster_.gpus_per_node && cluster_.intra.topology != Fabric::Topology::kRing &&
        !nic_routes_cross_gpu_links(cluster_)) {
      sharing.intra = k / (k - 1.0);
    }
    // Channel j enters a node at GPU j * G / k: each switch boundary, one
    // way, is crossed by every channel but the one entering at it, k - 1
    // flows of a k-th each (docs/cost-models.md#a-pcie-tree-inside-a-node).
    if (cluster_.pcie_switches() > 1) sharing.switch_uplink = k / (k - 1.0);
  }
  sim::Time worst;
  auto cached = slow.empty() ? flat_hops_.find({w, channels}) : flat_hops_.end();
  if (cached == flat_hops_.end()) {
    // One node on a switch has one hop class: no need to walk a million-rank ring.
    const bool one_class = cluster_.nodes == 1 && cluster_.intra.topology != Fabric::Topology::kRing &&
                           cluster_.pcie_switches() == 1 && slow.empty();
    std::vector<Hop> hops =
        one_class ? std::vector<Hop>{route(cluster_, 0, 1)} : ring_hops(cluster_, iota_ranks(0, w, 1), slow, sharing);
    if (!slow.empty()) {
      for (const Hop& h : hops) worst = std::max(worst, collective_time(NetworkParams{h.latency, h.bandwidth_GBps, launch_}, c, w));
      return worst;
    }
    cached = flat_hops_.emplace(std::make_pair(w, channels), std::move(hops)).first;
  }
  for (const Hop& h : cached->second) worst = std::max(worst, collective_time(NetworkParams{h.latency, h.bandwidth_GBps, launch_}, c, w));
  return worst;
}

namespace {

// The ranks a rank sends the sum to going down the binomial tree (libnbc's
// allred_sched_diss, rank 0 the root): v + span for every span above v.
std::vector<int> binomial_children(int v, int w) {
  std::vector<int> children;
  for (int span = 1; span < w; span *= 2) {
    if (v < span && v + span < w) children.push_back(v + span);
    if (span > w / 2) break;  // the next doubling would pass w (and could overflow)
  }
  return children;
}

}  // namespace

std::vector<std::vector<std::pair<int, int>>> binomial_up_rounds(int world_size) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (int span = 1; span < world_size; span *= 2) {
    std::vector<std::pair<int, int>>& round = rounds.emplace_back();
    for (int v = 0; v + span < world_size; v += 2 * span) round.emplace_back(v + span, v);
    if (span > world_size / 2) break;  // the next doubling would pass world_size (and could overflow)
  }
  return rounds;
}

std::vector<std::vector<std::pair<int, int>>> binomial_down_waves(int world_size) {
  std::vector<std::vector<std::pair<int, int>>> waves;
  std::vector<int> senders{0};
  while (!senders.empty()) {
    std::vector<std::pair<int, int>> wave;
    std::vector<int> reached;
    for (int v : senders) {
      for (int u : binomial_children(v, world_size)) {
        wave.emplace_back(v, u);
        reached.push_back(u);
      }
    }
    if (!wave.empty()) waves.push_back(std::move(wave));
    senders = std::move(reached);
  }
  return waves;
}

namespace {

// The binomial all-reduce's chains: when each rank holds the sum, given
// message(a, b) = {latency, bytes / bandwidth} of a message from a to b, in
// ns. Up (binomial_up_rounds): a rank adds a partial sum once both it and
// the sender are ready. Down (binomial_children): a rank sends to all its
// children at once, so they share its link: each holds the sum after the
// longest latency and all of their transfers.
template <typename Message>
std::vector<double> binomial_chains(int w, Message message) {
  std::vector<double> ready(static_cast<std::size_t>(w), 0.0);
  for (const std::vector<std::pair<int, int>>& round : binomial_up_rounds(w)) {
    for (const auto& [from, to] : round) {
      const auto [latency, transfer] = message(from, to);
      double& at = ready[static_cast<std::size_t>(to)];
      at = std::max(at, ready[static_cast<std::size_t>(from)]) + latency + transfer;
    }
  }
  std::vector<double> holds(static_cast<std::size_t>(w), 0.0);
  holds[0] = ready[0];
  for (int v = 0; v < w; ++v) {  // a child's number is above its parent's
    const std::vector<int> children = binomial_children(v, w);
    double latency = 0, transfers = 0;
    for (int u : children) {
      const auto [lat, transfer] = message(v, u);
      latency = std::max(latency, lat);
      transfers += transfer;
    }
    for (int u : children) holds[static_cast<std::size_t>(u)] = holds[static_cast<std::size_t>(v)] + latency + transfers;
  }
  return holds;
}

}  // namespace

BinomialCounts binomial_all_reduce_counts(int world_size) {
  if (world_size < 2) return {};
  // Latency 1 and bytes 1000 (a transfer's time 1 + 1000): the slowest chain is the one with most transfers,
  // then most latencies; both counts read back exactly.
  const std::vector<double> holds = binomial_chains(world_size, [](int, int) { return std::pair{1.0, 1000.0}; });
  const double worst = *std::max_element(holds.begin(), holds.end());
  const int transfers = static_cast<int>(worst / 1000);
  return {static_cast<int>(std::lround(worst - 1000.0 * transfers)), transfers};
}

// kBinomial: each message at its route's latency and bandwidth (a slow
// rank's, slowed), up the tree and down it; the all-reduce ends when the
// last rank holds the sum.
sim::Time AnalyticTimer::binomial_all_reduce_time(const sim::Collective& c, int w, const std::vector<SlowLink>& slow) {
  // Each call walks W log W messages: without slow links, kept by W and size.
  if (slow.empty()) {
    if (const auto kept = binomial_times_.find({w, c.bytes}); kept != binomial_times_.end()) return kept->second;
  }
  const double bytes = static_cast<double>(c.bytes);
  const auto message = [&](int a, int b) {
    Hop h = route(cluster_, a, b);
    const double f = std::max(slow_factor(slow, a), slow_factor(slow, b));
    if (f > 1) h = slowed(h, f);
    return std::pair{static_cast<double>(h.latency.count_ns()), bytes / h.bandwidth_GBps};  // GB/s: bytes per ns
  };
  const std::vector<double> holds = binomial_chains(w, message);
  const sim::Time t = launch_ + sim::Time::from_ns(*std::max_element(holds.begin(), holds.end()));
  if (slow.empty()) binomial_times_.emplace(std::make_pair(w, c.bytes), t);
  return t;
}

}  // namespace ddpsim::models
