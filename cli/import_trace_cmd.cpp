// ddpsim import-trace (cli/verb.hpp): a scenario rewritten with a torch.profiler trace's times.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "cli/cli_io.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"
#include "validate/trace_import.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

struct ImportTraceOptions {
  std::string trace, scenario, out;
};

// ddpsim import-trace: the scenario with the times of a torch.profiler trace.
int import_trace(const std::string& trace_path, const std::string& scenario_path, const std::string& out) {
  const ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(scenario_path);
  const ddpsim::validate::Trace trace = ddpsim::validate::read_trace(trace_path);
  const ddpsim::validate::TraceSummary summary = ddpsim::validate::summarize(trace);
  std::ifstream in(scenario_path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(out, ddpsim::validate::import_into_scenario(scenario, text, trace, summary));
  fmt::print(
      "import-trace: {} ({} format), {} step(s) by {}: forward {:.3f} ms, backward {:.3f} ms, optimizer {:.3f} ms, "
      "{} gradients{}; wrote {}\n",
      trace_path, trace.format, summary.steps, summary.delimiter, summary.forward_ms, summary.backward_ms,
      summary.optimizer_ms, summary.ready_ms.size(),
      summary.allreduce_ms.empty() ? ""
                                   : fmt::format(", {} {} a step", summary.allreduce_ms.size(), summary.allreduce_name),
      out);
  // What was written must load: a scenario the trace made unreadable is this command's bug.
  (void)ddpsim::scenarios::load_scenario(out);
  return 0;
}

}  // namespace

Verb add_import_trace(CLI::App& app) {
  auto o = std::make_shared<ImportTraceOptions>();
  CLI::App* cmd =
      app.add_subcommand("import-trace", "Rewrite a scenario with the times of a torch.profiler Chrome trace");
  cmd->add_option("trace", o->trace, "The trace (prof.export_chrome_trace), legacy or Kineto JSON")->required();
  cmd->add_option("--scenario", o->scenario, "The scenario to take the model from (e.g. ddpsim_torch profile's)")
      ->required();
  cmd->add_option("--out", o->out, "The scenario to write")->required();
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return import_trace(o->trace, o->scenario, o->out);
          }};
}

}  // namespace ddpsim::cli
