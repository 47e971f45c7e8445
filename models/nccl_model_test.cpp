#include "models/nccl_model.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace ddpsim;
using models::NcclAlgo;
using models::NcclProto;
using sim::CollectiveKind;

namespace {

const models::NcclCost& find(const std::vector<models::NcclCost>& costs, NcclAlgo a, NcclProto p) {
  for (const auto& c : costs) {
    if (c.algo == a && c.proto == p) return c;
  }
  FAIL("no such entry");
  return costs.front();
}

}  // namespace

TEST_CASE("NCCL's TUNING table of a real log: 2 ranks as 2 nodes over sockets (nccl_model.md 1.8)") {
  // NCCL 2.29.7's NCCL_DEBUG_SUBSYS=TUNING printed for AllReduce: Ring LL 16.6 us / 1.2 GB/s, LL128 31.0,
  // Simple 36.4 / 2.4; Tree LL 16.8, Simple 36.4; Broadcast Ring LL 9.3.
  models::NcclTopology t;
  t.nodes = 2;
  t.gpus_per_node = 1;
  t.channels = 1;
  t.bw_intra_GBps = t.bw_inter_GBps = 2.4;
  t.ll128 = false;  // sockets: LL128's enable rule needs NVLink inside a node
  const auto ar = models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 20, 2);
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kLL).latency_us == doctest::Approx(16.6));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kLL).bandwidth_GBps == doctest::Approx(1.2));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kLL128).latency_us == doctest::Approx(31.0));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kLL128).time_us == -1);
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kSimple).latency_us == doctest::Approx(36.4));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kSimple).bandwidth_GBps == doctest::Approx(2.4));
  CHECK(find(ar, NcclAlgo::kTree, NcclProto::kLL).latency_us == doctest::Approx(16.8));
  CHECK(find(ar, NcclAlgo::kTree, NcclProto::kSimple).latency_us == doctest::Approx(36.4));
  const auto bc = models::nccl_costs(t, CollectiveKind::kBroadcast, 1024, 2);
  CHECK(find(bc, NcclAlgo::kRing, NcclProto::kLL).latency_us == doctest::Approx(9.3));
  CHECK(find(bc, NcclAlgo::kTree, NcclProto::kLL).time_us == -1);  // broadcast: ring only
  // PAT (one GPU a node; all_gather and reduce_scatter, Simple): 8 + log2(2) x 14 / 3.5 + 2 x 2.8 = 17.6,
  // the log's; its bandwidth is the tree graph's x 0.75, with no ratio n / nsteps.
  const auto ag = models::nccl_costs(t, CollectiveKind::kAllGather, 1 << 20, 2);
  CHECK(find(ag, NcclAlgo::kPat, NcclProto::kSimple).latency_us == doctest::Approx(17.6));
  CHECK(find(ag, NcclAlgo::kPat, NcclProto::kSimple).bandwidth_GBps == doctest::Approx(2.4 * 0.75));
  CHECK(find(ag, NcclAlgo::kPat, NcclProto::kLL).time_us == -1);
  CHECK(find(ar, NcclAlgo::kPat, NcclProto::kSimple).time_us == -1);  // not all_reduce
  models::NcclTopology eight = t;
  eight.gpus_per_node = 8;  // PAT needs one GPU a node
  CHECK(find(models::nccl_costs(eight, CollectiveKind::kAllGather, 1 << 20, 16), NcclAlgo::kPat, NcclProto::kSimple)
            .time_us == -1);
  // The log's broadcast switches from LL to Simple between 16 and 32 KiB (the model's crossover: 31.4 KB).
  CHECK(models::nccl_choice(t, CollectiveKind::kBroadcast, 16 << 10, 2).proto == NcclProto::kLL);
  CHECK(models::nccl_choice(t, CollectiveKind::kBroadcast, 32 << 10, 2).proto == NcclProto::kSimple);
}

TEST_CASE("DGX A100 (nccl_model.md 3, 'Model vs. T1'): 12 channels of 20 GB/s; ring LL and Simple") {
  const models::NcclTopology t = models::nccl_topology(models::GpuArch::kAmpere, 1, 8, true, 240, 0);
  CHECK(t.channels == 12);
  CHECK(t.bw_intra_GBps == doctest::Approx(20));
  const auto ar = models::nccl_costs(t, CollectiveKind::kAllReduce, 128 << 20, 8);
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kLL).latency_us == doctest::Approx(15.0));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kLL).bandwidth_GBps == doctest::Approx(87.7 * 8 / 14));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kSimple).latency_us == doctest::Approx(56.0));
  CHECK(find(ar, NcclAlgo::kRing, NcclProto::kSimple).bandwidth_GBps == doctest::Approx(240.0 * 8 / 14));
  // 128 MiB: Simple, 56 + 134217728 / 137143 us = 1035 us (the reference's figure).
  const models::NcclCost big = models::nccl_choice(t, CollectiveKind::kAllReduce, 128 << 20, 8);
  CHECK(big.algo == NcclAlgo::kRing);
  CHECK(big.proto == NcclProto::kSimple);
  CHECK(big.time_us == doctest::Approx(1034.7).epsilon(1e-3));
  // DGX H100: 18 NVLinks x 20.6 = 370.8 GB/s: 6 x 60, doubled to 12 x 30.
  const models::NcclTopology h = models::nccl_topology(models::GpuArch::kHopper, 1, 8, true, 370.8, 0);
  CHECK(h.channels == 12);
  CHECK(h.bw_intra_GBps == doctest::Approx(30));
}

TEST_CASE("NCCL model: reduce prices as broadcast (ring, n steps); all_to_all is outside the tuning model") {
  const models::NcclTopology t = models::nccl_topology(models::GpuArch::kAmpere, 1, 8, true, 240, 0);
  const auto r = models::nccl_costs(t, CollectiveKind::kReduce, 1 << 20, 8);
  const auto b = models::nccl_costs(t, CollectiveKind::kBroadcast, 1 << 20, 8);
  REQUIRE(r.size() == b.size());
  for (std::size_t i = 0; i < r.size(); ++i) CHECK(r[i].time_us == b[i].time_us);
  CHECK_THROWS_AS(models::nccl_costs(t, CollectiveKind::kAllToAll, 1 << 20, 8), std::invalid_argument);
}

TEST_CASE("NCCL model: one rank costs nothing; a barrier is a small all-reduce; tree is all_reduce only") {
  const models::NcclTopology t = models::nccl_topology(models::GpuArch::kHopper, 2, 8, true, 370.8, 200);
  CHECK(models::nccl_choice(t, CollectiveKind::kAllReduce, 1 << 20, 1).time_us == 0);
  CHECK(models::nccl_choice(t, CollectiveKind::kBarrier, 0, 16).time_us ==
        doctest::Approx(models::nccl_choice(t, CollectiveKind::kAllReduce, 4, 16).time_us));
  for (const auto& c : models::nccl_costs(t, CollectiveKind::kAllGather, 1 << 20, 16)) {
    if (c.algo == NcclAlgo::kTree) CHECK(c.time_us == -1);
  }
  // Two nodes: the ring's Simple latency pays the plateau factor (1.4 from Ampere on) at large sizes.
  const auto small = models::nccl_costs(t, CollectiveKind::kAllReduce, 64, 16);
  const auto large = models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 16);
  const auto& s = find(small, NcclAlgo::kRing, NcclProto::kSimple);
  const auto& l = find(large, NcclAlgo::kRing, NcclProto::kSimple);
  CHECK(l.time_us - static_cast<double>(1 << 30) / (1000 * l.bandwidth_GBps) == doctest::Approx(1.4 * l.latency_us));
  CHECK(s.time_us - 64.0 / (1000 * s.bandwidth_GBps) == doctest::Approx(s.latency_us));
}

TEST_CASE("NVLS on one DGX H100: 8 channels of 40 GB/s, all_reduce's bus bandwidth 476 GB/s (T4's plateau: 474)") {
  // The NVLS graph: one channel a GPU, each channel's head GPU pulling twice
  // through its NVSwitch link and the others once: (8 + 1) x 40 <= 370.8.
  const models::NcclTopology t = models::nccl_topology(models::GpuArch::kHopper, 1, 8, true, 370.8, 0, true);
  REQUIRE(t.nvls);
  const models::NvlsGraph g = models::nvls_graph(t, 8, 1);
  CHECK(g.channels == 8);
  CHECK(g.bw_intra_GBps == doctest::Approx(40));
  CHECK(g.bw_inter_GBps == doctest::Approx(60));  // pass 2: up to twice bwIntra, the array's top
  const auto ar = models::nccl_costs(t, CollectiveKind::kAllReduce, std::int64_t{4} << 30, 8);
  const auto& nvls = find(ar, NcclAlgo::kNvls, NcclProto::kSimple);
  CHECK(nvls.latency_us == doctest::Approx(25));
  // per channel 40 x 0.85 x 7/8 x 2 = 59.5; x 8 channels x n / nsteps = 8 / 14.
  CHECK(nvls.bandwidth_GBps == doctest::Approx(8 * 59.5 * 8 / 14));
  CHECK(nvls.bandwidth_GBps * 14 / 8 == doctest::Approx(476));  // nccl-tests' busbw
  CHECK(find(ar, NcclAlgo::kNvls, NcclProto::kLL).time_us == -1);  // Simple only
  CHECK(find(ar, NcclAlgo::kNvls, NcclProto::kLL128).time_us == -1);
  CHECK(find(ar, NcclAlgo::kNvlsTree, NcclProto::kSimple).time_us == -1);  // not on one node
  CHECK(models::nccl_choice(t, CollectiveKind::kAllReduce, std::int64_t{4} << 30, 8).algo == NcclAlgo::kNvls);
  CHECK(models::nccl_choice(t, CollectiveKind::kAllReduce, 8, 8).algo != NcclAlgo::kNvls);
  // all_gather: the intra bandwidth times (ppn - 1) / ppn, and no ratio n / nsteps for a non-ring algorithm.
  const auto ag = models::nccl_costs(t, CollectiveKind::kAllGather, 1 << 30, 8);
  CHECK(find(ag, NcclAlgo::kNvls, NcclProto::kSimple).bandwidth_GBps == doctest::Approx(8 * 40 * 0.85 * 7 / 8 * 7 / 8));
  for (const auto& c : models::nccl_costs(t, CollectiveKind::kBroadcast, 1 << 30, 8)) {
    CAPTURE(to_string(c.algo));
    if (c.algo == NcclAlgo::kNvls || c.algo == NcclAlgo::kNvlsTree) CHECK(c.time_us == -1);  // ring only
  }
  // Four GPUs of the node: four channels, (4 + 1) x 60 <= 370.8.
  CHECK(models::nvls_graph(t, 4, 1).bw_intra_GBps == doctest::Approx(60));
  // No NVLS without NVSwitch, or before Hopper.
  CHECK_FALSE(models::nccl_topology(models::GpuArch::kHopper, 1, 8, true, 370.8, 0, false).nvls);
  CHECK_FALSE(models::nccl_topology(models::GpuArch::kAmpere, 1, 8, true, 240, 0, true).nvls);
  CHECK_FALSE(models::nccl_topology(models::GpuArch::kHopper, 1, 8, false, 64, 0, true).nvls);
}

TEST_CASE("NVLSTree across two H100 nodes: NVLS inside, a tree between; NVLS alone needs CollNet there") {
  models::NcclTopology t = models::nccl_topology(models::GpuArch::kHopper, 2, 8, true, 370.8, 200, true);
  t.nics_per_node = 8;  // 8 NICs of 25 GB/s (200 Gb/s)
  t.net = models::net_graph(models::GpuArch::kHopper, 370.8, 8, 25);
  // The ring across the nodes: one channel a NIC at the inter array's 24 GB/s, not the node's 12 x 30.
  CHECK(t.net->channels == 8);
  CHECK(t.net->bw_intra_GBps == doctest::Approx(24));
  CHECK(find(models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 16), NcclAlgo::kRing, NcclProto::kSimple)
            .bandwidth_GBps == doctest::Approx(8 * 24.0 * 16 / 30));
  // A group inside one node keeps the node's graph.
  CHECK(find(models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 8), NcclAlgo::kRing, NcclProto::kSimple)
            .bandwidth_GBps == doctest::Approx(12 * 30.0 * 8 / 14));
  const models::NvlsGraph g = models::nvls_graph(t, 8, 2);
  // One channel a NIC; the inter-node array's fastest speed a 25 GB/s NIC carries: 24, both ways.
  CHECK(g.channels == 8);
  CHECK(g.bw_intra_GBps == doctest::Approx(24));
  CHECK(g.bw_inter_GBps == doctest::Approx(24));
  // The same node's 8 GPUs alone: the one-node graph.
  CHECK(models::nvls_graph(t, 8, 1).bw_intra_GBps == doctest::Approx(40));
  const auto ar = models::nccl_costs(t, CollectiveKind::kAllReduce, std::int64_t{8} << 30, 16);
  CHECK(find(ar, NcclAlgo::kNvls, NcclProto::kSimple).time_us == -1);
  const auto& tree = find(ar, NcclAlgo::kNvlsTree, NcclProto::kSimple);
  // min(intra 24 x 0.85 x 7/8 x 2 = 35.7, inter 2 x 24 (two nodes), perChMaxNVLSTreeBw 57.7) a channel; x 8; x 16 / 30.
  CHECK(tree.bandwidth_GBps == doctest::Approx(8 * 35.7 * 16 / 30));
  // intraLat 25 + 2 log2(2) x NET's 20.9.
  CHECK(tree.latency_us == doctest::Approx(25 + 2 * 20.9));
  CHECK(models::nccl_choice(t, CollectiveKind::kAllReduce, std::int64_t{8} << 30, 16).algo == NcclAlgo::kNvlsTree);
  // all_gather has no NVLSTree.
  CHECK(find(models::nccl_costs(t, CollectiveKind::kAllGather, 1 << 30, 16), NcclAlgo::kNvlsTree, NcclProto::kSimple)
            .time_us == -1);
}

TEST_CASE("CollNet where the network reduces (SHARP): two DGX H100 nodes, 8 NICs of 400 Gb/s") {
  // Every figure by hand from tuning.cc's formulas (v2.30.7) and the graphs' derivation.
  models::NcclTopology t = models::nccl_topology(models::GpuArch::kHopper, 2, 8, true, 370.8, 400, true);
  t.nics_per_node = 8;
  t.net = models::net_graph(models::GpuArch::kHopper, 370.8, 8, 50);
  const auto plain = models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 16);
  for (const models::NcclCost& c : plain) CHECK(c.algo != NcclAlgo::kCollNetDirect);  // listed only with collnet
  CHECK(find(plain, NcclAlgo::kNvls, NcclProto::kSimple).time_us == -1);
  t.collnet = true;
  // The ring's graph across nodes: 48 GB/s a channel (the inter array's fastest a 50 GB/s NIC carries),
  // 7 channels (NVLink 370.8 / 48), not doubled (sm90 below 50 GB/s with more than 4).
  REQUIRE(t.net->channels == 7);
  // CollNetDirect: 8 heads, one a NIC; each GPU's link carries 2 x 48 <= 370.8.
  const models::NvlsGraph direct = models::collnet_direct_graph(t, 8);
  CHECK(direct.channels == 8);
  CHECK(direct.bw_intra_GBps == doctest::Approx(48));
  const auto ar = models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 16);
  const auto& d = find(ar, NcclAlgo::kCollNetDirect, NcclProto::kSimple);
  CHECK(d.bandwidth_GBps == doctest::Approx(8 * 48 * 0.85 * 0.5));  // GPU:NIC factor 1, x 0.85 (sm90), x 0.5
  CHECK(d.latency_us == doctest::Approx(2 * (3.7 + 7 * 0.4) + 31));
  const auto& c = find(ar, NcclAlgo::kCollNetChain, NcclProto::kSimple);
  CHECK(c.bandwidth_GBps == doctest::Approx(7 * 48 * 0.5));
  CHECK(c.latency_us == doctest::Approx(2 * 7 * 2.8 + 30));
  CHECK(find(ar, NcclAlgo::kCollNetDirect, NcclProto::kLL).time_us == -1);  // Simple only
  CHECK(find(ar, NcclAlgo::kCollNetChain, NcclProto::kLL128).time_us == -1);
  // NVLS across the nodes, with the network's SHARP: pass 1 (8 + 1) x 40 <= 370.8, bwInter raised to 48;
  // min(40 x 0.85 x 7/8 x 2 = 59.5, 48) x 8 channels x 16 / 30; latency 25 + NET's 18.
  const auto& nvls = find(ar, NcclAlgo::kNvls, NcclProto::kSimple);
  CHECK(nvls.bandwidth_GBps == doctest::Approx(48 * 8 * 16.0 / 30));
  CHECK(nvls.latency_us == doctest::Approx(25 + 18));
  // A GPU:NIC ratio of 2 (4 NICs): factor 2 - 1/2 = 1.5 on 4 heads' 4 x 48.
  t.nics_per_node = 4;
  const auto four_nics = models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 16);
  CHECK(find(four_nics, NcclAlgo::kCollNetDirect, NcclProto::kSimple).bandwidth_GBps ==
        doctest::Approx(4 * 48 / 1.5 * 0.85 * 0.5));
  t.nics_per_node = 8;
  // Not on one node, not for all_gather, not without an NVSwitch (Direct).
  CHECK(find(models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 8), NcclAlgo::kCollNetChain, NcclProto::kSimple)
            .time_us == -1);
  CHECK(find(models::nccl_costs(t, CollectiveKind::kAllGather, 1 << 30, 16), NcclAlgo::kCollNetDirect, NcclProto::kSimple)
            .time_us == -1);
  t.nvswitch = false;
  CHECK(models::collnet_direct_graph(t, 8).channels == 0);
  CHECK(find(models::nccl_costs(t, CollectiveKind::kAllReduce, 1 << 30, 16), NcclAlgo::kCollNetDirect, NcclProto::kSimple)
            .time_us == -1);
}
