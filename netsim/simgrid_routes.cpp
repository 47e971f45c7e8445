// The SimGrid engine's transfer patterns (simgrid_routes.hpp).

#include "netsim/simgrid_routes.hpp"

namespace ddpsim::netsim::detail {

std::vector<Pair> ring_pairs(int first, int count, int stride) {
  std::vector<Pair> v;
  for (int i = 0; i < count && count > 1; ++i) v.emplace_back(first + i * stride, first + ((i + 1) % count) * stride);
  return v;
}

std::vector<Pair> ring_of(const std::vector<int>& ranks) {
  std::vector<Pair> v;
  for (std::size_t k = 0; k < ranks.size() && ranks.size() > 1; ++k) v.emplace_back(ranks[k], ranks[(k + 1) % ranks.size()]);
  return v;
}

std::vector<Pair> channel_pairs(const models::ClusterSpec& cluster, int w) {
  const int g = cluster.gpus_per_node, k = models::ring_channels(cluster, w);
  if (k == 1) return ring_pairs(0, w, 1);
  std::vector<Pair> v;
  for (int j = 0; j < k; ++j) {
    std::vector<int> ranks;
    for (int n = 0; n < w / g; ++n) {
      for (int t = 0; t < g; ++t) ranks.push_back(n * g + (j * g / k + t) % g);
    }
    for (const Pair& p : ring_of(ranks)) v.push_back(p);
  }
  return v;
}

std::vector<Pair> collective_routes(const models::ClusterSpec& cluster, models::Algorithm algorithm,
                                    models::Broadcast broadcast, int w) {
  using models::Algorithm;
  std::vector<Pair> v = ring_pairs(0, w, 1);
  const auto add = [&v](const std::vector<Pair>& pairs) { v.insert(v.end(), pairs.begin(), pairs.end()); };
  if (algorithm == Algorithm::kAuto) add(channel_pairs(cluster, w));
  for (int i = 0; i + 1 < w; ++i) v.emplace_back(i + 1, i);  // a reduce's chain, towards rank 0
  if (broadcast == models::Broadcast::kBinomialTree) {
    for (const std::vector<Pair>& round : models::binomial_tree_rounds(w)) add(round);
  }
  if (algorithm == Algorithm::kBinomial) {
    for (const std::vector<Pair>& round : models::binomial_up_rounds(w)) add(round);
    for (const std::vector<Pair>& wave : models::binomial_down_waves(w)) add(wave);
  }
  if (models::runs_hierarchical(algorithm, cluster, w)) {
    const int g = cluster.gpus_per_node, nodes = w / g;
    for (int k = 0; k < nodes; ++k) add(ring_pairs(k * g, g, 1));
    for (int i = 0; i < g; ++i) add(ring_pairs(i, nodes, g));
  }
  return v;
}

}  // namespace ddpsim::netsim::detail
