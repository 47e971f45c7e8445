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
