// The seed's first proof, in one process: a global batch on one rank and the
// same batch split over W ranks whose bucketed gradients are summed (the
// all-reduce) give the same averaged gradients and the same updated
// parameters, within fp32 tolerance.

#include <doctest/doctest.h>

#include <cmath>

#include "models/reducer.hpp"
#include "real_backend/grad_buckets.hpp"
#include "real_backend/half.hpp"
#include "real_backend/mlp.hpp"
#include "sim/random.hpp"

using namespace ddpsim;
using real::Mlp;

namespace {

Mlp::Matrix random_matrix(sim::Rng& rng, int rows, int cols) {
  Mlp::Matrix m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m(r, c) = static_cast<float>(sim::draw_uniform(rng, -1, 1));
  }
  return m;
}

double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = std::max(1e-3, static_cast<double>(std::fabs(a[i])));
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / scale);
  }
  return worst;
}

}  // namespace

TEST_CASE("gradients are ready last layer first, bias before weight, as in PyTorch") {
  Mlp m({8, {16, 16}, 1}, 1);
  std::vector<int> order;
  sim::Rng rng(2);
  m.forward_backward(random_matrix(rng, 4, 8), random_matrix(rng, 4, 1), [&](int t) { order.push_back(t); });
  CHECK(order == m.spec().ready_order);
  CHECK(order == std::vector<int>{5, 4, 3, 2, 1, 0});
  CHECK(m.spec().parameter_count() == static_cast<std::int64_t>(m.parameter_count()));
  Mlp seed_model({8, {}, 1}, 1);  // the seed's Linear(8, 1)
  CHECK(seed_model.parameter_count() == 9);
}

TEST_CASE("the gradient matches finite differences") {
  Mlp m({3, {5}, 2}, 7);
  sim::Rng rng(3);
  const auto x = random_matrix(rng, 6, 3), y = random_matrix(rng, 6, 2);
  m.forward_backward(x, y);
  const std::vector<float> analytic = m.gradients();
  for (std::size_t i = 0; i < m.parameter_count(); i += 3) {
    const float saved = m.parameters()[i];
    const float h = 1e-2f;
    m.parameters()[i] = saved + h;
    const float up = m.forward_backward(x, y);
    m.parameters()[i] = saved - h;
    const float down = m.forward_backward(x, y);
    m.parameters()[i] = saved;
    CAPTURE(i);
    CHECK(analytic[i] == doctest::Approx((up - down) / (2 * h)).epsilon(2e-2));
  }
}

TEST_CASE("one step on W ranks equals one step on one rank with the global batch") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    const real::MlpShape shape{8, {64, 32}, 4};
    const int global = 32;
    sim::Rng rng(11);
    const auto x = random_matrix(rng, global, 8), y = random_matrix(rng, global, 4);

    Mlp single(shape, 5);
    const float single_loss = single.forward_backward(x, y);
    real::SgdMomentum single_opt(0.1f, 0.9f, single.parameter_count());
    const std::vector<float> single_grad = single.gradients();
    single_opt.step(single.parameters(), single.gradients());

    // Each rank: its shard, its buckets (small caps, so the 11 KB model spans three), then the sum.
    models::DdpConfig ddp;
    ddp.bucket_cap_bytes = 1024;
    ddp.first_bucket_bytes = 256;
    const Mlp reference(shape, 5);
    const auto buckets = *models::rebuilt_buckets(reference.spec(), ddp);
    REQUIRE(buckets.size() > 2);
    std::vector<Mlp> ranks(static_cast<std::size_t>(world), Mlp(shape, 5));
    std::vector<real::GradBuckets> reducers;
    for (auto& r : ranks) reducers.emplace_back(r, buckets, world);
    const int local = global / world;
    double loss_sum = 0;
    std::vector<std::vector<int>> launch_orders(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
      auto& model = ranks[static_cast<std::size_t>(r)];
      auto& reducer = reducers[static_cast<std::size_t>(r)];
      loss_sum += model.forward_backward(x.middleRows(r * local, local), y.middleRows(r * local, local), [&](int t) {
        for (int b : reducer.mark_ready(t, model.gradients())) launch_orders[static_cast<std::size_t>(r)].push_back(b);
      });
    }
    for (const auto& order : launch_orders) {
      CHECK(order.size() == buckets.size());
      CHECK(std::is_sorted(order.begin(), order.end()));  // strictly in index order
    }
    for (std::size_t b = 0; b < buckets.size(); ++b) {  // the all-reduce: a sum over ranks
      std::vector<float> sum(reducers[0].buffer(static_cast<int>(b)).size(), 0.0f);
      for (auto& reducer : reducers) {
        const auto& buf = reducer.buffer(static_cast<int>(b));
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += buf[i];
      }
      for (auto& reducer : reducers) reducer.buffer(static_cast<int>(b)) = sum;
    }
    for (int r = 0; r < world; ++r) {
      auto& model = ranks[static_cast<std::size_t>(r)];
      for (std::size_t b = 0; b < buckets.size(); ++b) reducers[static_cast<std::size_t>(r)].unpack(static_cast<int>(b), model.gradients());
    }
    CHECK(loss_sum / world == doctest::Approx(single_loss).epsilon(1e-5));
    for (auto& model : ranks) {
      CHECK(max_relative_difference(single_grad, model.gradients()) < 1e-4);
      real::SgdMomentum opt(0.1f, 0.9f, model.parameter_count());
      opt.step(model.parameters(), model.gradients());
      CHECK(max_relative_difference(single.parameters(), model.parameters()) < 1e-5);
    }
  }
}

TEST_CASE("fp16_compress: the buckets summed in half precision equal the fp32 sum within the rounding derived here") {
  // Each rank's bucket (gradient / W) cast to half: one rounding, relative u =
  // 2^-11, or at most half a subnormal step (2^-25) below 2^-14; then W - 1
  // additions, each rounded to half (relative u of a partial sum, at most the
  // sum of |a|); the cast back is exact. So per element
  //   |half - fp32| <= (W u S + W 2^-25)(1 + u)^W,  S = sum over ranks of |a_r|.
  const double u = std::ldexp(1.0, -11), sub = std::ldexp(1.0, -25);
  for (int world : {2, 4, 8}) {
    CAPTURE(world);
    const real::MlpShape shape{8, {64, 32}, 4};
    sim::Rng rng(17);
    const auto x = random_matrix(rng, 8 * world, 8), y = random_matrix(rng, 8 * world, 4);
    std::vector<std::vector<float>> scaled;  // each rank's gradients / W, as its bucket holds them
    for (int r = 0; r < world; ++r) {
      Mlp m(shape, 5);
      m.forward_backward(x.middleRows(r * 8, 8), y.middleRows(r * 8, 8));
      std::vector<float> g = m.gradients();
      for (float& v : g) v /= static_cast<float>(world);
      scaled.push_back(std::move(g));
    }
    const std::size_t n = scaled.front().size();
    std::vector<real::Half> acc(n), mine(n);
    real::to_half(scaled[0].data(), acc.data(), n);
    for (int r = 1; r < world; ++r) {  // the ring's order; any order obeys the same bound
      real::to_half(scaled[static_cast<std::size_t>(r)].data(), mine.data(), n);
      real::half_sum(mine.data(), acc.data(), n);
    }
    std::vector<float> half_sum(n);
    real::from_half(acc.data(), half_sum.data(), n);
    double worst = 0;  // the largest error as a fraction of its bound
    int differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double exact = 0, s = 0;
      for (const auto& g : scaled) exact += g[i], s += std::fabs(g[i]);
      const double bound = (world * u * s + world * sub) * std::pow(1 + u, world);
      worst = std::max(worst, std::fabs(half_sum[i] - exact) / bound);
      differ += half_sum[i] != static_cast<float>(exact) ? 1 : 0;
    }
    CHECK(worst <= 1.0);
    CHECK(differ > 0);  // compression did round something
  }
}
