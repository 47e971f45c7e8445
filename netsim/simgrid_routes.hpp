#pragma once
// The transfer patterns the SimGrid engine's collectives use (inside
// libddpsim_simgrid only): every route they cross must exist before the
// platform is sealed, so the patterns are listed once, here, for both the
// platform's routes and the collectives' steps.

#include <utility>
#include <vector>

#include "models/cluster.hpp"

namespace ddpsim::netsim::detail {

using Pair = std::pair<int, int>;

/// The ring first, first + stride, ... (count ranks), the last back to the first.
std::vector<Pair> ring_pairs(int first, int count, int stride);
/// The ring of a process group: each of its ranks to the next, the last to the first.
std::vector<Pair> ring_of(const std::vector<int>& ranks);
/// kAuto's channels over ranks 0 .. w-1 (models::ring_channels): channel j
/// visits each node's GPUs from j * G / channels on; every channel's pairs.
std::vector<Pair> channel_pairs(const models::ClusterSpec& cluster, int w);
/// Every pair a collective over ranks 0 .. w-1 sends along under `algorithm`
/// and `broadcast`: the ring, kAuto's channels, a reduce's chain, gloo's
/// broadcast tree, the binomial all-reduce's trees, the hierarchical rings.
std::vector<Pair> collective_routes(const models::ClusterSpec& cluster, models::Algorithm algorithm,
                                    models::Broadcast broadcast, int w);

}  // namespace ddpsim::netsim::detail
