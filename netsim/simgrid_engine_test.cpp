// The SimGrid engine against the analytic formulas: equal where no link is
// shared, slower by exactly the sharing where one is. SimGrid runs once per
// process, so ctest runs each test case in a process of its own
// (netsim/CMakeLists.txt: --test-case=...).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/cluster.hpp"
#include "netsim/simgrid_engine.hpp"
#include "netsim/simgrid_test_clusters.hpp"

namespace models = ddpsim::models;
namespace netsim = ddpsim::netsim;
using ddpsim::sim::Collective;
using ddpsim::sim::CollectiveKind;
using ddpsim::sim::Time;
using ddpsim::models::GroupCall;

namespace {

using ddpsim::netsim::testing::cluster;
using ddpsim::netsim::testing::fabric;
using ddpsim::netsim::testing::kLaunch;

// SimGrid's clock is a double in seconds and chunks are whole bytes: allow a few nanoseconds.
void check_close(Time simgrid, Time expected) {
  INFO("simgrid " << simgrid.count_ns() << " ns, expected " << expected.count_ns() << " ns");
  CHECK(std::llabs(simgrid.count_ns() - expected.count_ns()) <= 4);
}

void run(const models::ClusterSpec& c, models::Algorithm a, std::vector<int> sizes,
         const std::function<void(models::CollectiveTimer&, models::AnalyticTimer&)>& body) {
  models::AnalyticTimer analytic(c, kLaunch, a);
  netsim::run_with_simgrid(c, kLaunch, a, sizes, {}, [&](models::CollectiveTimer& t) { body(t, analytic); });
}

}  // namespace

TEST_CASE("star node: ring collectives take exactly the formulas' time") {
  const auto c = cluster(1, 8, fabric(25, 10), 1, fabric(25, 10));
  run(c, models::Algorithm::kRing, {1, 2, 4, 8}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    for (int w : {1, 2, 4, 8}) {
      for (std::int64_t bytes : {std::int64_t{8}, std::int64_t{1} << 20, std::int64_t{100} << 20}) {
        for (CollectiveKind k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                 CollectiveKind::kBarrier}) {
          const Collective col{k, bytes};
          CAPTURE(w);
          CAPTURE(bytes);
          check_close(sg.time(col, w, {}), an.time(col, w, {}));
        }
        // Broadcast: the analytic formula is the pipelined limit, (W-1) latency + bytes / bandwidth;
        // SimGrid pays each of its K chunks' latency, so it is slower, but by less than (K-1) latencies + the chain.
        // A reduce runs the same chain towards the root: the same bounds.
        for (CollectiveKind k : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
          const Collective b{k, bytes};
          CHECK(sg.time(b, w, {}) >= an.time(b, w, {}));
          CHECK(sg.time(b, w, {}).us() <= an.time(b, w, {}).us() * 2 + 64 * 10);
        }
      }
    }
    // A slow link (rank 3's, 4x) slows every step of the ring through it: the formula at a quarter of the bandwidth.
    const Collective ar{CollectiveKind::kAllReduce, 64 << 20};
    check_close(sg.time(ar, 8, {{3, 4.0}}), an.time(ar, 8, {{3, 4.0}}));
    CHECK(sg.time(ar, 8, {{3, 4.0}}) > sg.time(ar, 8, {}));
    // Restored afterwards: memoised or not, the plain collective costs what it did.
    check_close(sg.time({CollectiveKind::kAllReduce, 32 << 20}, 8, {}), an.time({CollectiveKind::kAllReduce, 32 << 20}, 8, {}));
  });
}

TEST_CASE("ring of links: a wrap-around that is two links away costs two latencies") {
  const auto c = cluster(1, 4, fabric(50, 2, models::Fabric::Topology::kRing), 1, fabric(50, 2));
  run(c, models::Algorithm::kRing, {2, 3, 4}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    const Collective ar{CollectiveKind::kAllReduce, 8 << 20};
    for (int w : {2, 3, 4}) check_close(sg.time(ar, w, {}), an.time(ar, w, {}));
    // W = 3 on a 4-GPU ring: 2 -> 0 crosses two links, 4 us.
    const models::NetworkParams two_links{Time::from_us(4), 50, kLaunch};
    check_close(an.time(ar, 3, {}), models::ring_all_reduce_time(two_links, 8 << 20, 3));
  });
}

TEST_CASE("two nodes, one NIC each: the flat ring agrees, the hierarchical all-reduce shares the NIC 8 ways") {
  const auto c = cluster(2, 8, fabric(150, 3.4), 1, fabric(25, 5));
  run(c, models::Algorithm::kHierarchical, {8, 16}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    const std::int64_t n = 100 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n};
    // One node: the hierarchical algorithm is the ring; no NIC.
    check_close(sg.time(ar, 8, {}), an.time(ar, 8, {}));
    // Two nodes: 8 inter-node rings at once through one NIC: each transfer gets 25 / 8 GB/s.
    const models::Hop intra{Time::from_us(3.4), 150}, inter{Time::from_us(5), 25}, shared{Time::from_us(5), 25.0 / 8};
    check_close(an.time(ar, 16, {}), models::hierarchical_all_reduce_time(intra, inter, kLaunch, n, 8, 2));
    check_close(sg.time(ar, 16, {}), models::hierarchical_all_reduce_time(intra, shared, kLaunch, n, 8, 2));
    // The flat ring (all-gather uses it) crosses the NIC once each way per step: no sharing, the formulas hold.
    const Collective ag{CollectiveKind::kAllGather, n};
    check_close(sg.time(ag, 16, {}), an.time(ag, 16, {}));
  });
}

TEST_CASE("gloo's broadcast: a binomial tree, a round at a time; the round between nodes shares the NIC 8 ways") {
  const auto c = cluster(2, 8, fabric(150, 3.4), 1, fabric(25, 5));
  models::AnalyticTimer tree(c, kLaunch, models::Algorithm::kRing, models::Broadcast::kBinomialTree);
  netsim::run_with_simgrid(
      c, kLaunch, models::Algorithm::kRing, {4, 5, 8, 16}, {},
      [&](models::CollectiveTimer& sg) {
        const Collective b{CollectiveKind::kBroadcast, std::int64_t{100} << 20};
        for (int w : {4, 5, 16}) {
          CAPTURE(w);
          check_close(sg.time(b, w, {}), tree.time(b, w, {}));
        }
        // At 16 the fourth round sends 8 buffers through node 0's one NIC at once.
        const double round_us = 5 + (100 << 20) / 25e3 * 8;
        CHECK(sg.time(b, 16, {}).us() - sg.time(b, 8, {}).us() == doctest::Approx(round_us).epsilon(1e-6));
      },
      {}, models::Broadcast::kBinomialTree);
}

TEST_CASE("auto's choice: a ring with a channel per NIC and the hierarchical all-reduce on shared NICs, as the formulas") {
  // Two DGX-1-like nodes, 4 NICs each: the channels' crossings each have a
  // NIC direction to themselves, and the hierarchical algorithm's 8
  // inter-node rings share the 4 NICs two by two, as the analytic engine
  // prices them under auto; so the engines agree, call by call.
  const auto c = cluster(2, 8, fabric(40, 10), 4, fabric(12.5, 14));
  run(c, models::Algorithm::kAuto, {8, 16}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    for (const std::int64_t n : {std::int64_t{1} << 20, std::int64_t{25} << 20, std::int64_t{256} << 20}) {
      for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
        const Collective col{kind, n};
        CAPTURE(n);
        check_close(sg.time(col, 16, {}), an.time(col, 16, {}));
        check_close(sg.time(col, 8, {}), an.time(col, 8, {}));
      }
    }
    CHECK(an.algorithm_for({CollectiveKind::kAllReduce, 1 << 20}, 16) == models::Algorithm::kHierarchical);
    CHECK(an.algorithm_for({CollectiveKind::kAllReduce, 25 << 20}, 16) == models::Algorithm::kRing);
  });
}

TEST_CASE("auto's choice with a NIC per GPU: each GPU's link carries all channels but the one it heads") {
  const auto c = cluster(2, 8, fabric(40, 10), 8, fabric(6.25, 14));
  run(c, models::Algorithm::kAuto, {16}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    for (const std::int64_t n : {std::int64_t{1} << 20, std::int64_t{256} << 20}) {
      const Collective ag{CollectiveKind::kAllGather, n}, ar{CollectiveKind::kAllReduce, n};
      CAPTURE(n);
      check_close(sg.time(ag, 16, {}), an.time(ag, 16, {}));
      check_close(sg.time(ar, 16, {}), an.time(ar, 16, {}));
    }
  });
}

TEST_CASE("process groups at once: 8 replica groups share one NIC 8 ways; shard groups inside nodes share nothing") {
  // Hybrid sharding's two kinds of group on 2 nodes x 8 GPUs with one NIC a node: the replica
  // groups {i, i + 8} all-reduce across the nodes, the shard groups (one a node) inside them.
  const auto c = cluster(2, 8, fabric(150, 3.4), 1, fabric(25, 5));
  std::vector<std::vector<int>> replicas, shards = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}};
  for (int i = 0; i < 8; ++i) replicas.push_back({i, i + 8});
  std::vector<std::vector<int>> all = replicas;
  all.insert(all.end(), shards.begin(), shards.end());
  models::AnalyticTimer an(c, kLaunch, models::Algorithm::kRing);
  CHECK_THROWS_AS(an.time_together({CollectiveKind::kAllReduce, 1 << 20}, replicas), std::invalid_argument);
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {16}, {}, [&](models::CollectiveTimer& sg) {
    // A group whose ring was not declared has no routes: refused, not a SimGrid abort.
    CHECK_THROWS_AS(sg.time_together({CollectiveKind::kAllReduce, 1 << 20}, {{0, 9}}), std::invalid_argument);
    const std::int64_t n = 64 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n};
    const Collective rs{CollectiveKind::kReduceScatter, n};
    // Alone, a replica group is a 2-rank ring across the NIC: the formula's time.
    const models::NetworkParams nic{Time::from_us(5), 25, kLaunch};
    check_close(sg.time_together(ar, {replicas[0]}).front(), models::ring_all_reduce_time(nic, n, 2));
    // All 8 at once: every transfer crosses the one NIC with 7 others, 25 / 8 GB/s each.
    const models::NetworkParams shared{Time::from_us(5), 25.0 / 8, kLaunch};
    for (const Time t : sg.time_together(ar, replicas)) check_close(t, models::ring_all_reduce_time(shared, n, 2));
    // The shard groups' reduce-scatters stay on NVLink: at once or alone, the formula's time.
    const models::NetworkParams nvlink{Time::from_us(3.4), 150, kLaunch};
    for (const Time t : sg.time_together(rs, shards)) check_close(t, models::ring_reduce_scatter_time(nvlink, n, 8));
    // Both kinds at once: a route between nodes crosses the NICs only (the GPU's own path to its NIC
    // is not a link of the platform), so the two kinds share nothing and each keeps its time.
    const std::vector<Time> mixed = sg.time_together(ar, all);
    REQUIRE(mixed.size() == 10);
    check_close(mixed.front(), models::ring_all_reduce_time(shared, n, 2));
    check_close(mixed.back(), models::ring_all_reduce_time(nvlink, n, 8));
  }, all);
}

TEST_CASE("a step in parts: the pairs between nodes, then one node of each kind, take what the whole step takes") {
  // time() simulates a step's pairs between nodes together and each distinct
  // node's pairs alone (they share no link); time_together simulates every
  // transfer of every step at once. On a platform where links are shared
  // (half-duplex GPU links and NICs, a 4:1 fat tree across 2-node leaves) and
  // the last node is partial (w = 10 on nodes of 4), the two must agree. The
  // GPU links (10 GB/s, half-duplex) are the slowest: a node's part decides.
  models::Fabric intra = fabric(10, 3), tree = fabric(25, 5, models::Fabric::Topology::kFatTree);
  intra.full_duplex = false;
  tree.full_duplex = false;
  tree.nodes_per_switch = 2;
  tree.oversubscription = 4;
  const auto c = cluster(3, 4, intra, 1, tree);
  const std::vector<std::vector<int>> whole = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {10, 12}, {}, [&](models::CollectiveTimer& sg) {
    for (const std::vector<int>& ranks : whole) {
      const int w = static_cast<int>(ranks.size());
      for (const std::int64_t n : {std::int64_t{4096}, std::int64_t{64} << 20}) {
        for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather}) {
          const Collective col{kind, n};
          CAPTURE(w);
          CAPTURE(n);
          check_close(sg.time(col, w, {}), sg.time_together(col, {ranks}).front());
        }
      }
    }
  }, whole);
}

TEST_CASE("a slow rank in the last node: its node is unlike the others, and its link bounds the ring") {
  // Its own link (40 / 4 GB/s, below every NIC's 400) bounds the ring, as
  // the formula says; node 0's pairs alone would not show it.
  const auto fast_nics = cluster(3, 4, fabric(40, 3), 1, fabric(400, 5));
  run(fast_nics, models::Algorithm::kRing, {12}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    const Collective ar{CollectiveKind::kAllReduce, 64 << 20};
    check_close(sg.time(ar, 12, {{9, 4.0}}), an.time(ar, 12, {{9, 4.0}}));
    CHECK(sg.time(ar, 12, {{9, 4.0}}) > sg.time(ar, 12, {}));
  });
}

namespace {
// 2 nodes x 8 GPUs on PCIe (16 GB/s a GPU), 4 NICs of 25 GB/s a node, and
// hybrid sharding's groups: a replica group a local GPU, a shard group a node.
struct PcieHybrid {
  models::ClusterSpec c = [] {
    auto out = cluster(2, 8, fabric(16, 10), 4, fabric(25, 5));
    out.nvlink = false;
    return out;
  }();
  std::vector<std::vector<int>> shards = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}};
  std::vector<std::vector<int>> replicas = [] {
    std::vector<std::vector<int>> out;
    for (int i = 0; i < 8; ++i) out.push_back({i, i + 8});
    return out;
  }();
  std::vector<std::vector<int>> all() const {
    std::vector<std::vector<int>> out = replicas;
    out.insert(out.end(), shards.begin(), shards.end());
    return out;
  }
};
}  // namespace

TEST_CASE("PCIe nodes: a GPU's link carries its shard ring and its replica ring") {
  // A route between nodes leaves through the GPU's PCIe link and enters
  // through the peer's; alone, every collective takes the formulas' time.
  const PcieHybrid h;
  const auto& [c, shards, replicas] = h;
  const std::vector<std::vector<int>> all = h.all();
  models::AnalyticTimer an(c, kLaunch, models::Algorithm::kRing);
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {8, 16}, {}, [&](models::CollectiveTimer& sg) {
    const std::int64_t n = 64 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n}, rs{CollectiveKind::kReduceScatter, n};
    check_close(sg.time(ar, 8, {}), an.time(ar, 8, {}));
    check_close(sg.time(ar, 16, {}), an.time(ar, 16, {}));  // the crossing: min(PCIe, NIC) = 16 GB/s
    const Time shard = sg.time_together(rs, {shards[0]}).front();
    check_close(shard, models::ring_reduce_scatter_time({Time::from_us(10), 16, kLaunch}, n, 8));
    // Two replica rings share a NIC: 12.5 GB/s each, under the PCIe link's 16.
    const Time replica = sg.time_together(ar, replicas).front();
    check_close(replica, models::ring_all_reduce_time({Time::from_us(5), 12.5, kLaunch}, n, 2));
    // Both kinds at once: each GPU's PCIe link carries its shard step and
    // its replica step, 8 GB/s each while both run, so both are slower than
    // alone, and faster than at 8 GB/s throughout.
    std::vector<GroupCall> calls;
    for (const auto& r : replicas) calls.push_back({ar, r});
    for (const auto& r : shards) calls.push_back({rs, r});
    const std::vector<Time> mixed = sg.time_together(calls);
    REQUIRE(mixed.size() == 10);
    CHECK(mixed.back() > shard + Time::from_us(100));
    CHECK(mixed.back() <= models::ring_reduce_scatter_time({Time::from_us(10), 8, kLaunch}, n, 8));
    CHECK(mixed.front() > replica + Time::from_us(100));
    CHECK(mixed.front() <= models::ring_all_reduce_time({Time::from_us(5), 8, kLaunch}, n, 2));
  }, all);
}

TEST_CASE("PCIe nodes with a slow rank: its links slow the groups in flight that cross them") {
  // As above; rank 9's links (its PCIe link and its node's NIC 0, which it
  // shares with rank 8) at a quarter of their bandwidth: 4 and 6.25 GB/s.
  const PcieHybrid h;
  const auto& [c, shards, replicas] = h;
  const std::vector<std::vector<int>> all = h.all();
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {8, 16}, {}, [&](models::CollectiveTimer& sg) {
    const std::int64_t n = 64 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n}, rs{CollectiveKind::kReduceScatter, n};
    const std::vector<models::SlowLink> slow = {{9, 4.0}};
    // Node 1's shard ring enters and leaves rank 9 through its 4 GB/s link;
    // node 0's does not cross it. The same as time() over a node's ranks.
    std::vector<GroupCall> node1 = {{rs, shards[1]}}, node0 = {{rs, shards[0]}};
    check_close(sg.time_together(node1, slow).front(),
                models::ring_reduce_scatter_time({Time::from_us(10), 4, kLaunch}, n, 8));
    check_close(sg.time_together(node1, slow).front(), sg.time(rs, 8, {{1, 4.0}}));
    check_close(sg.time_together(node0, slow).front(), sg.time(rs, 8, {}));
    // Replica groups {0, 8} and {1, 9} share node 1's slowed NIC, 3.125 GB/s
    // each (under rank 9's 4); {2, 10} and the rest keep 12.5 each.
    std::vector<GroupCall> calls;
    for (const auto& r : replicas) calls.push_back({ar, r});
    const std::vector<Time> t = sg.time_together(calls, slow);
    REQUIRE(t.size() == 8);
    for (int i : {0, 1}) check_close(t[static_cast<std::size_t>(i)], models::ring_all_reduce_time({Time::from_us(5), 3.125, kLaunch}, n, 2));
    for (int i : {2, 7}) check_close(t[static_cast<std::size_t>(i)], models::ring_all_reduce_time({Time::from_us(5), 12.5, kLaunch}, n, 2));
    // The links are restored afterwards.
    check_close(sg.time_together(node1).front(), sg.time(rs, 8, {}));
  }, all);
}

namespace {
// 2 nodes x 8 GPUs on PCIe (24 GB/s), switches of 4 GPUs joined at 10
// GB/s a direction, 2 NICs a node (one under each switch) of 25 GB/s.
models::ClusterSpec pcie_two_switches() {
  auto c = cluster(2, 8, fabric(24, 10), 2, fabric(25, 5));
  c.nvlink = false;
  c.gpus_per_switch = 4;
  c.switch_uplink_GBps = 10;
  return c;
}
}  // namespace

TEST_CASE("a PCIe tree: the ring crosses each switch's uplink once a direction; two strided rings share it") {
  const models::ClusterSpec c = pcie_two_switches();
  const std::vector<std::vector<int>> strided = {{0, 2, 4, 6}, {1, 3, 5, 7}};
  models::AnalyticTimer an(c, kLaunch, models::Algorithm::kRing);
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {4, 8, 16}, {}, [&](models::CollectiveTimer& sg) {
    const std::int64_t n = 64 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n}, ag{CollectiveKind::kAllGather, n};
    for (int w : {4, 8, 16}) {
      INFO("W = " << w);
      check_close(sg.time(ar, w, {}), an.time(ar, w, {}));
      check_close(sg.time(ag, w, {}), an.time(ag, w, {}));
    }
    check_close(sg.time(ar, 8, {}), models::ring_all_reduce_time({Time::from_us(10), 10, kLaunch}, n, 8));
    // Rings over GPUs 0, 2, 4, 6 and 1, 3, 5, 7: each crosses the uplinks
    // once a direction (2 -> 4, 6 -> 0), so together they get 5 GB/s there.
    const std::vector<Time> both = sg.time_together(ar, strided);
    for (const Time t : both) check_close(t, models::ring_all_reduce_time({Time::from_us(10), 5, kLaunch}, n, 4));
    check_close(sg.time_together(ar, {strided[0]}).front(),
                models::ring_all_reduce_time({Time::from_us(10), 10, kLaunch}, n, 4));
  }, strided);
}

TEST_CASE("a PCIe tree under auto: each switch boundary carries all channels but one") {
  // As above, with auto's 2 channels (a NIC each): channel 0 enters a node
  // at GPU 0 and crosses 3 -> 4, channel 1 enters at GPU 4 and crosses
  // 7 -> 0, so each uplink direction carries one channel, half the bytes:
  // the ring runs at min(24, 2 x 10) = 20 GB/s inside a node.
  run(pcie_two_switches(), models::Algorithm::kAuto, {16}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    const std::int64_t n = 64 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n}, ag{CollectiveKind::kAllGather, n};
    check_close(sg.time(ar, 16, {}), an.time(ar, 16, {}));
    check_close(sg.time(ag, 16, {}), an.time(ag, 16, {}));
    check_close(sg.time(ag, 16, {}), models::ring_all_gather_time({Time::from_us(10), 20, kLaunch}, n, 16));
  });
}

TEST_CASE("half-duplex NICs: the flat ring's two crossings share one NIC") {
  models::Fabric nic = fabric(25, 5);
  nic.full_duplex = false;
  const auto c = cluster(2, 8, fabric(150, 3.4), 1, nic);
  run(c, models::Algorithm::kRing, {16}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    const std::int64_t n = 100 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n};
    // Node 0's NIC carries 7 -> 8 out and 15 -> 0 in: half the bandwidth each.
    check_close(an.time(ar, 16, {}), models::ring_all_reduce_time({Time::from_us(5), 25, kLaunch}, n, 16));
    check_close(sg.time(ar, 16, {}), models::ring_all_reduce_time({Time::from_us(5), 12.5, kLaunch}, n, 16));
  });
}

TEST_CASE("fat tree, 4:1 oversubscribed: the inter-node rings share each leaf's uplink") {
  models::Fabric tree = fabric(25, 5, models::Fabric::Topology::kFatTree);
  tree.nodes_per_switch = 2;
  tree.oversubscription = 4;  // uplink: 2 nodes x 8 NICs x 25 / 4 = 100 GB/s
  const auto c = cluster(8, 8, fabric(150, 3.4), 8, tree);
  run(c, models::Algorithm::kHierarchical, {16, 64}, [](models::CollectiveTimer& sg, models::AnalyticTimer& an) {
    const std::int64_t n = 100 << 20;
    const Collective ar{CollectiveKind::kAllReduce, n};
    const models::Hop intra{Time::from_us(3.4), 150}, inter{Time::from_us(5), 25};
    // Under one leaf: a NIC per ring, nothing shared.
    check_close(sg.time(ar, 16, {}), an.time(ar, 16, {}));
    check_close(an.time(ar, 16, {}), models::hierarchical_all_reduce_time(intra, inter, kLaunch, n, 8, 2));
    // Across leaves: 8 rings cross every uplink each way; 100 GB/s / 8 = 12.5 GB/s each.
    check_close(an.time(ar, 64, {}), models::hierarchical_all_reduce_time(intra, inter, kLaunch, n, 8, 8));
    check_close(sg.time(ar, 64, {}), models::hierarchical_all_reduce_time(intra, {Time::from_us(5), 12.5}, kLaunch, n, 8, 8));
  });
}

TEST_CASE("pipelined chains: broadcast and reduce take (K + W - 2) rounds, each as long as its slowest hop") {
  // 8 GPUs on a star: every hop 10 us + (n/K) / 25 GB/s; K = round(sqrt(6 n / (25 B/ns x 10,000 ns))) = 50
  // for n = 100 MiB. Full duplex: rounds share no link, each hop is simulated once (the sliding maximum).
  const auto c = cluster(1, 8, fabric(25, 10), 1, fabric(25, 10));
  run(c, models::Algorithm::kRing, {8}, [](models::CollectiveTimer& sg, models::AnalyticTimer&) {
    const std::int64_t n = 100 << 20;
    const double round_ns = 10'000 + static_cast<double>(n) / 50 / 25;
    const Time expected = kLaunch + Time::ns(std::llround(56 * round_ns));
    for (CollectiveKind k : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
      INFO("simgrid " << sg.time({k, n}, 8, {}).count_ns() << " ns");
      CHECK(std::llabs(sg.time({k, n}, 8, {}).count_ns() - expected.count_ns()) <= 56);
    }
    // A slow GPU (rank 3, 2x) slows the rounds its hops are in: 50 + 1 rounds hold hop 2 or 3.
    const double slow_ns = 10'000 + static_cast<double>(n) / 50 / 12.5;
    const Time slowed = kLaunch + Time::ns(std::llround(5 * round_ns + 51 * slow_ns));
    CHECK(std::llabs(sg.time({CollectiveKind::kBroadcast, n}, 8, {{3, 2.0}}).count_ns() - slowed.count_ns()) <= 56);
  });
}

TEST_CASE("half-duplex GPU links: a chain round by round, each GPU's link shared by what it receives and forwards") {
  models::Fabric link = fabric(25, 10);
  link.full_duplex = false;
  const auto c = cluster(1, 8, link, 1, fabric(25, 10));
  run(c, models::Algorithm::kRing, {8}, [](models::CollectiveTimer& sg, models::AnalyticTimer&) {
    const std::int64_t n = 100 << 20;
    // Full rounds move two chunks through the inner GPUs' links: at most twice the full-duplex time.
    const double round_ns = 10'000 + static_cast<double>(n) / 50 / 25;
    const Time t = sg.time({CollectiveKind::kBroadcast, n}, 8, {});
    CHECK(t > kLaunch + Time::ns(std::llround(56 * round_ns)));
    CHECK(t < kLaunch + Time::ns(std::llround(56 * 2 * round_ns)));
  });
}

TEST_CASE("only the SimGrid settings ddpsim passes on are accepted") {
  netsim::SimgridOptions o;
  o.config = {{"network/bogus", "1"}};
  const auto c = cluster(1, 2, fabric(25, 10), 1, fabric(25, 10));
  CHECK_THROWS_WITH(netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {2}, o, [](models::CollectiveTimer&) {}),
                    doctest::Contains("network/bogus"));
}

TEST_CASE("every setting ddpsim passes on is one SimGrid knows; ddpsim's own values leave the formulas exact") {
  netsim::SimgridOptions o;
  o.config = {{"network/model", "CM02"},        {"network/TCP-gamma", "0"},    {"network/crosstraffic", "0"},
              {"network/latency-factor", "1"},  {"network/bandwidth-factor", "1"}, {"network/weight-S", "0"},
              {"surf/precision", "1e-09"},      {"maxmin/precision", "1e-05"}};
  REQUIRE(o.config.size() == netsim::simgrid_settable().size());
  const auto c = cluster(1, 4, fabric(25, 10), 1, fabric(25, 10));
  models::AnalyticTimer an(c, kLaunch, models::Algorithm::kRing);
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {4}, o, [&](models::CollectiveTimer& sg) {
    const Collective ar{CollectiveKind::kAllReduce, 64 << 20};
    check_close(sg.time(ar, 4, {}), an.time(ar, 4, {}));
  });
}

TEST_CASE("a calibrated TCP model (LV08) is slower than latency + bytes / bandwidth") {
  netsim::SimgridOptions o;
  o.config = {{"network/model", "LV08"}};
  const auto c = cluster(1, 4, fabric(25, 10), 1, fabric(25, 10));
  models::AnalyticTimer an(c, kLaunch, models::Algorithm::kRing);
  netsim::run_with_simgrid(c, kLaunch, models::Algorithm::kRing, {4}, o, [&](models::CollectiveTimer& sg) {
    // LV08: latency x 13.01, bandwidth x 0.97 (SimGrid's calibration for TCP).
    const Collective ar{CollectiveKind::kAllReduce, 64 << 20};
    CHECK(sg.time(ar, 4, {}) > an.time(ar, 4, {}));
  });
}

TEST_CASE("Open MPI's binomial all-reduce: the engines agree on links all alike") {
  // One node of 8 on a star: every message on its own route, a parent's sends sharing its link, as the
  // analytic engine's chains price them.
  const auto one = cluster(1, 8, fabric(150, 3.4), 1, fabric(25, 5));
  models::AnalyticTimer an_one(one, kLaunch, models::Algorithm::kBinomial);
  const Collective ar{CollectiveKind::kAllReduce, std::int64_t{100} << 20};
  netsim::run_with_simgrid(one, kLaunch, models::Algorithm::kBinomial, {2, 4, 8}, {}, [&](models::CollectiveTimer& sg) {
    for (int w : {2, 4, 8}) {
      CAPTURE(w);
      check_close(sg.time(ar, w, {}), an_one.time(ar, w, {}));
    }
  });
}

TEST_CASE("Open MPI's binomial all-reduce: SimGrid shares a node's NIC between the messages leaving it at once") {
  // Two nodes of 4, one NIC each: going down, ranks 1 and 2 send to 5 and 6 at once through node 0's NIC
  // (two buffers' time there), which the analytic engine prices as if each had it alone.
  const Collective ar{CollectiveKind::kAllReduce, std::int64_t{100} << 20};
  const auto two = cluster(2, 4, fabric(150, 3.4), 1, fabric(25, 5));
  models::AnalyticTimer an_two(two, kLaunch, models::Algorithm::kBinomial);
  netsim::run_with_simgrid(two, kLaunch, models::Algorithm::kBinomial, {8}, {}, [&](models::CollectiveTimer& sg) {
    const double inter_us = (100 << 20) / 25e3;
    CHECK(sg.time(ar, 8, {}).us() > an_two.time(ar, 8, {}).us() + 0.3 * inter_us);
  });
}
