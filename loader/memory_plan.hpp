#pragma once
// Memory per rank for a scenario's rows: the model of models/memory.hpp
// applied to its program (DDP or FSDP), optimizer and cluster.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/memory.hpp"
#include "sim/chrome_trace.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::scenarios {

/// What one rank of `s` needs on `world_size` ranks (every rank alike).
models::MemoryEstimate predict_memory(const Scenario& s, int world_size);

/// The trace's memory counter for a run of `s` on `world_size` ranks:
/// FSDP's timeline at each unit's forward and backward compute, the model
/// states at the optimizer; DDP's states at forward, its peak at backward.
sim::ChromeTraceWriter::MemoryFn memory_track(const Scenario& s, int world_size);

/// "FULL_SHARD, 13 units (module_classes transformer.h.*), adamw" or "DDP, sgd".
std::string describe_program(const Scenario& s);

/// The estimate as a JSON object: bytes per part, the peak and where it falls,
/// and whether it fits device.memory_GB (null without one).
nlohmann::ordered_json memory_json(const models::MemoryEstimate& m, const Scenario& s);

}  // namespace ddpsim::scenarios
