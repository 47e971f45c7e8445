#include "models/collective_cost.hpp"

#include <doctest/doctest.h>

using namespace ddpsim;
using models::NetworkParams;
using sim::Time;

namespace {
NetworkParams lab_network() {
  return NetworkParams{Time::from_us(180), 25.0, Time::from_us(50)};
}
}  // namespace

TEST_CASE("ring all-reduce: launch + 2(W-1) alpha + 2(W-1)/W bytes/bandwidth") {
  const NetworkParams net = lab_network();
  // One rank: no ring steps, only the launch.
  CHECK(models::ring_all_reduce_time(net, 4'000'000, 1) == Time::from_us(50));
  // 4 MB at 25 GB/s is 160 us; W=4: 50 + 6*180 + 1.5*160 = 1370 us.
  CHECK(models::ring_all_reduce_time(net, 4'000'000, 4) == Time::from_us(1370));
  // W=3: 2*2/3 * 160 us = 213.333 us, rounded to the nanosecond.
  CHECK(models::ring_all_reduce_time(net, 4'000'000, 3).count_ns() == 50'000 + 4 * 180'000 + 213'333);
}

TEST_CASE("the bandwidth term tends to twice bytes/bandwidth: bus bandwidth is link bandwidth") {
  NetworkParams net{Time::zero(), 10.0, Time::zero()};
  const std::int64_t bytes = 1'000'000'000;
  for (int w : {2, 8, 64, 1024}) {
    const double t = static_cast<double>(models::ring_all_reduce_time(net, bytes, w).count_ns());
    // nccl-tests: busbw = algbw * 2(W-1)/W; with alpha = 0 it equals the link bandwidth.
    const double algbw = static_cast<double>(bytes) / t;
    CHECK(algbw * 2.0 * (w - 1) / w == doctest::Approx(10.0).epsilon(1e-8));
  }
}

TEST_CASE("broadcast and barrier") {
  const NetworkParams net = lab_network();
  CHECK(models::ring_broadcast_time(net, 4'000'000, 1) == Time::from_us(50));
  CHECK(models::ring_broadcast_time(net, 4'000'000, 4) == Time::from_us(50 + 3 * 180 + 160));
  const sim::Collective barrier{sim::CollectiveKind::kBarrier, 0};
  CHECK(models::collective_time(net, barrier, 4) == models::ring_all_reduce_time(net, 4, 4));
}

TEST_CASE("all-gather and reduce-scatter: launch + (W-1) alpha + (W-1)/W bytes/bandwidth") {
  const NetworkParams net = lab_network();
  // 4 MB at 25 GB/s is 160 us; W=4: 50 + 3*180 + 0.75*160 = 710 us, the same both ways.
  for (const auto kind : {sim::CollectiveKind::kAllGather, sim::CollectiveKind::kReduceScatter}) {
    CHECK(models::collective_time(net, {kind, 4'000'000}, 4) == Time::from_us(710));
    CHECK(models::collective_time(net, {kind, 4'000'000}, 1) == Time::from_us(50));
  }
  // nccl-tests: busbw = algbw * (W-1)/W, the link bandwidth when alpha = 0.
  const NetworkParams fast{Time::zero(), 10.0, Time::zero()};
  const double t = static_cast<double>(models::ring_reduce_scatter_time(fast, 1'000'000'000, 8).count_ns());
  CHECK(1e9 / t * 7.0 / 8.0 == doctest::Approx(10.0).epsilon(1e-8));
}

TEST_CASE("reduce is the broadcast's chain; all-to-all is W-1 pairwise steps of bytes / W") {
  const NetworkParams net = lab_network();
  for (int w : {1, 2, 8}) {
    CHECK(models::collective_time(net, {sim::CollectiveKind::kReduce, 4'000'000}, w) ==
          models::ring_broadcast_time(net, 4'000'000, w));
  }
  // W=4: 50 + 3*180 + 0.75*160 = 710 us, as an all-gather of the same total.
  CHECK(models::collective_time(net, {sim::CollectiveKind::kAllToAll, 4'000'000}, 4) == Time::from_us(710));
  CHECK(sim::to_string(sim::CollectiveKind::kAllToAll) == "all_to_all");
  CHECK(sim::to_string(sim::CollectiveKind::kReduce) == "reduce");
}

TEST_CASE("invalid network parameters are refused") {
  NetworkParams net = lab_network();
  net.bandwidth_GBps = 0;
  CHECK_THROWS_AS(models::ring_all_reduce_time(net, 8, 2), std::invalid_argument);
  CHECK_THROWS_AS(models::ring_all_reduce_time(lab_network(), -1, 2), std::invalid_argument);
}
