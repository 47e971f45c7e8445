#pragma once
// What a row's training program moves and how it is laid out, for the
// reports: gradient communication per step (DDP's buckets or FSDP's units)
// and FSDP's units.

#include <cstdint>
#include <ostream>

#include <nlohmann/json.hpp>

#include "loader/scenario.hpp"

namespace ddpsim::report {

/// Bytes one rank sends per optimizer step in the gradient and parameter
/// collectives, as a ring sends them: an all-reduce of S bytes over W ranks
/// 2(W-1)/W S, an all-gather or reduce-scatter (W-1)/W S. DDP: its buckets
/// (as rebuilt); FSDP: every unit's all-gathers and reduction.
std::int64_t sent_bytes_per_step(const scenarios::Scenario& s, const models::DdpJob& job, int world_size);

/// A run's "comm" block: sent bytes per step and collectives per step.
nlohmann::ordered_json comm_json(const scenarios::Scenario& s, const models::DdpJob& job, int world_size);

/// A DDP job's comm hook over one step it compresses (the rebuilt buckets):
/// bytes handed to it and all-reduced, its compute; and how many of the
/// measured steps it compresses (PowerSGD: from start_powerSGD_iter on).
struct HookSummary {
  std::int64_t input_bytes = 0;
  std::int64_t wire_bytes = 0;
  int collectives = 0;
  double compute_ms = 0;
  int compressed_steps = 0;
  int measured_steps = 0;
};
HookSummary comm_hook_summary(const models::DdpJob& job);
/// PowerSGD on gloo with more than one bucket: the race PyTorch runs into (empty otherwise).
std::string comm_hook_warning(const models::DdpJob& job);
/// The run table's comm hook line: bytes handed over and all-reduced, its compute, which steps it compresses.
void write_comm_hook(std::ostream& out, const models::DdpJob& job);
/// The run's "comm_hook" block: the hook, its options, HookSummary, its rates.
nlohmann::ordered_json comm_hook_json(const models::DdpJob& job);

/// FSDP's layout at `world_size`: the strategy PyTorch runs, the shard
/// group, and per unit its module, elements and bytes moved.
nlohmann::ordered_json fsdp_layout_json(const scenarios::Scenario& s, const models::DdpJob& job, int world_size);

}  // namespace ddpsim::report
