#include "netsim/simgrid_platform.hpp"

namespace ddpsim::netsim::detail {

using models::Fabric;

Platform::Platform(const models::ClusterSpec& cluster, int gpus)
    : cluster_(cluster), pcie_(models::nic_routes_cross_gpu_links(cluster)) {
  zone_ = sg4::create_full_zone("ddpsim");
  const int g = cluster.gpus_per_node;
  const int nodes = (gpus + g - 1) / g;
  for (int r = 0; r < gpus; ++r) hosts_.push_back(zone_->create_host(host_name(r), 1e9));
  // Intra-node: a star link per GPU carrying half the route latency, or a
  // ring link from GPU i to GPU i+1 of the node (i = G-1 closes the ring).
  // On PCIe nodes a GPU's link also carries its traffic to and from the
  // NICs, so routes of two latencies share it; there no link has a
  // latency, and a transfer waits out its route's (latency_s) before it
  // sends: SimGrid's CM02 would share a link among flows in inverse
  // proportion to their routes' latencies (TCP's bias), which a PCIe
  // switch does not have. Alone or among routes of one latency, the same.
  const bool star = cluster.intra.topology != Fabric::Topology::kRing;
  const double intra_lat = pcie_ ? 0 : cluster.intra.latency.us() * (star ? 0.5e-6 : 1e-6);
  const std::string kind = pcie_ ? "-pcie" : star ? "-nvl" : "-ring";
  for (int n = 0; n < nodes; ++n) {
    for (int i = 0; i < gpu_links_per_node() && g > 1; ++i) {
      gpu_links_.push_back(make_link("n" + std::to_string(n) + kind + std::to_string(i),
                                     cluster.intra.bandwidth_GBps * 1e9, intra_lat, cluster.intra.full_duplex));
    }
  }
  // A PCIe tree: an uplink a switch, no latency of its own (the route's is on the GPUs' links).
  for (int n = 0; n < nodes && cluster.pcie_switches() > 1; ++n) {
    for (int sw = 0; sw < cluster.pcie_switches(); ++sw) {
      switch_uplinks_.push_back(make_link("n" + std::to_string(n) + "-pcie-sw" + std::to_string(sw) + "-up",
                                          cluster.switch_uplink_GBps * 1e9, 0, cluster.intra.full_duplex));
    }
  }
  for (int n = 0; n < nodes && nodes > 1; ++n) {
    for (int k = 0; k < cluster.nics_per_node; ++k) {
      nic_links_.push_back(make_link("n" + std::to_string(n) + "-nic" + std::to_string(k),
                                     cluster.inter.bandwidth_GBps * 1e9,
                                     pcie_ ? 0 : cluster.inter.latency.us() * 0.5e-6, cluster.inter.full_duplex));
    }
  }
  if (cluster.inter.topology == Fabric::Topology::kFatTree && nodes > cluster.inter.nodes_per_switch) {
    const int leaves = (nodes + cluster.inter.nodes_per_switch - 1) / cluster.inter.nodes_per_switch;
    const double up = cluster.inter.nodes_per_switch * cluster.nics_per_node * cluster.inter.bandwidth_GBps * 1e9 /
                      cluster.inter.oversubscription;
    for (int l = 0; l < leaves; ++l)
      uplinks_.push_back(make_link("leaf" + std::to_string(l) + "-up", up, 0, cluster.inter.full_duplex));
  }
}

void Platform::add_route(int a, int b) {
  if (!routes_.insert({a, b}).second) return;
  zone_->add_route(hosts_[static_cast<std::size_t>(a)]->get_netpoint(),
                   hosts_[static_cast<std::size_t>(b)]->get_netpoint(), nullptr, nullptr, links_of(a, b), false);
}

double Platform::latency_s(int a, int b) const {
  if (!pcie_) return 0;
  const int g = cluster_.gpus_per_node;
  return (a / g == b / g ? cluster_.intra.latency : cluster_.inter.latency).us() * 1e-6;
}

std::vector<sg4::Link*> Platform::links_of_rank(int r) const {
  std::vector<sg4::Link*> out;
  const int g = cluster_.gpus_per_node, node = r / g, i = r % g;
  if (g > 1) {
    if (cluster_.intra.topology == Fabric::Topology::kRing) {
      const int links = gpu_links_per_node();
      out.push_back(gpu_link(node, i % links));
      if (links > 1) out.push_back(gpu_link(node, (i + g - 1) % g));
    } else {
      out.push_back(gpu_link(node, i));
    }
  }
  if (!nic_links_.empty()) out.push_back(nic(r));
  return out;
}

Platform::Link Platform::make_link(const std::string& name, double bandwidth, double latency_s, bool full_duplex) {
  if (full_duplex) {
    sg4::SplitDuplexLink* l = zone_->create_split_duplex_link(name, bandwidth);
    l->set_latency(latency_s);
    l->seal();
    return {l, true};
  }
  sg4::Link* l = zone_->create_link(name, bandwidth);
  l->set_latency(latency_s);
  l->seal();
  return {l, false};
}

sg4::LinkInRoute Platform::in_route(const Link& l, bool up) {
  if (!l.split) return sg4::LinkInRoute(l.link);
  return sg4::LinkInRoute(l.link, up ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::DOWN);
}

int Platform::gpu_links_per_node() const {
  const int g = cluster_.gpus_per_node;
  return cluster_.intra.topology == Fabric::Topology::kRing && g == 2 ? 1 : g;
}

sg4::Link* Platform::gpu_link(int node, int i) const {
  return gpu_links_[static_cast<std::size_t>(node * gpu_links_per_node() + i)].link;
}

int Platform::nic_index(int r) const {
  const int g = cluster_.gpus_per_node;
  return (r / g) * cluster_.nics_per_node + (r % g) * cluster_.nics_per_node / g;
}

std::vector<sg4::LinkInRoute> Platform::links_inside_node(int a, int b) const {
  const int g = cluster_.gpus_per_node, node = a / g, per_node = gpu_links_per_node();
  const auto at = [&](int i) { return gpu_links_[static_cast<std::size_t>(node * per_node + i)]; };
  std::vector<sg4::LinkInRoute> route;
  if (cluster_.intra.topology != Fabric::Topology::kRing) {
    route.push_back(in_route(at(a % g), true));
    const int s = cluster_.gpus_per_switch, switches = cluster_.pcie_switches();
    if (switches > 1 && (a % g) / s != (b % g) / s) {
      route.push_back(in_route(switch_uplinks_[static_cast<std::size_t>(node * switches + (a % g) / s)], true));
      route.push_back(in_route(switch_uplinks_[static_cast<std::size_t>(node * switches + (b % g) / s)], false));
    }
    route.push_back(in_route(at(b % g), false));
    return route;
  }
  if (per_node == 1) {  // two GPUs, one link: GPU 0 -> 1 is its up direction
    route.push_back(in_route(at(0), a % g == 0));
    return route;
  }
  // Around the ring the shorter way (forward on a tie): link i joins GPU i and i+1.
  const int d = ((b % g) - (a % g) + g) % g;
  const bool forward = d <= g - d;
  for (int i = a % g, steps = forward ? d : g - d; steps > 0; --steps) {
    if (forward) {
      route.push_back(in_route(at(i), true));
      i = (i + 1) % g;
    } else {
      const int j = (i + g - 1) % g;
      route.push_back(in_route(at(j), false));
      i = j;
    }
  }
  return route;
}

std::vector<sg4::LinkInRoute> Platform::links_of(int a, int b) const {
  const int g = cluster_.gpus_per_node;
  const int node_a = a / g, node_b = b / g;
  if (node_a == node_b) return links_inside_node(a, b);
  std::vector<sg4::LinkInRoute> route;
  const int per_node = gpu_links_per_node();
  if (pcie_) route.push_back(in_route(gpu_links_[static_cast<std::size_t>(node_a * per_node + a % g)], true));
  route.push_back(in_route(nic_links_[static_cast<std::size_t>(nic_index(a))], true));
  const int nps = cluster_.inter.nodes_per_switch;
  if (!uplinks_.empty() && node_a / nps != node_b / nps) {
    route.push_back(in_route(uplinks_[static_cast<std::size_t>(node_a / nps)], true));
    route.push_back(in_route(uplinks_[static_cast<std::size_t>(node_b / nps)], false));
  }
  route.push_back(in_route(nic_links_[static_cast<std::size_t>(nic_index(b))], false));
  if (pcie_) route.push_back(in_route(gpu_links_[static_cast<std::size_t>(node_b * per_node + b % g)], false));
  return route;
}

SlowedLinks::SlowedLinks(const Platform& platform, const std::vector<std::pair<int, double>>& slow) {
  for (const auto& [rank, factor] : slow) {
    for (sg4::Link* l : platform.links_of_rank(rank)) {
      restore_.emplace_back(l, l->get_bandwidth());
      l->set_bandwidth(l->get_bandwidth() / factor);
    }
  }
}

SlowedLinks::~SlowedLinks() {
  for (auto it = restore_.rbegin(); it != restore_.rend(); ++it) it->first->set_bandwidth(it->second);
}

}  // namespace ddpsim::netsim::detail
