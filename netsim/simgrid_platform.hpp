#pragma once
// The SimGrid engine's platform (inside libddpsim_simgrid only): one host
// per GPU and the links models/cluster.hpp describes, with the routes the
// collectives use; and slow ranks' links, slowed for a while.

#include <set>
#include <simgrid/s4u.hpp>
#include <string>
#include <utility>
#include <vector>

#include "models/cluster.hpp"

namespace ddpsim::netsim::detail {

namespace sg4 = simgrid::s4u;
using Pair = std::pair<int, int>;

class Platform {
 public:
  Platform(const models::ClusterSpec& cluster, int gpus);

  /// The route from a to b (once); every route before seal().
  void add_route(int a, int b);
  void seal() { zone_->seal(); }
  bool has_route(int a, int b) const { return routes_.count({a, b}) > 0; }
  sg4::Host* host(int r) const { return hosts_[static_cast<std::size_t>(r)]; }
  int link_count() const {
    return static_cast<int>(gpu_links_.size() + nic_links_.size() + uplinks_.size() + switch_uplinks_.size());
  }
  /// What a transfer from a to b waits before it sends: its route's latency
  /// on PCIe nodes, whose links have none; else 0 (the links carry it).
  double latency_s(int a, int b) const;
  /// Whether a route inside a node and one between nodes never share a link
  /// (not on PCIe nodes, whose GPU links carry both).
  bool nodes_apart_from_network() const { return !pcie_; }
  /// The links of the route from a to b, in order, each with its direction.
  std::vector<sg4::LinkInRoute> route_links(int a, int b) const { return links_of(a, b); }
  /// The links a slow rank slows: its star link or the ring links beside it, and its NIC.
  std::vector<sg4::Link*> links_of_rank(int r) const;

 private:
  struct Link {
    sg4::Link* link;
    bool split;
  };

  static std::string host_name(int r) { return "rank" + std::to_string(r); }
  Link make_link(const std::string& name, double bandwidth, double latency_s, bool full_duplex);
  static sg4::LinkInRoute in_route(const Link& l, bool up);
  // A link per GPU, star or ring; except that a ring of two GPUs is one link.
  int gpu_links_per_node() const;
  sg4::Link* gpu_link(int node, int i) const;
  sg4::Link* nic(int r) const { return nic_links_[static_cast<std::size_t>(nic_index(r))].link; }
  int nic_index(int r) const;
  std::vector<sg4::LinkInRoute> links_of(int a, int b) const;
  std::vector<sg4::LinkInRoute> links_inside_node(int a, int b) const;

  models::ClusterSpec cluster_;
  bool pcie_;  // models::nic_routes_cross_gpu_links
  sg4::NetZone* zone_ = nullptr;
  std::vector<sg4::Host*> hosts_;
  std::vector<Link> gpu_links_, nic_links_, uplinks_;  // uplinks_: a fat tree's leaves
  std::vector<Link> switch_uplinks_;                   // a PCIe tree's, node by node
  std::set<Pair> routes_;
};

/// The links of slow ranks (rank, factor) at bandwidth / factor while it
/// lives; a rank slowed twice is slowed by both factors.
class SlowedLinks {
 public:
  SlowedLinks(const Platform& platform, const std::vector<std::pair<int, double>>& slow);
  ~SlowedLinks();
  SlowedLinks(const SlowedLinks&) = delete;
  SlowedLinks& operator=(const SlowedLinks&) = delete;

 private:
  std::vector<std::pair<sg4::Link*, double>> restore_;
};

}  // namespace ddpsim::netsim::detail
