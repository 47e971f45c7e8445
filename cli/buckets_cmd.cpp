// ddpsim buckets (cli/verb.hpp): a scenario's gradient buckets, initial and rebuilt.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/cli_io.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "ddpsim/ddpsim.hpp"
#include "report/sweep_report.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

struct BucketsOptions {
  std::string scenario, json;
};

int buckets(const std::string& path, const std::string& json) {
  const ddpsim::BucketReport r = ddpsim::buckets(ddpsim::load(path));
  std::cout << r.text;
  if (!json.empty()) write_file(json, r.json);
  return 0;
}

}  // namespace

Verb add_buckets(CLI::App& app) {
  auto o = std::make_shared<BucketsOptions>();
  CLI::App* cmd = app.add_subcommand("buckets", "Print the scenario's gradient buckets, initial and rebuilt");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--json", o->json, "Write the bucket tables as JSON to this file");
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return buckets(o->scenario, o->json);
          }};
}

}  // namespace ddpsim::cli
