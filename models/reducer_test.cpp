#include "models/reducer.hpp"

#include <doctest/doctest.h>

#include <numeric>

using namespace ddpsim;
using models::Bucket;
using models::DType;
using models::kMiB;
using models::Tensor;
using sim::Time;

namespace {

std::vector<std::int64_t> sizes(const std::vector<Bucket>& buckets) {
  std::vector<std::int64_t> out;
  for (const Bucket& b : buckets) out.push_back(b.bytes);
  return out;
}

models::ModelSpec spec(std::vector<Tensor> params) {
  models::ModelSpec m;
  m.parameters = std::move(params);
  for (int i = static_cast<int>(m.parameters.size()) - 1; i >= 0; --i) m.ready_order.push_back(i);
  m.forward.assign(m.parameters.size(), Time::from_ms(1));
  m.backward.assign(m.parameters.size(), Time::from_ms(1));
  return m;
}

Tensor f32(const char* name, std::int64_t n) { return Tensor{name, {n}, DType::kFloat32}; }

}  // namespace

TEST_CASE("a bucket closes once it reaches the limit: overshoot by one tensor, never a split") {
  // 400 KB + 400 KB stays under 1 MiB; adding c (2 MB) reaches it: bucket 0 overshoots by c.
  const std::vector<Tensor> p = {f32("a", 100'000), f32("b", 100'000), f32("c", 500'000), f32("d", 10)};
  const auto buckets = models::assign_buckets(p, {0, 1, 2, 3}, {1 * kMiB, 25 * kMiB}, false);
  REQUIRE(buckets.size() == 2);
  CHECK(buckets[0].params == std::vector<int>{0, 1, 2});  // 800 KB < 1 MiB after b; c overshoots
  CHECK(buckets[0].bytes == 2'800'000);
  CHECK(buckets[1].params == std::vector<int>{3});  // a partly filled bucket comes last
}

TEST_CASE("the last limit repeats") {
  std::vector<Tensor> p;
  for (int i = 0; i < 6; ++i) p.push_back(f32("t", 1'000'000));  // 4 MB each
  std::vector<int> order(6);
  std::iota(order.begin(), order.end(), 0);
  const auto b = models::assign_buckets(p, order, {1 * kMiB, 5 * kMiB}, false);
  // 4 MB >= 1 MiB closes bucket 0; then 8 MB >= 5 MiB twice; the last tensor alone.
  CHECK(sizes(b) == std::vector<std::int64_t>{4'000'000, 8'000'000, 8'000'000, 4'000'000});
}

TEST_CASE("dtypes never share a bucket; each has its own limit position") {
  const std::vector<Tensor> p = {f32("a", 300'000), Tensor{"h", {300'000}, DType::kFloat16}, f32("b", 10),
                                 Tensor{"g", {10}, DType::kBFloat16}};
  const auto b = models::assign_buckets(p, {0, 1, 2, 3}, {1 * kMiB, 25 * kMiB}, false);
  // a (1.2 MB) closes the first fp32 bucket; h (600 KB) stays open under fp16's own 1 MiB limit.
  // Open buckets follow in order of their dtype's first appearance: fp32, fp16, bf16.
  REQUIRE(b.size() == 4);
  CHECK(b[0].params == std::vector<int>{0});
  CHECK(b[1].params == std::vector<int>{2});
  CHECK(b[1].dtype == DType::kFloat32);
  CHECK(b[2].params == std::vector<int>{1});
  CHECK(b[2].dtype == DType::kFloat16);
  CHECK(b[3].dtype == DType::kBFloat16);
}

TEST_CASE("construction: one bucket; with find_unused_parameters, [1 MiB, cap] sorted then reversed") {
  auto m = spec({f32("a", 400'000), f32("b", 400'000), f32("c", 400'000)});
  models::DdpConfig ddp;
  const auto one = models::initial_buckets(m, ddp);
  REQUIRE(one.size() == 1);
  CHECK(one[0].params == std::vector<int>{0, 1, 2});
  ddp.find_unused_parameters = true;
  ddp.bucket_cap_bytes = 2 * kMiB;
  const auto small = models::initial_buckets(m, ddp);
  // Registration order: [a] closes at 1.6 MB >= 1 MiB; [b, c] closes at 3.2 MB >= 2 MiB; reversed.
  REQUIRE(small.size() == 2);
  CHECK(small[0].params == std::vector<int>{1, 2});
  CHECK(small[1].params == std::vector<int>{0});
  CHECK_FALSE(models::rebuilt_buckets(m, ddp).has_value());
  ddp.static_graph = true;
  CHECK(models::initial_buckets(m, ddp).size() == 1);
  CHECK(models::rebuild_iteration(ddp) == 2);
}

TEST_CASE("backward is cut where buckets become ready; buckets launch in index order") {
  auto m = spec({f32("a", 100), f32("b", 100), f32("c", 100), f32("d", 100)});
  m.backward = {Time::from_ms(1), Time::from_ms(2), Time::from_ms(3), Time::from_ms(4)};
  // Ready order d, c, b, a. Buckets: [d, c], [b, a].
  const std::vector<Bucket> buckets = {{{3, 2}, 800, DType::kFloat32}, {{1, 0}, 800, DType::kFloat32}};
  models::DdpConfig ddp;
  const auto plan = models::plan_backward(m, ddp, buckets);
  CHECK(plan.segments == std::vector<Time>{Time::from_ms(7), Time::from_ms(3)});
  CHECK(plan.bucket_ready_segment == std::vector<int>{0, 1});
  CHECK(plan.launchable == 2);
  // One bucket holding everything (construction): ready at the very end.
  const auto single = models::plan_backward(m, ddp, {{{0, 1, 2, 3}, 1600, DType::kFloat32}});
  CHECK(single.segments == std::vector<Time>{Time::from_ms(10)});
}

TEST_CASE("unused parameters: skipped compute; ready at the first hook or never launched") {
  auto m = spec({f32("a", 100), f32("b", 100), f32("c", 100), f32("d", 100)});
  m.backward = {Time::from_ms(1), Time::from_ms(2), Time::from_ms(3), Time::from_ms(4)};
  const std::vector<Bucket> buckets = {{{3, 2}, 800, DType::kFloat32}, {{1, 0}, 800, DType::kFloat32}};
  models::DdpConfig ddp;
  ddp.unused_parameters = {2};  // c gets no gradient
  const auto stuck = models::plan_backward(m, ddp, buckets);
  CHECK(stuck.launchable == 0);  // bucket 0 never ready, so bucket 1 never launches either
  ddp.find_unused_parameters = true;
  const auto found = models::plan_backward(m, ddp, buckets);
  CHECK(found.launchable == 2);
  // d (4 ms) is the first hook; c is marked ready there and costs nothing.
  CHECK(found.segments == std::vector<Time>{Time::from_ms(4), Time::from_ms(3)});
  CHECK(found.bucket_ready_segment == std::vector<int>{0, 1});
}
