// ddpsim check (cli/verb.hpp): load a scenario, print the run's estimated work.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/cli_io.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"
#include "sweep/work_estimate.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

int check(const std::string& path) {
  const auto scenario = ddpsim::scenarios::load_scenario(path);
  fmt::print("{}: ok ({} world size(s), {} iterations); ddpsim run: {}\n", path, scenario.sweep.world_sizes.size(),
             scenario.job.iterations, ddpsim::scenarios::describe(ddpsim::scenarios::estimate_work(scenario)));
  return 0;
}

}  // namespace

Verb add_check(CLI::App& app) {
  auto o = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("check", "Validate a scenario without simulating it");
  cmd->add_option("scenario", *o, "Scenario YAML file")->required();
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return check(*o);
          }};
}

}  // namespace ddpsim::cli
