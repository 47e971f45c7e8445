#pragma once
// What a row's training program moves and how it is laid out, for the
// reports: gradient communication per step (DDP's buckets or FSDP's units)
// and FSDP's units.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "scenarios/scenario.hpp"

namespace ddpsim::scenarios {

/// Bytes one rank sends per optimizer step in the gradient and parameter
/// collectives, as a ring sends them: an all-reduce of S bytes over W ranks
/// 2(W-1)/W S, an all-gather or reduce-scatter (W-1)/W S. DDP: its buckets
/// (as rebuilt); FSDP: every unit's all-gathers and reduction.
std::int64_t sent_bytes_per_step(const Scenario& s, const models::DdpJob& job, int world_size);

/// A run's "comm" block: sent bytes per step and collectives per step.
nlohmann::ordered_json comm_json(const Scenario& s, const models::DdpJob& job, int world_size);

/// FSDP's layout at `world_size`: the strategy PyTorch runs, the shard
/// group, and per unit its module, elements and bytes moved.
nlohmann::ordered_json fsdp_layout_json(const Scenario& s, const models::DdpJob& job, int world_size);

}  // namespace ddpsim::scenarios
