#include "cli/commands.hpp"
#include "cli/torch_verbs.hpp"

#include "cli/cli_io.hpp"
#include "cli/exit_codes.hpp"
#include "cli/mpi_session.hpp"
#include "cli/subcommands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <variant>


#include "formats/measured_run.hpp"
#include "models/sampler.hpp"
#include "netsim/simgrid_engine.hpp"
#include "scenarios/input_error.hpp"
#include "report/html_report.hpp"
#include "report/sweep_report.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/work_estimate.hpp"
#include "sim/chrome_trace.hpp"
#include "sim/time.hpp"
#include "validate/calibrate.hpp"
#include "validate/trace_import.hpp"
#include "validate/validation.hpp"

namespace {

using ddpsim::cli::open_output;
using ddpsim::cli::write_file;
using ddpsim::scenarios::InputError;


struct RunOptions {
  std::string scenario;
  std::string json, trace, csv, plot;
  std::string html;       ///< the HTML page (report/html_report.hpp)
  bool table = true;      ///< print the scaling table (ddpsim report does not)
  std::string engine;  ///< overrides the scenario's `engine` when given
  bool per_rank = false;  ///< no symmetric fast path
  std::string schedule;   ///< the engine's schedule for every-rank runs; empty: levelized or chosen per job
  int threads = 0;        ///< 0: one per core
  int trace_ranks = 256;  ///< ranks per run in the trace; 0: all
  std::string flight_recorder;  ///< a folder for the failed rows' flight-recorder dumps
  std::vector<int> world_sizes;  ///< --world-size: instead of the scenario's
  ddpsim::scenarios::WorkBudget budget;  ///< --max-rank-ops, --max-memory-gb
};

// Before anything is simulated: the scenario with --engine and --world-size
// applied, every output writable and its own file, the estimate within budget.
ddpsim::scenarios::Scenario prepare_run(const RunOptions& opt) {
  auto scenario = ddpsim::scenarios::load_scenario(opt.scenario);
  if (!opt.engine.empty()) scenario.engine = opt.engine;
  if (!opt.world_sizes.empty()) {
    for (const int w : opt.world_sizes) ddpsim::scenarios::check_fits_cluster(scenario, w, "--world-size");
    scenario.sweep.world_sizes = opt.world_sizes;
  }
  ddpsim::cli::check_outputs({{"--json", opt.json}, {"--trace", opt.trace}, {"--csv", opt.csv}, {"--plot", opt.plot},
                              {"--html", opt.html}});
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
  const int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const ddpsim::scenarios::Partition partition{mpi.rank(), mpi.size(),
                                               [&mpi](const std::string& mine) { return mpi.gather(mine); }};
  if (trace && mpi.rank() == 0 && mpi.size() > 1) {
    fmt::print(stderr, "ddpsim: with --trace, rank 0 simulates every run (the trace is written in row order)\n");
  }
  const auto result = ddpsim::scenarios::run_scenario(scenario, trace.get(), threads, policy, partition,
                                                      opt.flight_recorder.empty() ? nullptr : ddpsim::cli::flight_recorder());
  if (!result.complete) return 0;  // another process reports
  if (trace) trace->finish();
  if (trace_file) {
    if (!trace_file->flush()) throw InputError({opt.trace, 0, 0}, "", "", "write failed");
    if (trace->truncated()) {
      fmt::print(stderr, "ddpsim: the trace has ranks 0 to {} of each run (--trace-ranks 0 for all)\n", opt.trace_ranks - 1);
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

// The work budget's options (run, report, advise: one run each).
void add_budget(CLI::App* cmd, ddpsim::scenarios::WorkBudget& budget) {
  cmd->add_option("--max-rank-ops", budget.max_rank_ops,
                  "Refuse a run estimated past this many rank-operations (default 2e11; ddpsim check prints the estimate)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-memory-gb", budget.max_memory_gb,
                  "Refuse a run whose state and trace are estimated past this many GB (default 8)")
      ->check(CLI::PositiveNumber);
}

// run's and report's --world-size and budget options.
void add_run_limits(CLI::App* cmd, RunOptions& opt) {
  cmd->add_option("--world-size", opt.world_sizes, "World sizes to run, comma-separated, instead of the scenario's")
      ->delimiter(',')->check(CLI::Range(1, ddpsim::scenarios::kMaxWorldSize));
  add_budget(cmd, opt.budget);
}

int buckets(const std::string& path, const std::string& json) {
  const auto scenario = ddpsim::scenarios::load_scenario(path);
  ddpsim::report::write_buckets(std::cout, scenario);
  if (!json.empty()) write_file(json, ddpsim::report::buckets_to_json(scenario));
  return 0;
}

struct SamplerOptions {
  std::int64_t dataset_size = 0;
  int world_size = 0;
  std::int64_t batch_size = 32;
  int epochs = 1;
  std::uint64_t seed = 0;
  bool drop_last = false;
  bool no_set_epoch = false;
  bool no_shuffle = false;
  bool ids = false;
  std::string json;
};

int sampler(const SamplerOptions& o) {
  const ddpsim::models::SamplerConfig config{o.dataset_size, o.world_size, !o.no_shuffle, o.seed, o.drop_last};
  const auto audit = ddpsim::models::audit_sampler(config, o.batch_size, o.epochs, !o.no_set_epoch);
  const bool show_ids = o.ids || o.dataset_size * o.epochs <= 4096;
  ddpsim::report::write_sampler_audit(std::cout, audit, show_ids);
  if (!o.json.empty()) write_file(o.json, ddpsim::report::sampler_to_json(audit));
  return 0;
}

struct ValidateOptions {
  std::string scenario, calibration, report;
  std::vector<std::string> measured;
  std::optional<double> max_error_pct;
  std::optional<double> target_pct;  ///< reported, not gated
};

// ddpsim validate: exit 0, or 3 when a prediction misses by more than the threshold.
int validate_cmd(const ValidateOptions& o) {
  ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(o.scenario);
  if (!o.report.empty()) {
    std::filesystem::create_directories(o.report);
    ddpsim::cli::check_outputs({{"--report", o.report + "/report.md"}, {"--report", o.report + "/step_time.svg"}});
  }
  if (!o.calibration.empty()) ddpsim::scenarios::apply_calibration(scenario, o.calibration);
  std::vector<ddpsim::validate::Measured> measured;
  for (const std::string& prefix : o.measured) measured.push_back(ddpsim::validate::read_measured(prefix, scenario.job.warmup_iterations));
  const auto rows = ddpsim::validate::compare(scenario, measured);
  fmt::print("{}", ddpsim::validate::validation_table(rows));
  fmt::print("{}", ddpsim::validate::ready_order_report(scenario, measured));
  fmt::print("{}", ddpsim::validate::comm_hook_report(scenario, measured));
  if (!o.report.empty()) {
    write_file(o.report + "/report.md", ddpsim::validate::validation_markdown(scenario, rows));
    write_file(o.report + "/step_time.svg", ddpsim::validate::validation_svg("Prediction vs measurement: " + scenario.name, rows));
    fmt::print("report: {}/report.md, {}/step_time.svg\n", o.report, o.report);
  }
  if (o.target_pct) {
    double worst = 0, worst_baseline = 0;
    for (const auto& r : rows) {
      worst = std::max(worst, std::fabs(r.error_pct));
      worst_baseline = std::max(worst_baseline, std::fabs(r.baseline_error_pct));
    }
    fmt::print("step time: largest error {:.1f} % (closed form {:.1f} %), target {:.1f} %: {} (a measurement: "
               "reported, not gated)\n", worst, worst_baseline, *o.target_pct, worst <= *o.target_pct ? "met" : "not met");
  }
  // --target-pct reports instead of gating: only an explicit --max-error-pct gates beside it.
  const std::optional<double> limit = o.max_error_pct ? o.max_error_pct
                                      : o.target_pct  ? std::nullopt
                                                      : scenario.max_error_pct;
  if (limit) {
    double worst = 0;
    for (const auto& r : rows) {
      worst = std::max(worst, std::fabs(r.error_pct));
      if (r.memory) worst = std::max(worst, std::fabs(r.memory->error_pct));
    }
    fmt::print("largest error {:.1f} % (step time{}), threshold {:.1f} %: {}\n", worst,
               std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.memory.has_value(); }) ? " and peak memory" : "",
               *limit, worst <= *limit ? "ok" : "FAILED");
    if (worst > *limit) return ddpsim::cli::kExitMissedTarget;
  }
  return 0;
}

// ddpsim import-trace: the scenario with the times of a torch.profiler trace.
int import_trace(const std::string& trace_path, const std::string& scenario_path, const std::string& out) {
  const ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(scenario_path);
  const ddpsim::validate::Trace trace = ddpsim::validate::read_trace(trace_path);
  const ddpsim::validate::TraceSummary summary = ddpsim::validate::summarize(trace);
  std::ifstream in(scenario_path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(out, ddpsim::validate::import_into_scenario(scenario, text, trace, summary));
  fmt::print("import-trace: {} ({} format), {} step(s) by {}: forward {:.3f} ms, backward {:.3f} ms, optimizer {:.3f} ms, "
             "{} gradients{}; wrote {}\n",
             trace_path, trace.format, summary.steps, summary.delimiter, summary.forward_ms, summary.backward_ms,
             summary.optimizer_ms, summary.ready_ms.size(),
             summary.allreduce_ms.empty() ? "" : fmt::format(", {} {} a step", summary.allreduce_ms.size(), summary.allreduce_name),
             out);
  // What was written must load: a scenario the trace made unreadable is this command's bug.
  (void)ddpsim::scenarios::load_scenario(out);
  return 0;
}

int check(const std::string& path) {
  const auto scenario = ddpsim::scenarios::load_scenario(path);
  fmt::print("{}: ok ({} world size(s), {} iterations); ddpsim run: {}\n", path, scenario.sweep.world_sizes.size(),
             scenario.job.iterations, ddpsim::scenarios::describe(ddpsim::scenarios::estimate_work(scenario)));
  return 0;
}

}  // namespace

namespace ddpsim::cli {

int main(int argc, char** argv) {
  if (argc > 1 && is_torch_verb(argv[1])) return run_torch_verb(argc, argv);  // python/ddpsim_torch's verbs
  CLI::App app{"ddpsim: a deterministic simulator of PyTorch DistributedDataParallel training"};
  app.set_version_flag("--version", "ddpsim " DDPSIM_VERSION);
  app.footer("Also: ddpsim profile|sweep|measure|overlap|network ... runs python/ddpsim_torch's verbs (their own --help) with "
             "an interpreter that has torch (python/README.md)");
  app.require_subcommand(1);

  RunOptions run_opt;
  CLI::App* run_cmd = app.add_subcommand("run", "Simulate a scenario and print its scaling table");
  run_cmd->add_option("scenario", run_opt.scenario, "Scenario YAML file")->required();
  run_cmd->add_option("--json", run_opt.json, "Write the machine-readable result to this file");
  run_cmd->add_option("--flight-recorder", run_opt.flight_recorder,
                      "For a row that hangs or crashes: each rank's NCCL flight-recorder dump (PyTorch's JSON form) "
                      "in DIR/W<w>, as the watchdog would leave it");
  run_cmd->add_option("--trace", run_opt.trace, "Write a Chrome/Perfetto trace (ui.perfetto.dev) to this file");
  run_cmd->add_option("--csv", run_opt.csv, "Write the scaling table as CSV to this file");
  run_cmd->add_option("--plot", run_opt.plot, "Write step time and scaling efficiency against W as an SVG plot");
  run_cmd->add_option("--html", run_opt.html, "Write the report as one self-contained HTML page with charts");
  run_cmd->add_option("--engine", run_opt.engine, "analytic (formulas) or simgrid (every transfer on a SimGrid platform); "
                                                  "overrides the scenario's engine key")
      ->check(CLI::IsMember({"analytic", "simgrid"}));
  run_cmd->add_option("--threads", run_opt.threads, "Threads for the runs of a sweep (default: one per core); "
                                                    "the output is the same at any count")
      ->check(CLI::Range(1, 1024));
  run_cmd->add_option("--trace-ranks", run_opt.trace_ranks,
                      "Ranks of each run written to the trace (default 256: a trace holds every operation; 0: all)")
      ->check(CLI::Range(0, 1 << 20));
  run_cmd->add_flag("--per-rank", run_opt.per_rank,
                    "Simulate every rank even when all run the same program (the fast path simulates one; "
                    "same output, docs/cost-models.md#symmetric-jobs)");
  add_run_limits(run_cmd, run_opt);
  run_cmd->add_option("--schedule", run_opt.schedule,
                      "Simulate every-rank runs on the event engine in this order: time-order or rank-major "
                      "(default: levelized for a job without a fault but slow links, else chosen per job; same output, "
                      "docs/cost-models.md#levelized-evaluation)")
      ->check(CLI::IsMember({"time-order", "rank-major"}));

  RunOptions report_opt;
  report_opt.table = false;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "Simulate a scenario and write its report as one self-contained HTML page (charts and tables)");
  report_cmd->add_option("scenario", report_opt.scenario, "Scenario YAML file")->required();
  report_cmd->add_option("--html", report_opt.html, "The page to write")->required();
  report_cmd->add_option("--engine", report_opt.engine, "analytic or simgrid; overrides the scenario's engine key")
      ->check(CLI::IsMember({"analytic", "simgrid"}));
  report_cmd->add_option("--threads", report_opt.threads, "Threads for the runs of a sweep (default: one per core)")
      ->check(CLI::Range(1, 1024));
  add_run_limits(report_cmd, report_opt);

  std::string check_path;
  CLI::App* check_cmd = app.add_subcommand("check", "Validate a scenario without simulating it");
  check_cmd->add_option("scenario", check_path, "Scenario YAML file")->required();

  std::string buckets_path, buckets_json;
  CLI::App* buckets_cmd = app.add_subcommand("buckets", "Print the scenario's gradient buckets, initial and rebuilt");
  buckets_cmd->add_option("scenario", buckets_path, "Scenario YAML file")->required();
  buckets_cmd->add_option("--json", buckets_json, "Write the bucket tables as JSON to this file");

  SamplerOptions so;
  CLI::App* sampler_cmd = app.add_subcommand("sampler", "Audit DistributedSampler: which example IDs each rank sees");
  sampler_cmd->add_option("--dataset-size", so.dataset_size, "Examples in the dataset (IDs 0..N-1)")
      ->required()->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 32));
  sampler_cmd->add_option("--world-size", so.world_size, "Ranks")->required()->check(CLI::Range(1, 1 << 20));
  sampler_cmd->add_option("--batch-size", so.batch_size, "DataLoader batch size per rank (default 32)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 32));
  sampler_cmd->add_option("--epochs", so.epochs, "Epochs (default 1)")->check(CLI::Range(1, 1000));
  sampler_cmd->add_option("--seed", so.seed, "Sampler seed (default 0)");
  sampler_cmd->add_flag("--drop-last", so.drop_last, "DistributedSampler(drop_last=True): truncate, do not pad");
  sampler_cmd->add_flag("--no-set-epoch", so.no_set_epoch, "Never call set_epoch(): every epoch reuses epoch 0's order");
  sampler_cmd->add_flag("--no-shuffle", so.no_shuffle, "DistributedSampler(shuffle=False)");
  sampler_cmd->add_flag("--ids", so.ids, "List every rank's example IDs (default: only for small datasets)");
  sampler_cmd->add_option("--json", so.json, "Write the audit as JSON to this file");

  ddpsim::cli::CalibrateOptions co;
  CLI::App* calibrate_cmd = app.add_subcommand("calibrate", "Fit the collective model to measured all-reduce sweeps");
  calibrate_cmd->add_option("--measured", co.measured,
                            "ddpsim-real JSON: allreduce-sweep files (one per world size) and/or one 1-rank train run (PREFIX.rank0.json)")
      ->expected(1, -1);
  CLI::Option* calibration_out_opt = calibrate_cmd->add_option("--out", co.out, "Write the calibration (YAML; a scenario's calibration: key reads it)");
  calibrate_cmd->add_option("--warmup", co.warmup, "Training steps left out of the means (default 2)")
      ->check(CLI::Range(0, 1000000));
  calibrate_cmd->add_option("--scenario", co.scenario,
                            "Fit contention.compute_slowdown: this scenario, calibrated with the rest of the fit, "
                            "predicting each multi-rank run among --measured and each --measured-step");
  calibrate_cmd->add_option("--measured-step", co.measured_steps,
                            "W=MS: a step time measured at W ranks elsewhere (a published table, a job's logs), "
                            "for the contention fit; repeatable")
      ->expected(1, -1)->needs("--scenario");
  calibrate_cmd->add_option("--nccl-tests", co.nccl_tests,
                            "nccl-tests all_reduce_perf output: fit the scenario's NCCL model (collective.model nccl) "
                            "to it, its floor (collective.launch_overhead_us) and collective.bandwidth_scale")
      ->expected(1, -1)->needs("--scenario");
  calibrate_cmd->add_option("--overlap", co.overlap,
                            "python3 -m ddpsim_torch overlap's JSON: the contention section (compute_slowdown and "
                            "comm_slowdown) as measured there, in place of a fit to step times");
  CLI::Option* check_scenario = calibrate_cmd->add_option(
      "--check-scenario", co.check_scenario, "Accept the calibration only if this scenario, calibrated with it, predicts the "
                                             "--check-measured runs; else keep the last known-good --out");
  CLI::Option* check_measured = calibrate_cmd->add_option("--check-measured", co.check_measured,
                                                          "ddpsim-real train --json prefixes the fit does not use")
                                    ->expected(1, -1);
  check_scenario->needs(check_measured);
  check_measured->needs(check_scenario)->needs(calibration_out_opt);
  calibrate_cmd->add_option("--max-error-pct", co.max_error_pct, "The check's threshold (default: validation.max_error_pct)")
      ->check(CLI::PositiveNumber);
  calibrate_cmd->add_option("--algorithm", co.algorithm,
                            "The all-reduce the sweeps are fitted as: ring (default) or binomial (Open MPI's "
                            "non-blocking in-place all-reduce, ddpsim-real's; for a scenario with collective.algorithm "
                            "binomial)")
      ->check(CLI::IsMember({"ring", "binomial"}));

  ddpsim::cli::CollectivesOptions xo;
  CLI::App* collectives_cmd = app.add_subcommand(
      "collectives", "Print the collective times a scenario predicts, in nccl-tests' columns (and beside a measured table)");
  collectives_cmd->add_option("scenario", xo.scenario, "Scenario YAML file")->required();
  collectives_cmd->add_option("--op", xo.op, "all_reduce (default), all_gather, reduce_scatter, broadcast, reduce or all_to_all");
  collectives_cmd->add_option("--sizes", xo.sizes, "MIN:MAX bytes, every power of two between (default 8:16G; K, M, G = 1,024^n)");
  collectives_cmd->add_option("--world-size", xo.world_size, "Ranks (default: the measured table's, else the scenario's largest)")
      ->check(CLI::Range(1, 1 << 20));
  collectives_cmd->add_option("--measured", xo.measured, "nccl-tests output to compare with, size by size (its sizes replace --sizes)");
  collectives_cmd->add_option("--json", xo.json, "Write the table as JSON to this file");
  collectives_cmd->add_option("--groups", xo.groups,
                              "G process groups run the collective at once, each a ring, on the SimGrid engine: "
                              "each size alone and together (ring model; all_reduce, all_gather, reduce_scatter)")
      ->check(CLI::PositiveNumber);
  collectives_cmd->add_option("--layout", xo.layout,
                              "--groups' ranks: strided (group i = i, i+G, ...: replicas across nodes, the default) or "
                              "blocked (group i = the i-th W/G consecutive ranks: shards inside a node)");
  collectives_cmd->add_option("--stagger-us", xo.stagger_us,
                              "With --groups: also run them staggered, group i starting i x this many us after group 0, "
                              "each collective repriced for the groups in flight at every start and end");
  collectives_cmd->add_flag("--tuning", xo.tuning,
                            "Also print NCCL's latency and bandwidth per algorithm and protocol (collective.model: nccl), "
                            "as NCCL_DEBUG_SUBSYS=TUNING logs them");

  ddpsim::cli::MemoryOptions mo;
  CLI::App* memory_cmd = app.add_subcommand(
      "memory", "Print memory per rank at each world size: model states, unsharded units, activations, the peak");
  memory_cmd->add_option("scenario", mo.scenario, "Scenario YAML file")->required();
  memory_cmd->add_option("--world-size", mo.world_size, "One world size instead of the scenario's")
      ->check(CLI::Range(1, 1 << 20));
  memory_cmd->add_option("--json", mo.json, "Write the rows as JSON to this file");

  std::string explain_dir;
  CLI::App* explain_cmd = app.add_subcommand(
      "explain", "Explain a hang from flight-recorder dumps (PyTorch 2.5+'s JSON form, or ddpsim run --flight-recorder)");
  explain_cmd->add_option("dir", explain_dir, "Folder of dumps, one a rank, named PREFIX<rank>")->required();

  ddpsim::cli::AdviseCliOptions ao;
  CLI::App* advise_cmd = app.add_subcommand(
      "advise", "Search the configurations a scenario leaves open and recommend one (docs/advise.md)");
  advise_cmd->add_option("scenario", ao.scenario, "Scenario YAML file")->required();
  advise_cmd->add_option("--objective", ao.objective, "step, throughput (the default), gpu_hours or goodput");
  advise_cmd->add_option("--world-size", ao.world_sizes, "World sizes to try, comma-separated (default: the scenario's)")
      ->delimiter(',')->check(CLI::Range(1, 1 << 20));
  advise_cmd->add_option("--global-batch", ao.global_batch,
                         "MIN:MAX: try gradient accumulations (powers of two) that keep the global batch in this range");
  advise_cmd->add_option("--programs", ao.programs,
                         "Programs to try, comma-separated: DDP, FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, "
                         "_HYBRID_SHARD_ZERO2 (default: every one that applies)")
      ->delimiter(',');
  advise_cmd->add_option("--json", ao.json, "Write every configuration and the recommendation as JSON to this file");
  advise_cmd->add_option("--plot", ao.plot, "Write step time against peak memory per GPU as an SVG to this file");
  advise_cmd->add_option("--html", ao.html, "Write the ranking and every configuration's objective against memory "
                                            "as one self-contained HTML page");
  advise_cmd->add_option("--top", ao.top, "Configurations printed (default 20; --json has all)")->check(CLI::Range(1, 1 << 20));
  add_budget(advise_cmd, ao.budget);
  advise_cmd->add_option("--threads", ao.threads, "Simulations at once (default 1); the advice is the same at any count")
      ->check(CLI::Range(1, 1024));

  ValidateOptions vo;
  CLI::App* validate_app = app.add_subcommand("validate", "Compare a scenario's predictions with ddpsim-real measurements");
  validate_app->add_option("--scenario", vo.scenario, "Scenario YAML file")->required();
  validate_app->add_option("--measured", vo.measured, "ddpsim-real train --json prefixes, one run per world size")
      ->required()->expected(1, -1);
  validate_app->add_option("--calibration", vo.calibration, "Apply this calibration file (ddpsim calibrate --out) first");
  validate_app->add_option("--max-error-pct", vo.max_error_pct, "Exit 3 when a step-time error exceeds this (or validation.max_error_pct)")
      ->check(CLI::PositiveNumber);
  validate_app->add_option("--target-pct", vo.target_pct,
                           "Print whether every step-time error is within this target, without changing the exit "
                           "code (for measurements too noisy to gate; the scenario's validation.max_error_pct is "
                           "then not applied)")
      ->check(CLI::PositiveNumber);
  validate_app->add_option("--report", vo.report, "Write report.md and step_time.svg into this folder");

  std::string trace_path, trace_scenario, trace_out;
  CLI::App* trace_cmd = app.add_subcommand("import-trace", "Rewrite a scenario with the times of a torch.profiler Chrome trace");
  trace_cmd->add_option("trace", trace_path, "The trace (prof.export_chrome_trace), legacy or Kineto JSON")->required();
  trace_cmd->add_option("--scenario", trace_scenario, "The scenario to take the model from (e.g. ddpsim_torch profile's)")->required();
  trace_cmd->add_option("--out", trace_out, "The scenario to write")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "ddpsim: error: the command line: {}\nRun with --help for more information.\n", e.what());
    return kExitBadInput;
  }

  // Under mpirun or srun: run splits its sweep over the processes and advise
  // its search; any other command runs on rank 0 alone, so its output is one process's.
  const ddpsim::cli::MpiSession mpi;
  if (mpi.size() > 1 && !*advise_cmd && !*run_cmd) {
    if (mpi.rank() != 0) return 0;
    fmt::print(stderr, "ddpsim: {} MPI processes: only run and advise split their work; rank 0 runs this command alone\n",
               mpi.size());
  }
  try {
    // tests/exit_codes.sh plants an internal error to check its exit code and message.
    if (std::getenv("DDPSIM_PLANT_INTERNAL_ERROR") != nullptr) throw std::logic_error("planted by DDPSIM_PLANT_INTERNAL_ERROR");
    if (*run_cmd) return run(run_opt, mpi);
    if (*report_cmd) return run(report_opt, mpi);
    if (*check_cmd) return check(check_path);
    if (*buckets_cmd) return buckets(buckets_path, buckets_json);
    if (*sampler_cmd) return sampler(so);
    if (*validate_app) return validate_cmd(vo);
    if (*calibrate_cmd) return ddpsim::cli::calibrate(co);
    if (*trace_cmd) return import_trace(trace_path, trace_scenario, trace_out);
    if (*memory_cmd) return ddpsim::cli::memory(mo);
    if (*advise_cmd) return ddpsim::cli::advise(ao, mpi);
    if (*explain_cmd) return ddpsim::cli::explain(explain_dir);
    if (*collectives_cmd) return xo.groups > 0 ? ddpsim::cli::collectives_together(xo) : ddpsim::cli::collectives(xo);
  } catch (const InputError& e) {
    fmt::print(stderr, "ddpsim: error: {}\n", e.what());
    return kExitBadInput;
  } catch (const ddpsim::sim::TimeRangeError& e) {
    fmt::print(stderr, "ddpsim: error: {}: expected values whose simulated times fit; lower the keys named\n", e.what());
    return kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "ddpsim: error: {}: {}\n", e.path1().string(), e.code().message());
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "ddpsim: error: out of memory: the run needs more memory than this machine gave it "
                       "(ddpsim check prints its estimate); expected fewer ranks, iterations or traced ranks\n");
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim: internal error: {}\nThis is a bug in ddpsim: please report it with the command line and "
                       "its input files (README.md#exit-codes)\n", e.what());
    return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace ddpsim::cli
