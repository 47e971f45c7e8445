#include "validate/calibrate.hpp"

#include <doctest/doctest.h>

#include "models/collective_cost.hpp"
#include "sim/random.hpp"

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

TEST_CASE("sweeps that cannot give a bandwidth are refused") {
  CHECK_THROWS_WITH(ddpsim::validate::fit_collective(model_sweep(kNet, {1}, 0, 1)), doctest::Contains("world size above 1"));
  CHECK_THROWS_WITH(ddpsim::validate::fit_collective({{2, 8, 0}}), doctest::Contains("bad sweep point"));
}
