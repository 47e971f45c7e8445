#include "sim/random.hpp"

#include "sim/det_math.hpp"

namespace ddpsim::sim {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t sm = seed;
  for (auto& word : s_) word = splitmix64(sm);
}

Rng Rng::for_stream(std::uint64_t seed, std::initializer_list<std::uint64_t> keys) {
  std::uint64_t h = seed;
  for (std::uint64_t k : keys) {
    std::uint64_t mix = h ^ (k + 0x632be59bd9b4e019ULL);
    h = splitmix64(mix);
  }
  return Rng(h);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double draw_exponential(Rng& rng, double mean) {
  // 1 - u lies in (0, 1], so the logarithm is finite; det_log1m, not libm's log1p: the same bits on every machine.
  return -mean * det_log1m(rng.uniform01());
}

double draw_uniform(Rng& rng, double lo, double hi) { return lo + (hi - lo) * rng.uniform01(); }

}  // namespace ddpsim::sim
