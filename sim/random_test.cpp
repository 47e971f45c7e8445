#include "sim/random.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace ddpsim::sim;

TEST_CASE("the generator is a fixed function of its seed") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
  }
  // Pinned first output: a change of algorithm changes every stochastic prediction.
  CHECK(Rng(0).next_u64() == 0x99ec5f36cb75f2b4ULL);
}

TEST_CASE("streams keyed by (seed, keys) do not depend on creation order") {
  Rng x = Rng::for_stream(7, {1, 2});
  Rng y = Rng::for_stream(7, {2, 1});
  Rng x2 = Rng::for_stream(7, {1, 2});
  const auto first = x.next_u64();
  CHECK(first == x2.next_u64());
  CHECK(first != y.next_u64());
}

TEST_CASE("uniform01 lies in [0, 1) and exponential has the requested mean") {
  Rng rng(3);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform01();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += draw_exponential(rng, 2.0);
  }
  // Standard error of the mean is 2 / sqrt(n) ~ 0.0045: 5 sigma.
  CHECK(std::fabs(sum / n - 2.0) < 0.023);
}
