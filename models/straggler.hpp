#pragma once
// Straggler models: how much longer the slowest rank computes. Derivations
// and the order-statistics expectations: docs/cost-models.md#stragglers.

#include <cstdint>
#include <variant>

#include "sim/time.hpp"

namespace ddpsim::models {

struct NoStraggler {};

/// Deterministic: `penalty * log2(W)` added to one rank's backward pass every
/// iteration (rank -1 means the last rank).
struct Log2Straggler {
  sim::Time penalty;
  int rank = -1;
};

enum class JitterDistribution { kExponential, kUniform };

/// Stochastic: every rank, every iteration, an independent delay drawn from
/// the distribution; the penalty emerges as the expected maximum over ranks.
struct JitterStraggler {
  JitterDistribution distribution = JitterDistribution::kExponential;
  sim::Time mean;  ///< exponential: the mean delay
  sim::Time max;   ///< uniform: delays on [0, max)
};

using StragglerModel = std::variant<NoStraggler, Log2Straggler, JitterStraggler>;

/// Extra compute time of `rank` in `iteration` of a `world_size`-rank job.
/// A pure function of its arguments: draw order never matters.
sim::Time straggler_delay(const StragglerModel& model, int rank, int iteration, int world_size,
                          std::uint64_t seed);

/// Expected delay of the slowest rank per iteration (order statistics):
/// log2: penalty log2 W; exponential: mean H_W; uniform: max W / (W + 1).
double expected_slowest_delay_ms(const StragglerModel& model, int world_size);

}  // namespace ddpsim::models
