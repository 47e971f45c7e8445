#pragma once
// ddpsim's subcommands (cli/commands.cpp's main only dispatches): each adds
// its options to the command line, bound to options it owns, and says what
// runs it once the line is parsed. One file a subcommand (cli/*_cmd.cpp).

#include <CLI/CLI.hpp>
#include <functional>

#include "sweep/work_estimate.hpp"

namespace ddpsim::cli {

class MpiSession;

struct Verb {
  CLI::App* app = nullptr;
  std::function<int(const MpiSession&)> run;
  /// run and advise split their work over mpirun's processes; any other subcommand runs on rank 0 alone.
  bool splits = false;
};

/// The work budget's options (run, report, advise: one run each).
void add_budget(CLI::App* cmd, scenarios::WorkBudget& budget);

Verb add_run(CLI::App& app);           ///< run_cmd.cpp
Verb add_report(CLI::App& app);        ///< run_cmd.cpp
Verb add_check(CLI::App& app);         ///< check_cmd.cpp
Verb add_buckets(CLI::App& app);       ///< buckets_cmd.cpp
Verb add_sampler(CLI::App& app);       ///< sampler_cmd.cpp
Verb add_calibrate(CLI::App& app);     ///< calibrate_cmd.cpp
Verb add_collectives(CLI::App& app);   ///< collectives_cmd.cpp
Verb add_memory(CLI::App& app);        ///< memory_cmd.cpp
Verb add_explain(CLI::App& app);       ///< flight_cmd.cpp
Verb add_advise(CLI::App& app);        ///< advise_cmd.cpp
Verb add_validate(CLI::App& app);      ///< validate_cmd.cpp
Verb add_import_trace(CLI::App& app);  ///< import_trace_cmd.cpp

}  // namespace ddpsim::cli
