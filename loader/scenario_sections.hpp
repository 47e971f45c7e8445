#pragma once
// Internal to scenarios/: the readers of the scenario's sections that stand
// apart from the job's loop (simgrid, checkpoint and failures), and the
// limited file read the loaders share; the loader (scenario_loader.cpp)
// calls them in its order of keys.

#include "models/ddp_job.hpp"
#include "netsim/simgrid_options.hpp"
#include "loader/scenario.hpp"
#include "loader/yaml_section.hpp"

namespace ddpsim::scenarios {

/// A file's text with the scenario limits (kMaxScenarioBytes); `what` names it in the error.
std::string read_limited(const std::string& path, const char* what);
/// The simgrid section: SimGrid's settings ddpsim passes on, each checked.
netsim::SimgridOptions read_simgrid(const Section& top);
/// `parallelism`, the fsdp section, `optimizer`, device.memory_GB and
/// ddp.gradient_as_bucket_view: what the program is and what memory it needs.
void read_parallelism(const Section& top, Scenario& out);
/// ddp.comm_hook into job.ddp.comm_hook, once the backend is known (its
/// default rates are a GPU's or a CPU's).
void read_comm_hook(const Section& top, models::DdpJob& job);
/// The checkpoint and failures sections (failures are priced against a checkpoint).
ResilienceSpec read_resilience(const Section& top, const models::DdpJob& job);

}  // namespace ddpsim::scenarios
