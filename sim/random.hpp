#pragma once
// Deterministic randomness. The generator (xoshiro256**, seeded through
// splitmix64) and every distribution are this project's own code, so a seed
// gives the same draws on every platform and standard library.

#include <cstdint>
#include <initializer_list>

namespace ddpsim::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  /// A generator for one independent stream, keyed by (seed, keys...): the
  /// same keys give the same stream whatever order streams are created in.
  static Rng for_stream(std::uint64_t seed, std::initializer_list<std::uint64_t> keys);

  std::uint64_t next_u64();
  /// Uniform on [0, 1), 53 random bits.
  double uniform01();

 private:
  std::uint64_t s_[4];
};

/// Exponential with the given mean (inverse transform).
double draw_exponential(Rng& rng, double mean);
/// Uniform on [lo, hi).
double draw_uniform(Rng& rng, double lo, double hi);

}  // namespace ddpsim::sim
