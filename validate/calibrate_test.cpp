#include "validate/calibrate.hpp"

#include <doctest/doctest.h>

#include "models/cluster.hpp"
#include "models/collective_cost.hpp"
#include "sim/random.hpp"

#include <cmath>

using ddpsim::validate::SweepPoint;

namespace {

// A sweep the simulator's own ring formula produces: what the fit must recover.
std::vector<SweepPoint> model_sweep(const ddpsim::models::NetworkParams& net, std::vector<int> worlds, double noise,
                                    std::uint64_t seed) {
  ddpsim::sim::Rng rng(seed);
  std::vector<SweepPoint> points;
  for (int w : worlds) {
    for (std::int64_t bytes = 8; bytes <= (std::int64_t{256} << 20); bytes *= 4) {
      const double t = (ddpsim::models::ring_all_reduce_time(net, bytes, w).us());
      points.push_back({w, static_cast<double>(bytes), t * (1 + ddpsim::sim::draw_uniform(rng, -noise, noise))});
    }
  }
  return points;
}

const ddpsim::models::NetworkParams kNet{ddpsim::sim::Time::from_us(6), 25.0, ddpsim::sim::Time::from_us(20)};

}  // namespace

TEST_CASE("the fit recovers the ring model's own parameters") {
  const auto fit = ddpsim::validate::fit_collective(model_sweep(kNet, {1, 2, 4}, 0, 1));
  // The model rounds to whole nanoseconds: agreement to 1e-4 is exact here.
  CHECK(fit.launch_overhead_us == doctest::Approx(20).epsilon(1e-4));
  CHECK(fit.latency_us == doctest::Approx(6).epsilon(1e-4));
  CHECK(fit.bandwidth_GBps == doctest::Approx(25).epsilon(1e-4));
  CHECK(fit.r_squared == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(fit.max_relative_error < 1e-4);
  CHECK(fit.notes.empty());
}

TEST_CASE("the binomial fit recovers the analytic engine's binomial all-reduce, which the ring's form cannot") {
  // Sweeps priced by the engine itself (a star of 6 us, 25 GB/s routes; launch 20 us) at W = 1, 2, 4, 8.
  namespace m = ddpsim::models;
  m::ClusterSpec star = m::single_switch(8, kNet);
  m::AnalyticTimer timer(star, kNet.launch_overhead, m::Algorithm::kBinomial);
  std::vector<SweepPoint> points;
  for (int w : {1, 2, 4, 8}) {
    for (std::int64_t bytes = 8; bytes <= (std::int64_t{256} << 20); bytes *= 4) {
      points.push_back({w, static_cast<double>(bytes), timer.time({ddpsim::sim::CollectiveKind::kAllReduce, bytes}, w, {}).us()});
    }
  }
  const auto fit = ddpsim::validate::fit_collective(points, m::Algorithm::kBinomial);
  CHECK(fit.launch_overhead_us == doctest::Approx(20).epsilon(1e-4));
  CHECK(fit.latency_us == doctest::Approx(6).epsilon(1e-4));
  CHECK(fit.bandwidth_GBps == doctest::Approx(25).epsilon(1e-4));
  CHECK(fit.max_relative_error < 1e-4);
  // The ring's form cannot follow W = 8's nine transfers against W = 2's two.
  CHECK(ddpsim::validate::fit_collective(points).max_relative_error > 0.1);
}

TEST_CASE("with 5% noise the parameters stay within a few percent, and the residuals say so") {
  const auto fit = ddpsim::validate::fit_collective(model_sweep(kNet, {1, 2, 8}, 0.05, 7));
  CHECK(fit.bandwidth_GBps == doctest::Approx(25).epsilon(0.05));
  CHECK(fit.launch_overhead_us == doctest::Approx(20).epsilon(0.1));
  CHECK(fit.latency_us == doctest::Approx(6).epsilon(0.2));
  CHECK(fit.r_squared > 0.99);
  CHECK(fit.max_relative_error < 0.08);
  CHECK(fit.max_relative_error > 0.01);
}

TEST_CASE("one world size cannot separate launch overhead from latency: said, not guessed") {
  const auto fit = ddpsim::validate::fit_collective(model_sweep(kNet, {4}, 0, 1));
  REQUIRE(fit.notes.size() == 1);
  CHECK(fit.notes[0].find("cannot be told apart") != std::string::npos);
  CHECK(fit.launch_overhead_us == 0);
  CHECK(fit.latency_us == doctest::Approx(6 + 20.0 / 6).epsilon(1e-4));  // 20 us spread over 2(W-1) = 6 steps
  CHECK(fit.bandwidth_GBps == doctest::Approx(25).epsilon(1e-4));
}

TEST_CASE("sweeps at W = 1 alone (one GPU) give the launch overhead and leave the network to the scenario") {
  const auto fit = ddpsim::validate::fit_collective(model_sweep(kNet, {1}, 0, 1));
  CHECK_FALSE(fit.network_fitted);
  CHECK(fit.launch_overhead_us == doctest::Approx(20));  // kNet's launch overhead: all a W = 1 all-reduce costs
  REQUIRE(fit.notes.size() == 1);
  CHECK(fit.notes[0].find("stay the scenario's") != std::string::npos);
  CHECK(fit.max_relative_error == doctest::Approx(0).epsilon(1e-12));
}

TEST_CASE("bad sweeps are refused") {
  CHECK_THROWS_WITH(ddpsim::validate::fit_collective({}), doctest::Contains("no sweep points"));
  CHECK_THROWS_WITH(ddpsim::validate::fit_collective({{2, 8, 0}}), doctest::Contains("bad sweep point"));
}

TEST_CASE("the straggler fit recovers both forms from their own skews") {
  // One slow rank, 3 ms per doubling: skew = 3 log2(W) (W-1)/W.
  std::vector<ddpsim::validate::SkewPoint> log2_points;
  for (int w : {2, 4, 8}) log2_points.push_back({w, 3.0 * std::log2(w) * (w - 1) / w});
  const auto a = ddpsim::validate::fit_straggler(log2_points);
  CHECK(a.log2_penalty_ms == doctest::Approx(3.0));
  CHECK(a.log2_rms_ms == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(a.jitter_rms_ms > 0.1);  // the other form does not fit as well
  // Exponential jitter of mean 2 ms: skew = 2 (H_W - 1); H_2 = 1.5, H_4 = 25/12.
  const auto b = ddpsim::validate::fit_straggler({{2, 2 * 0.5}, {4, 2 * (25.0 / 12 - 1)}});
  CHECK(b.jitter_mean_ms == doctest::Approx(2.0));
  CHECK(b.jitter_rms_ms == doctest::Approx(0.0).epsilon(1e-9));
  CHECK_THROWS(ddpsim::validate::fit_straggler({}));
  CHECK_THROWS(ddpsim::validate::fit_straggler({{1, 0.5}}));
}
