#include "cli/commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "scenarios/input_error.hpp"
#include "scenarios/report.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/scenario.hpp"
#include "sim/chrome_trace.hpp"

namespace {

using ddpsim::scenarios::InputError;

std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError({path, 0, 0}, "", "", "cannot open this output file for writing");
  return out;
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out = open_output(path);
  out << content;
  if (!out.flush()) throw InputError({path, 0, 0}, "", "", "write failed");
}

struct RunOptions {
  std::string scenario;
  std::string json, trace, csv;
};

int run(const RunOptions& opt) {
  const auto scenario = ddpsim::scenarios::load_scenario(opt.scenario);
  std::optional<std::ofstream> trace_file;
  std::unique_ptr<ddpsim::sim::ChromeTraceWriter> trace;
  if (!opt.trace.empty()) {
    trace_file = open_output(opt.trace);
    trace = std::make_unique<ddpsim::sim::ChromeTraceWriter>(*trace_file, ddpsim::models::tag_name);
  }
  const auto result = ddpsim::scenarios::run_scenario(scenario, trace.get());
  if (trace) {
    trace->finish();
    if (!trace_file->flush()) throw InputError({opt.trace, 0, 0}, "", "", "write failed");
  }
  ddpsim::scenarios::write_table(std::cout, scenario, result);
  if (!opt.json.empty()) write_file(opt.json, ddpsim::scenarios::to_json(scenario, result));
  if (!opt.csv.empty()) {
    std::ofstream csv = open_output(opt.csv);
    ddpsim::scenarios::write_csv(csv, result);
  }
  return 0;
}

int check(const std::string& path) {
  const auto scenario = ddpsim::scenarios::load_scenario(path);
  fmt::print("{}: ok ({} world size(s), {} iterations)\n", path, scenario.world_sizes.size(),
             scenario.job.iterations);
  return 0;
}

}  // namespace

namespace ddpsim::cli {

int main(int argc, char** argv) {
  CLI::App app{"ddpsim: a deterministic simulator of PyTorch DistributedDataParallel training"};
  app.set_version_flag("--version", "ddpsim " DDPSIM_VERSION);
  app.require_subcommand(1);

  RunOptions run_opt;
  CLI::App* run_cmd = app.add_subcommand("run", "Simulate a scenario and print its scaling table");
  run_cmd->add_option("scenario", run_opt.scenario, "Scenario YAML file")->required();
  run_cmd->add_option("--json", run_opt.json, "Write the machine-readable result to this file");
  run_cmd->add_option("--trace", run_opt.trace, "Write a Chrome/Perfetto trace (ui.perfetto.dev) to this file");
  run_cmd->add_option("--csv", run_opt.csv, "Write the scaling table as CSV to this file");

  std::string check_path;
  CLI::App* check_cmd = app.add_subcommand("check", "Validate a scenario without simulating it");
  check_cmd->add_option("scenario", check_path, "Scenario YAML file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  try {
    if (*run_cmd) return run(run_opt);
    if (*check_cmd) return check(check_path);
  } catch (const InputError& e) {
    fmt::print(stderr, "ddpsim: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim: internal error: {}\n", e.what());
    return 1;
  }
  return 1;
}

}  // namespace ddpsim::cli
