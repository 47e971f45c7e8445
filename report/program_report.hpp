#pragma once
// What a row's training program moves and how it is laid out, rendered from
// the row's ProgramSummary (sweep/program_summary.hpp, which the runner
// computes): the "comm", "comm_hook" and "fsdp" blocks of the JSON and the
// table's comm hook line.

#include <ostream>

#include <nlohmann/json.hpp>

#include "sweep/program_summary.hpp"

namespace ddpsim::report {

/// A run's "comm" block: sent bytes per step and collectives per step.
nlohmann::ordered_json comm_json(const scenarios::ProgramSummary& p);
/// The run table's comm hook line: bytes handed over and all-reduced, its compute, which steps it compresses.
void write_comm_hook(std::ostream& out, const models::DdpJob& job, const scenarios::ProgramSummary& p);
/// The run's "comm_hook" block: the hook, its options, its summary, its rates.
nlohmann::ordered_json comm_hook_json(const models::DdpJob& job, const scenarios::ProgramSummary& p);
/// FSDP's layout at a row's world size: the strategy PyTorch runs, the shard
/// group, and per unit its module, elements and bytes moved.
nlohmann::ordered_json fsdp_layout_json(const scenarios::ProgramSummary& p);

}  // namespace ddpsim::report
