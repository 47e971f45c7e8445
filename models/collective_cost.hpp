#pragma once
// Analytic collective costs. Derivations: docs/cost-models.md.

#include <cstdint>

#include "sim/engine.hpp"
#include "sim/time.hpp"

namespace ddpsim::models {

/// Alpha-beta parameters of one ring link, plus the fixed cost of launching
/// a collective (kernel launch, proxy hand-off).
struct NetworkParams {
  sim::Time latency;               ///< alpha: per ring step
  double bandwidth_GBps = 1.0;     ///< beta^-1: bytes per nanosecond (1 GB/s = 1 B/ns)
  sim::Time launch_overhead;       ///< once per collective
};

/// Ring all-reduce: launch + 2(W-1) alpha + 2(W-1)/W * bytes / bandwidth.
sim::Time ring_all_reduce_time(const NetworkParams& net, std::int64_t bytes, int world_size);
/// Pipelined ring broadcast: launch + (W-1) alpha + bytes / bandwidth (W > 1).
sim::Time ring_broadcast_time(const NetworkParams& net, std::int64_t bytes, int world_size);
/// Ring all-gather of `bytes` in total (bytes / W from each rank): launch + (W-1) alpha + (W-1)/W * bytes / bandwidth.
sim::Time ring_all_gather_time(const NetworkParams& net, std::int64_t bytes, int world_size);
/// Ring reduce-scatter of `bytes` in total (bytes / W left on each rank): the all-gather's steps, reversed.
sim::Time ring_reduce_scatter_time(const NetworkParams& net, std::int64_t bytes, int world_size);
/// Ring reduce to one root: the broadcast's pipelined chain, reversed.
sim::Time ring_reduce_time(const NetworkParams& net, std::int64_t bytes, int world_size);
/// All-to-all of `bytes` per rank (bytes / W to each rank) as W-1 pairwise
/// exchange steps: launch + (W-1) alpha + (W-1)/W * bytes / bandwidth.
sim::Time all_to_all_time(const NetworkParams& net, std::int64_t bytes, int world_size);
/// Any collective the engine may issue; a barrier as priced_as says (a 4-byte all-reduce).
sim::Time collective_time(const NetworkParams& net, const sim::Collective& c, int world_size);

}  // namespace ddpsim::models
