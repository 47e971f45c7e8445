// ddpsim run and ddpsim report (cli/verb.hpp): simulate a scenario's sweep,
// print its scaling table and write the outputs asked for.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "cli/cli_io.hpp"
#include "cli/mpi_session.hpp"
#include "cli/subcommands.hpp"
#include "cli/verb.hpp"
#include "exec/evaluate.hpp"
#include "models/ddp_job.hpp"
#include "netsim/simgrid_engine.hpp"
#include "report/html_report.hpp"
#include "report/sweep_report.hpp"
#include "loader/input_error.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"
#include "sweep/work_estimate.hpp"
#include "sim/chrome_trace.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

struct RunOptions {
  std::string scenario;
  std::string json, trace, csv, plot;
  std::string html;              ///< the HTML page (report/html_report.hpp)
  bool table = true;             ///< print the scaling table (ddpsim report does not)
  std::string engine;            ///< overrides the scenario's `engine` when given
  bool per_rank = false;         ///< no symmetric fast path
  std::string schedule;          ///< the engine's schedule for every-rank runs; empty: levelized or chosen per job
  int threads = 0;               ///< 0: one per core
  int trace_ranks = 256;         ///< ranks per run in the trace; 0: all
  std::string flight_recorder;   ///< a folder for the failed rows' flight-recorder dumps
  std::vector<int> world_sizes;  ///< --world-size: instead of the scenario's
  ddpsim::scenarios::WorkBudget budget;  ///< --max-rank-ops, --max-memory-gb
};

// On a terminal, a sweep of several runs shows its progress on stderr, the line cleared at the end.
ddpsim::scenarios::ProgressFn terminal_progress() {
  if (isatty(STDERR_FILENO) != 1) return {};
  return [](std::size_t done, std::size_t total) {
    if (total < 2) return true;
    fmt::print(stderr, "\rddpsim: {}/{} runs simulated", done, total);
    if (done == total) fmt::print(stderr, "\r{:40}\r", "");
    std::fflush(stderr);
    return true;
  };
}

// Before anything is simulated: the scenario with --engine and --world-size
// applied, every output writable and its own file, the estimate within budget.
ddpsim::scenarios::Scenario prepare_run(const RunOptions& opt) {
  auto scenario = ddpsim::scenarios::load_scenario(opt.scenario);
  if (!opt.engine.empty()) scenario.engine = opt.engine;
  if (!opt.world_sizes.empty()) {
    for (const int w : opt.world_sizes) ddpsim::scenarios::check_fits_cluster(scenario, w, "--world-size");
    scenario.sweep.world_sizes = opt.world_sizes;
  }
  ddpsim::cli::check_outputs(
      {{"--json", opt.json}, {"--trace", opt.trace}, {"--csv", opt.csv}, {"--plot", opt.plot}, {"--html", opt.html}});
  const auto& worlds = scenario.sweep.world_sizes;
  const int max_world = *std::max_element(worlds.begin(), worlds.end());
  const int traced_ranks = opt.trace.empty() ? 0 : (opt.trace_ranks == 0 ? max_world : opt.trace_ranks);
  const bool json = !opt.json.empty() || !opt.html.empty();
  ddpsim::scenarios::check_budget(scenario, ddpsim::scenarios::estimate_work(scenario, traced_ranks, json), opt.budget);
  return scenario;
}

int run(const RunOptions& opt, const ddpsim::cli::MpiSession& mpi) {
  auto scenario = prepare_run(opt);
  ddpsim::exec::ExecutionPolicy policy;
  policy.fast_path = !opt.per_rank;
  if (opt.schedule == "time-order") policy.schedule = ddpsim::sim::Schedule::kTimeOrder;
  if (opt.schedule == "rank-major") policy.schedule = ddpsim::sim::Schedule::kRankMajor;
  ddpsim::scenarios::check_engine(scenario);
  if (scenario.engine == "simgrid" && !ddpsim::netsim::simgrid_available()) {
    throw InputError({opt.scenario, 0, 0}, "engine", "'simgrid'",
                     "expected an engine this ddpsim can run (" + ddpsim::netsim::simgrid_unavailable_reason() + ")");
  }
  std::optional<std::ofstream> trace_file;
  std::ostringstream page_trace;  // --html without --trace: the page's timeline only
  std::unique_ptr<ddpsim::sim::ChromeTraceWriter> trace;
  if (!opt.trace.empty()) {
    trace_file = open_output(opt.trace);
    trace = std::make_unique<ddpsim::sim::ChromeTraceWriter>(*trace_file, ddpsim::models::op_name, opt.trace_ranks);
  } else if (!opt.html.empty() && ddpsim::cli::traced_for_page(scenario)) {
    trace = std::make_unique<ddpsim::sim::ChromeTraceWriter>(page_trace, ddpsim::models::op_name,
                                                             ddpsim::report::kTimelineRanks);
  }
  const int threads =
      opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const ddpsim::scenarios::Partition partition{mpi.rank(), mpi.size(),
                                               [&mpi](const std::string& mine) { return mpi.gather(mine); }};
  if (trace && mpi.rank() == 0 && mpi.size() > 1) {
    fmt::print(stderr, "ddpsim: with --trace, rank 0 simulates every run (the trace is written in row order)\n");
  }
  ddpsim::scenarios::SweepHooks hooks;
  if (!opt.flight_recorder.empty()) hooks.record = ddpsim::cli::flight_recorder();
  hooks.progress = terminal_progress();
  const auto result = ddpsim::scenarios::run_scenario(scenario, trace.get(), threads, policy, partition, hooks);
  if (!result.complete) return 0;  // another process reports
  if (trace) trace->finish();
  if (trace_file) {
    if (!trace_file->flush()) throw InputError({opt.trace, 0, 0}, "", "", "write failed");
    if (trace->truncated()) {
      fmt::print(stderr, "ddpsim: the trace has ranks 0 to {} of each run (--trace-ranks 0 for all)\n",
                 opt.trace_ranks - 1);
    }
  }
  if (opt.table) ddpsim::report::write_table(std::cout, scenario, result);
  if (!opt.html.empty()) {
    std::optional<std::string> traced;
    if (trace_file) {
      traced = ddpsim::cli::read_trace_for_page(opt.trace);
    } else if (trace) {
      traced = page_trace.str();
    }
    write_file(opt.html, ddpsim::report::sweep_html(scenario, result, traced, ddpsim::report::load_chart_assets()));
    if (!opt.table) fmt::print("ddpsim report: wrote {}\n", opt.html);
  }
  if (!opt.json.empty()) write_file(opt.json, ddpsim::report::to_json(scenario, result));
  if (!opt.csv.empty()) {
    std::ofstream csv = open_output(opt.csv);
    ddpsim::report::write_csv(csv, scenario, result);
  }
  if (!opt.plot.empty()) write_file(opt.plot, ddpsim::report::sweep_svg(scenario, result));
  if (!opt.flight_recorder.empty()) {
    for (const std::string& dir : ddpsim::cli::write_flight_dumps(result, opt.flight_recorder)) {
      fmt::print(stderr, "ddpsim: flight-recorder dumps in {} (ddpsim explain {})\n", dir, dir);
    }
  }
  return 0;
}

// run's and report's --world-size and budget options.
void add_run_limits(CLI::App* cmd, RunOptions& opt) {
  cmd->add_option("--world-size", opt.world_sizes, "World sizes to run, comma-separated, instead of the scenario's")
      ->delimiter(',')
      ->check(CLI::Range(1, ddpsim::scenarios::kMaxWorldSize));
  add_budget(cmd, opt.budget);
}

}  // namespace

Verb add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate a scenario and print its scaling table");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--json", o->json, "Write the machine-readable result to this file");
  cmd->add_option("--flight-recorder", o->flight_recorder,
                  "For a row that hangs or crashes: each rank's NCCL flight-recorder dump (PyTorch's JSON form) "
                  "in DIR/W<w>, as the watchdog would leave it");
  cmd->add_option("--trace", o->trace, "Write a Chrome/Perfetto trace (ui.perfetto.dev) to this file");
  cmd->add_option("--csv", o->csv, "Write the scaling table as CSV to this file");
  cmd->add_option("--plot", o->plot, "Write step time and scaling efficiency against W as an SVG plot");
  cmd->add_option("--html", o->html, "Write the report as one self-contained HTML page with charts");
  cmd->add_option("--engine", o->engine,
                  "analytic (formulas) or simgrid (every transfer on a SimGrid platform); "
                  "overrides the scenario's engine key")
      ->check(CLI::IsMember({"analytic", "simgrid"}));
  cmd->add_option("--threads", o->threads,
                  "Threads for the runs of a sweep (default: one per core); "
                  "the output is the same at any count")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--trace-ranks", o->trace_ranks,
                  "Ranks of each run written to the trace (default 256: a trace holds every operation; 0: all)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--per-rank", o->per_rank,
                "Simulate every rank even when all run the same program (the fast path simulates one; "
                "same output, docs/cost-models.md#symmetric-jobs)");
  add_run_limits(cmd, *o);
  cmd->add_option("--schedule", o->schedule,
                  "Simulate every-rank runs on the event engine in this order: time-order or rank-major "
                  "(default: levelized for a job without a fault but slow links, else chosen per job; same output, "
                  "docs/cost-models.md#levelized-evaluation)")
      ->check(CLI::IsMember({"time-order", "rank-major"}));
  return {cmd, [o](const MpiSession& mpi) { return run(*o, mpi); }, true};
}

Verb add_report(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  o->table = false;
  CLI::App* cmd = app.add_subcommand(
      "report", "Simulate a scenario and write its report as one self-contained HTML page (charts and tables)");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--html", o->html, "The page to write")->required();
  cmd->add_option("--engine", o->engine, "analytic or simgrid; overrides the scenario's engine key")
      ->check(CLI::IsMember({"analytic", "simgrid"}));
  cmd->add_option("--threads", o->threads, "Threads for the runs of a sweep (default: one per core)")
      ->check(CLI::Range(1, 1024));
  add_run_limits(cmd, *o);
  return {cmd, [o](const MpiSession& mpi) { return run(*o, mpi); }};
}

}  // namespace ddpsim::cli
