// The SimGrid engine's link statistics (CollectiveTimer::link_loads) against
// cases worked by hand. One process per test case, as simgrid_engine_test
// (SimGrid runs once per process; netsim/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "netsim/simgrid_engine.hpp"
#include "netsim/simgrid_test_clusters.hpp"

namespace models = ddpsim::models;
namespace netsim = ddpsim::netsim;
using ddpsim::sim::Collective;
using ddpsim::sim::CollectiveKind;
using ddpsim::netsim::testing::cluster;
using ddpsim::netsim::testing::fabric;
using ddpsim::netsim::testing::kLaunch;

namespace {

std::map<std::string, models::LinkLoad> by_name(const std::vector<models::LinkLoad>& loads) {
  std::map<std::string, models::LinkLoad> out;
  for (const models::LinkLoad& l : loads) out[l.name] = l;
  return out;
}

double sum_bytes(const std::map<std::string, models::LinkLoad>& links, const std::string& part) {
  double total = 0;
  for (const auto& [name, l] : links) {
    if (name.find(part) != std::string::npos) total += l.bytes;
  }
  return total;
}

// Two nodes of four GPUs (NVLink star at 100 GB/s, 2 us), one NIC each (12.5 GB/s, 10 us).
const models::ClusterSpec kTwoNodes = cluster(2, 4, fabric(100, 2), 1, fabric(12.5, 10));
constexpr std::int64_t kBytes = std::int64_t{64} << 20;

}  // namespace

TEST_CASE("a ring across two nodes: each NIC direction carries 2 (W-1)/W of the bytes, busy every step") {
  netsim::run_with_simgrid(kTwoNodes, kLaunch, models::Algorithm::kRing, {8}, {}, [](models::CollectiveTimer& t) {
    const int w = 8, count = 3;
    const auto links = by_name(t.link_loads({{{CollectiveKind::kAllReduce, kBytes}, w, {}, count}}));
    const double carried = count * 2.0 * (w - 1) / w * static_cast<double>(kBytes);  // 2(W-1) steps of bytes/W
    for (const char* nic : {"n0-nic0/up", "n0-nic0/down", "n1-nic0/up", "n1-nic0/down"}) {
      CAPTURE(nic);
      REQUIRE(links.count(nic) == 1);
      CHECK(links.at(nic).bytes == doctest::Approx(carried).epsilon(1e-9));
      CHECK(links.at(nic).capacity_GBps == doctest::Approx(12.5));
      // A step's crossing transfer: the route's 10 us, then bytes / W at 12.5 GB/s; 2 (W-1) steps, 3 times.
      const double busy = count * 2 * (w - 1) * (10e-6 + static_cast<double>(kBytes) / w / 12.5e9);
      CHECK(links.at(nic).busy_s == doctest::Approx(busy).epsilon(1e-6));
    }
    // Inside node 0: GPU 0 sends to GPU 1 over its link's up direction; GPU 3 sends to node 1, never on NVLink,
    // and GPU 0 receives from node 1.
    REQUIRE(links.count("n0-nvl0/up") == 1);
    CHECK(links.at("n0-nvl0/up").bytes == doctest::Approx(carried));
    CHECK(links.at("n0-nvl0/up").capacity_GBps == doctest::Approx(100));
    CHECK(links.count("n0-nvl3/up") == 0);
    CHECK(links.count("n0-nvl0/down") == 0);
    // Every transfer of a step is bytes/W: 8 pairs, 2 links each inside a node, 2 NIC directions between.
    CHECK(sum_bytes(links, "nvl") == doctest::Approx(6 * 2 * carried));
    CHECK(sum_bytes(links, "nic") == doctest::Approx(4 * carried));
  });
}

TEST_CASE("link loads: auto keeps the links of the algorithm it chose, and the analytic engine has none") {
  netsim::run_with_simgrid(kTwoNodes, kLaunch, models::Algorithm::kAuto, {8}, {}, [](models::CollectiveTimer& t) {
    const auto links = by_name(t.link_loads({{{CollectiveKind::kAllReduce, kBytes}, 8, {}, 1}}));
    // Ring: 2 (W-1)/W = 1.75 bytes on each NIC direction. Hierarchical: each of a node's 4 GPUs all-reduces
    // a quarter across the 2 nodes (2 steps of an eighth), 4 x 2 / 8 = 1 byte: kAuto's pick, once, not both.
    const double nic = links.at("n0-nic0/up").bytes / static_cast<double>(kBytes);
    const double ring = 1.75, hierarchical = 1.0;
    const bool one_of_them = nic == doctest::Approx(ring) || nic == doctest::Approx(hierarchical);
    CAPTURE(nic);
    CHECK(one_of_them);
    // Its time is the faster one's, which is the one whose links were kept.
    models::AnalyticTimer analytic(kTwoNodes, kLaunch, models::Algorithm::kAuto);
    CHECK(analytic.link_loads({{{CollectiveKind::kAllReduce, kBytes}, 8, {}, 1}}).empty());
    CHECK(t.link_loads({{{CollectiveKind::kAllReduce, kBytes}, 1, {}, 5}}).empty());  // one rank: nothing crosses
  });
}
