// The analytic engine's algorithm choice (collective.algorithm: auto): per
// call, the faster of the ring run with a channel per NIC and the
// hierarchical all-reduce. docs/cost-models.md#the-per-call-choice-auto.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/cluster.hpp"
#include "models/collective_cost.hpp"
#include "models/ddp_job.hpp"

namespace models = ddpsim::models;
using ddpsim::sim::Collective;
using ddpsim::sim::CollectiveKind;
using ddpsim::sim::Time;

namespace {

const Time kLaunch = Time::from_us(15);

// Two DGX-1-like nodes: 8 GPUs on 40 GB/s, 10 us routes; 8 NICs of 6.25 GB/s, 14 us.
models::ClusterSpec two_nodes(int nics) {
  models::ClusterSpec c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.intra.bandwidth_GBps = 40;
  c.intra.latency = Time::from_us(10);
  c.nics_per_node = nics;
  c.inter.bandwidth_GBps = 6.25;
  c.inter.latency = Time::from_us(14);
  return c;
}

Time ring(double gbps, double us, const Collective& c, int w) {
  return models::collective_time(models::NetworkParams{Time::from_us(us), gbps, kLaunch}, c, w);
}

}  // namespace

TEST_CASE("auto: a ring with a channel per NIC for large calls, the hierarchical all-reduce for small ones") {
  const auto c = two_nodes(8);
  models::AnalyticTimer automatic(c, kLaunch, models::Algorithm::kAuto);
  models::AnalyticTimer flat(c, kLaunch, models::Algorithm::kRing);
  models::AnalyticTimer hierarchical(c, kLaunch, models::Algorithm::kHierarchical);
  const Collective small{CollectiveKind::kAllReduce, 1 << 20}, large{CollectiveKind::kAllReduce, 25 << 20};
  // Eight channels cross the nodes on eight NICs: 50 GB/s between nodes at
  // 14 us a step. Inside a node each GPU heads one channel, whose flow leaves
  // on a NIC, so its NVLink carries 7 of the 8 flows: 40 x 8/7 GB/s at 10 us.
  // The slower prices each step.
  const Time multi_ring = std::max(ring(40 * (8 / 7.0), 10, large, 16), ring(50, 14, large, 16));
  CHECK(multi_ring == ring(50, 14, large, 16));
  CHECK(automatic.time(large, 16, {}) == multi_ring);
  CHECK(automatic.algorithm_for(large, 16) == models::Algorithm::kRing);
  CHECK(multi_ring < hierarchical.time(large, 16, {}));
  // The single-channel ring goes through one NIC.
  CHECK(flat.time(large, 16, {}) == ring(6.25, 14, large, 16));
  // 1 MiB: 30 step latencies cost more than the hierarchical 14 + 2.
  CHECK(automatic.time(small, 16, {}) == hierarchical.time(small, 16, {}));
  CHECK(automatic.algorithm_for(small, 16) == models::Algorithm::kHierarchical);
  CHECK(hierarchical.time(small, 16, {}) < ring(50, 14, small, 16));
  // One node: both are the same ring over NVLink.
  CHECK(automatic.time(large, 8, {}) == ring(40, 10, large, 8));
  CHECK(automatic.algorithm_for(large, 8) == models::Algorithm::kRing);
}

TEST_CASE("auto: the channels are as many as the NICs, at most one per GPU, and under a fat tree's uplink") {
  // An all-gather has no hierarchical alternative: it shows the ring's channels alone.
  const Collective gather{CollectiveKind::kAllGather, 64 << 20};
  auto c = two_nodes(2);
  CHECK(models::AnalyticTimer(c, kLaunch, models::Algorithm::kAuto).time(gather, 16, {}) == ring(12.5, 14, gather, 16));
  c.nics_per_node = 16;  // more NICs than GPUs: a channel per GPU, 8 x 6.25 GB/s (at 1 MiB the network's latency shows)
  const Collective small{CollectiveKind::kAllGather, 1 << 20};
  CHECK(models::AnalyticTimer(c, kLaunch, models::Algorithm::kAuto).time(small, 16, {}) == ring(50, 14, small, 16));
  c = two_nodes(4);
  c.inter.topology = models::Fabric::Topology::kFatTree;
  c.inter.nodes_per_switch = 1;
  c.inter.oversubscription = 2;  // each leaf's uplink: 4 NICs x 6.25 / 2
  CHECK(models::AnalyticTimer(c, kLaunch, models::Algorithm::kAuto).time(gather, 16, {}) == ring(12.5, 14, gather, 16));
}

TEST_CASE("auto: the hierarchical alternative's eight inter-node rings share the node's NICs") {
  // Two NICs for eight rings: a quarter of a NIC each. It still wins 64 MiB,
  // for it sends each byte across the network once where the ring sends it
  // 2(W-1)/W times.
  const auto c = two_nodes(2);
  models::AnalyticTimer automatic(c, kLaunch, models::Algorithm::kAuto);
  const Collective large{CollectiveKind::kAllReduce, 64 << 20};
  const models::Hop intra{Time::from_us(10), 40}, shared{Time::from_us(14), 6.25 * 2 / 8};
  CHECK(automatic.time(large, 16, {}) == models::hierarchical_all_reduce_time(intra, shared, kLaunch, 64 << 20, 8, 2));
  CHECK(automatic.algorithm_for(large, 16) == models::Algorithm::kHierarchical);
}

TEST_CASE("auto: a slow rank's links slow the channels that cross them") {
  const auto c = two_nodes(4);
  models::AnalyticTimer automatic(c, kLaunch, models::Algorithm::kAuto);
  const Collective large{CollectiveKind::kAllReduce, 25 << 20};
  // Four channels: 25 GB/s across the nodes. Rank 3's links at a quarter:
  // its NVLink hops run at 10 GB/s, and the ring's slowest hop prices it.
  CHECK(automatic.time(large, 16, {{3, 4.0}}) == ring(10, 10, large, 16));
}

TEST_CASE("a PCIe tree: a route between two switches is held to their uplinks") {
  // One node of 8 GPUs on PCIe (24 GB/s each), two switches of 4 (two CPU
  // sockets) joined at 10 GB/s a direction.
  models::ClusterSpec c;
  c.gpus_per_node = 8;
  c.nvlink = false;
  c.intra.bandwidth_GBps = 24;
  c.intra.latency = Time::from_us(10);
  c.gpus_per_switch = 4;
  c.switch_uplink_GBps = 10;
  REQUIRE(c.pcie_switches() == 2);
  CHECK(models::route(c, 1, 2).bandwidth_GBps == 24);  // one switch
  CHECK(models::route(c, 3, 4).bandwidth_GBps == 10);  // across the uplinks
  CHECK(models::route(c, 7, 0).bandwidth_GBps == 10);
  CHECK(models::route(c, 3, 4).latency == Time::from_us(10));
  models::AnalyticTimer timer(c, kLaunch, models::Algorithm::kRing);
  const Collective ar{CollectiveKind::kAllReduce, 64 << 20};
  // Four GPUs stay behind one switch; eight cross twice (once each way), at 10 GB/s.
  CHECK(timer.time(ar, 4, {}) == ring(24, 10, ar, 4));
  CHECK(timer.time(ar, 8, {}) == ring(10, 10, ar, 8));
  // One switch for all: the star as before.
  c.gpus_per_switch = 8;
  CHECK(models::AnalyticTimer(c, kLaunch, models::Algorithm::kRing).time(ar, 8, {}) == ring(24, 10, ar, 8));
}

TEST_CASE("gloo's broadcast: the whole buffer down a binomial tree, a round at a time, a node's NIC shared") {
  // 1 MB on two nodes of 8: one NIC a node, then 8.
  const Collective b{CollectiveKind::kBroadcast, 1'000'000};
  const auto us = [](Time t) { return t.us(); };
  for (const int nics : {1, 8}) {
    CAPTURE(nics);
    models::AnalyticTimer tree(two_nodes(nics), kLaunch, models::Algorithm::kRing, models::Broadcast::kBinomialTree);
    models::AnalyticTimer pipelined(two_nodes(nics), kLaunch, models::Algorithm::kRing);
    // W = 4 inside a node: rounds 0 -> 1 and 0 -> 2, 1 -> 3, each 10 us + 25 us (1 MB at 40 GB/s).
    CHECK(us(tree.time(b, 4, {})) == doctest::Approx(15 + 2 * (10 + 25)));
    // W = 5: a third round, 0 -> 4.
    CHECK(us(tree.time(b, 5, {})) == doctest::Approx(15 + 3 * (10 + 25)));
    // W = 16: three rounds inside node 0, then 0..7 -> 8..15 at once over
    // node 0's NICs: 14 us + 160 us (1 MB at 6.25 GB/s) times 8 / nics.
    CHECK(us(tree.time(b, 16, {})) == doctest::Approx(15 + 3 * (10 + 25) + 14 + 160.0 * 8 / nics));
    // NCCL's pipelined ring: one buffer's time at the slowest hop, a latency a hop.
    CHECK(us(pipelined.time(b, 4, {})) == doctest::Approx(15 + 3 * 10 + 25));
  }
  // A slow rank slows the rounds it sends or receives in: rank 3 at half, in the round 1 -> 3.
  models::AnalyticTimer tree(two_nodes(8), kLaunch, models::Algorithm::kRing, models::Broadcast::kBinomialTree);
  CHECK(us(tree.time(b, 4, {{3, 2.0}})) == doctest::Approx(15 + (10 + 25) + (10 + 50)));
  CHECK(models::broadcast_of(models::Backend::kGloo) == models::Broadcast::kBinomialTree);
  CHECK(models::broadcast_of(models::Backend::kNccl) == models::Broadcast::kPipelined);
}

TEST_CASE("Open MPI's binomial all-reduce: up a tree to rank 0, then down one, a rank's children sharing its link") {
  // Counted by hand in latencies and transfers (docs/cost-models.md#open-mpis-binomial-all-reduce). W = 4:
  // up 1 -> 0 and 3 -> 2, then 2 -> 0; down 0 -> {1, 2} at once (two transfers on 0's link), then 1 -> 3.
  const auto counts = [](int w) {
    const models::BinomialCounts n = models::binomial_all_reduce_counts(w);
    return std::pair{n.latencies, n.transfers};
  };
  CHECK(counts(1) == std::pair{0, 0});
  CHECK(counts(2) == std::pair{2, 2});
  CHECK(counts(3) == std::pair{3, 4});  // up 1 -> 0, 2 -> 0; down 0 -> {1, 2}
  CHECK(counts(4) == std::pair{4, 5});
  // W = 8: up 3 rounds; down 0 -> {1, 2, 4} (3), 1 -> {3, 5} (2), 3 -> 7 (1).
  CHECK(counts(8) == std::pair{6, 9});
  // Inside a node: 10 us a message, 1 MB at 40 GB/s is 25 us; launch 15 us.
  const Collective ar{CollectiveKind::kAllReduce, 1'000'000};
  models::AnalyticTimer binomial(two_nodes(8), kLaunch, models::Algorithm::kBinomial);
  CHECK(binomial.time(ar, 4, {}).us() == doctest::Approx(15 + 4 * 10 + 5 * 25));
  // Rank 3 at half: up, 3 -> 2 takes 50; 2 -> 0 waits for it; down, 1 -> 3 takes 50:
  // up 10 + 50, then 10 + 25; down 10 + 2 x 25, then 10 + 50.
  CHECK(binomial.time(ar, 4, {{3, 2.0}}).us() == doctest::Approx(15 + (60 + 35) + (60 + 60)));
  // Other collectives are the ring's; W = 1 the launch alone.
  models::AnalyticTimer ring(two_nodes(8), kLaunch, models::Algorithm::kRing);
  const Collective ag{CollectiveKind::kAllGather, 1'000'000};
  CHECK(binomial.time(ag, 4, {}) == ring.time(ag, 4, {}));
  CHECK(binomial.time(ar, 1, {}).us() == doctest::Approx(15));
  CHECK(!models::runs_hierarchical(models::Algorithm::kBinomial, two_nodes(8), 16));
}
