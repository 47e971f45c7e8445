#include "models/straggler.hpp"

#include <cmath>

#include "sim/det_math.hpp"

#include "sim/random.hpp"

namespace ddpsim::models {
namespace {

// Keeps straggler draws apart from any other consumer of the scenario seed.
constexpr std::uint64_t kStragglerStream = 0x5354524147474c52ULL;  // "STRAGGLR"

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
// clang 14 (the fuzz build) does not deduce an aggregate's arguments by itself.
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

sim::Time straggler_delay(const StragglerModel& model, int rank, int iteration, int world_size,
                          std::uint64_t seed) {
  return std::visit(
      Overloaded{
          [](const NoStraggler&) { return sim::Time::zero(); },
          [&](const Log2Straggler& m) {
            const int slow = m.rank < 0 ? world_size - 1 : m.rank;
            if (rank != slow || world_size == 1) return sim::Time::zero();
            const double ns = static_cast<double>(m.penalty.count_ns()) * sim::det_log2(world_size);
            return sim::Time::from_ns(ns, "the straggler's delay (straggler.penalty_ms x log2(world_size))");
          },
          [&](const JitterStraggler& m) {
            sim::Rng rng = sim::Rng::for_stream(
                seed, {kStragglerStream, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(iteration)});
            const double ns = m.distribution == JitterDistribution::kExponential
                                  ? sim::draw_exponential(rng, static_cast<double>(m.mean.count_ns()))
                                  : sim::draw_uniform(rng, 0.0, static_cast<double>(m.max.count_ns()));
            return sim::Time::from_ns(ns, "a straggler's drawn delay (straggler.mean_ms or straggler.max_ms)");
          },
      },
      model);
}

double expected_slowest_delay_ms(const StragglerModel& model, int world_size) {
  return std::visit(Overloaded{
                        [](const NoStraggler&) { return 0.0; },
                        [&](const Log2Straggler& m) { return m.penalty.ms() * sim::det_log2(world_size); },
                        [&](const JitterStraggler& m) {
                          if (m.distribution == JitterDistribution::kUniform) {
                            return m.max.ms() * world_size / (world_size + 1.0);
                          }
                          double harmonic = 0;
                          for (int k = 1; k <= world_size; ++k) harmonic += 1.0 / k;
                          return m.mean.ms() * harmonic;
                        },
                    },
                    model);
}

}  // namespace ddpsim::models
