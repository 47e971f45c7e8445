// ddpsim memory (cli/subcommands.hpp): memory per rank at each of a
// scenario's world sizes, part by part, the peak and where it falls.

#include <fmt/format.h>

#include <memory>
#include <optional>

#include "cli/cli_io.hpp"
#include "cli/exit_codes.hpp"
#include "cli/subcommands.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "ddpsim/ddpsim.hpp"

namespace ddpsim::cli {

int memory(const MemoryOptions& o) {
  check_outputs({{"--json", o.json}});
  const ddpsim::MemoryReport r =
      ddpsim::memory(ddpsim::load(o.scenario), o.world_size > 0 ? std::optional<int>(o.world_size) : std::nullopt);
  fmt::print("{}", r.text);
  if (!o.json.empty()) write_file(o.json, r.json);
  return r.all_fit() ? kExitOk : kExitDoesNotFit;
}

Verb add_memory(CLI::App& app) {
  auto o = std::make_shared<MemoryOptions>();
  CLI::App* cmd = app.add_subcommand(
      "memory", "Print memory per rank at each world size: model states, unsharded units, activations, the peak");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--world-size", o->world_size, "One world size instead of the scenario's")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--json", o->json, "Write the rows as JSON to this file");
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return memory(*o);
          }};
}

}  // namespace ddpsim::cli
