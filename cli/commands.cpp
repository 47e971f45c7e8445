#include "cli/commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <variant>


#include "formats/measured_run.hpp"
#include "models/sampler.hpp"
#include "netsim/simgrid_engine.hpp"
#include "scenarios/input_error.hpp"
#include "scenarios/report.hpp"
#include "scenarios/runner.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/scenario.hpp"
#include "sim/chrome_trace.hpp"
#include "validate/calibrate.hpp"
#include "validate/trace_import.hpp"
#include "validate/validation.hpp"

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
  std::string json, trace, csv, plot;
  std::string engine;  ///< overrides the scenario's `engine` when given
  bool per_rank = false;  ///< no symmetric fast path
  std::string schedule;   ///< the engine's schedule for every-rank runs; empty: levelized or chosen per job
  int threads = 0;        ///< 0: one per core
  int trace_ranks = 256;  ///< ranks per run in the trace; 0: all
};

int run(const RunOptions& opt) {
  auto scenario = ddpsim::scenarios::load_scenario(opt.scenario);
  if (!opt.engine.empty()) scenario.engine = opt.engine;
  ddpsim::exec::ExecutionPolicy policy;
  policy.fast_path = !opt.per_rank;
  if (opt.schedule == "time-order") policy.schedule = ddpsim::sim::Schedule::kTimeOrder;
  if (opt.schedule == "rank-major") policy.schedule = ddpsim::sim::Schedule::kRankMajor;
  if (scenario.engine == "simgrid" && !ddpsim::netsim::simgrid_available()) {
    throw InputError({opt.scenario, 0, 0}, "engine", "'simgrid'",
                     "expected an engine this ddpsim can run (" + ddpsim::netsim::simgrid_unavailable_reason() + ")");
  }
  std::optional<std::ofstream> trace_file;
  std::unique_ptr<ddpsim::sim::ChromeTraceWriter> trace;
  if (!opt.trace.empty()) {
    trace_file = open_output(opt.trace);
    trace = std::make_unique<ddpsim::sim::ChromeTraceWriter>(*trace_file, ddpsim::models::op_name, opt.trace_ranks);
  }
  const int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  const auto result = ddpsim::scenarios::run_scenario(scenario, trace.get(), threads, policy);
  if (trace) {
    trace->finish();
    if (!trace_file->flush()) throw InputError({opt.trace, 0, 0}, "", "", "write failed");
    if (trace->truncated()) {
      fmt::print(stderr, "ddpsim: the trace has ranks 0 to {} of each run (--trace-ranks 0 for all)\n", opt.trace_ranks - 1);
    }
  }
  ddpsim::scenarios::write_table(std::cout, scenario, result);
  if (!opt.json.empty()) write_file(opt.json, ddpsim::scenarios::to_json(scenario, result));
  if (!opt.csv.empty()) {
    std::ofstream csv = open_output(opt.csv);
    ddpsim::scenarios::write_csv(csv, scenario, result);
  }
  if (!opt.plot.empty()) write_file(opt.plot, ddpsim::scenarios::sweep_svg(scenario, result));
  return 0;
}

int buckets(const std::string& path, const std::string& json) {
  const auto scenario = ddpsim::scenarios::load_scenario(path);
  ddpsim::scenarios::write_buckets(std::cout, scenario);
  if (!json.empty()) write_file(json, ddpsim::scenarios::buckets_to_json(scenario));
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
  ddpsim::scenarios::write_sampler_audit(std::cout, audit, show_ids);
  if (!o.json.empty()) write_file(o.json, ddpsim::scenarios::sampler_to_json(audit));
  return 0;
}

// Per-layer compute, optimizer and data times from a 1-rank ddpsim-real run:
// means over the steps after `warmup`, skipped steps left out.
struct ComputeFit {
  std::vector<double> forward_ms, backward_ms;  ///< per layer, or one entry (whole_model)
  std::vector<ddpsim::formats::MeasuredLayer> layers;  ///< the run's names of the layers (not whole_model)
  bool whole_model = false;
  double optimizer_ms = 0, data_ms = 0;
  int steps = 0;
};

ComputeFit fit_compute(const ddpsim::formats::RankLog& run, int warmup) {
  using ddpsim::formats::MeasuredStep;
  ComputeFit fit;
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const MeasuredStep& step = run.steps[i];
    if (step.iteration < warmup || step.skipped) continue;
    std::vector<double> fwd = step.layer_forward_ms, bwd = step.layer_backward_ms;
    if (fwd.size() != bwd.size()) throw InputError({run.file, 0, 0}, "layer_backward_ms", "", "as many layers as layer_forward_ms");
    if (fwd.empty()) {  // a GPU run: whole-model times, spread over the tensors by size
      fit.whole_model = true;
      fwd = {run.need(&MeasuredStep::forward_compute_ms, "forward_compute_ms", i)};
      bwd = {run.need(&MeasuredStep::backward_compute_ms, "backward_compute_ms", i)};
    }
    if (fit.forward_ms.empty()) fit.forward_ms.assign(fwd.size(), 0.0), fit.backward_ms.assign(fwd.size(), 0.0);
    for (std::size_t l = 0; l < fwd.size() && l < fit.forward_ms.size(); ++l) {
      fit.forward_ms[l] += fwd[l];
      fit.backward_ms[l] += bwd[l];
    }
    fit.optimizer_ms += run.need(&MeasuredStep::optimizer_ms, "optimizer_ms", i);
    fit.data_ms += run.need(&MeasuredStep::data_ms, "data_ms", i);
    ++fit.steps;
  }
  if (fit.steps == 0) throw InputError({run.file, 0, 0}, "steps", "", fmt::format("steps after the {} warm-up step(s)", warmup));
  if (!fit.whole_model) {
    if (run.layers.size() != fit.forward_ms.size()) {
      throw InputError({run.file, 0, 0}, "layers", std::to_string(run.layers.size()),
                       fmt::format("expected the names of the {} layers the steps time (a log of ddpsim-real before it wrote them: "
                                   "run it again)", fit.forward_ms.size()));
    }
    fit.layers = run.layers;
  }
  for (auto* v : {&fit.forward_ms, &fit.backward_ms}) {
    for (double& x : *v) x /= fit.steps;
  }
  fit.optimizer_ms /= fit.steps;
  fit.data_ms /= fit.steps;
  return fit;
}

// The mean over steps of (latest rank's backward end - the mean rank's), from
// every rank's log of a multi-rank run; `path` is its PREFIX.rank0.json.
double arrival_skew_ms(const std::string& path, int warmup) {
  const std::string suffix = ".rank0.json";
  if (path.size() <= suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) {
    throw InputError({path, 0, 0}, "", "", "a multi-rank run's PREFIX.rank0.json (its other ranks are read beside it)");
  }
  const auto ends = ddpsim::validate::backward_ends(ddpsim::validate::read_rank_logs(path.substr(0, path.size() - suffix.size())),
                                                    warmup);
  if (ends.empty()) throw InputError({path, 0, 0}, "steps", "", "steps every rank logged after the warm-up");
  double sum = 0;
  for (const std::vector<double>& e : ends) {
    double mean = 0;
    for (double t : e) mean += t;
    sum += *std::max_element(e.begin(), e.end()) - mean / static_cast<double>(e.size());
  }
  return sum / static_cast<double>(ends.size());
}

struct CalibrateOptions {
  std::vector<std::string> measured;
  std::string out;
  int warmup = 2;
  std::string scenario;                    ///< fit contention.compute_slowdown to the multi-rank runs with it
  std::vector<std::string> measured_steps;  ///< W=MS: step times measured elsewhere, for the contention fit
  std::string check_scenario;              ///< with check_measured: the acceptance test
  std::vector<std::string> check_measured;
  std::optional<double> max_error_pct;
};

// The acceptance test of a candidate calibration: the scenario, calibrated
// with it, predicts the held-out runs within the threshold.
bool passes_check(const CalibrateOptions& o, const std::string& candidate) {
  ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(o.check_scenario);
  ddpsim::scenarios::apply_calibration(scenario, candidate);
  const std::optional<double> limit = o.max_error_pct ? o.max_error_pct : scenario.max_error_pct;
  if (!limit) throw InputError({o.check_scenario, 0, 0}, "validation.max_error_pct", "", "a threshold (or --max-error-pct) to accept a calibration");
  std::vector<ddpsim::validate::Measured> held_out;
  for (const std::string& prefix : o.check_measured) held_out.push_back(ddpsim::validate::read_measured(prefix, scenario.job.warmup_iterations));
  const auto rows = ddpsim::validate::compare(scenario, held_out);
  fmt::print("check on measurements the fit did not use:\n{}", ddpsim::validate::validation_table(rows));
  double worst = 0;
  for (const auto& r : rows) worst = std::max(worst, std::fabs(r.error_pct));
  fmt::print("largest error {:.1f} %, threshold {:.1f} %\n", worst, *limit);
  return worst <= *limit;
}

// What calibrate reads: all-reduce sweeps, at most one 1-rank training run
// (compute), multi-rank runs (arrival skew), and where each came from.
struct CalibrationInputs {
  std::vector<ddpsim::validate::SweepPoint> points;
  std::vector<ddpsim::validate::SkewPoint> skews;
  std::optional<ComputeFit> compute;
  std::vector<std::string> multi_rank;  ///< the prefixes of multi-rank runs
  std::vector<std::string> sources;
};

CalibrationInputs read_calibration_inputs(const std::vector<std::string>& measured, int warmup) {
  CalibrationInputs in;
  for (const std::string& path : measured) {
    try {
      const auto file = ddpsim::formats::read_measured_file(path);
      if (const auto* sweep = std::get_if<ddpsim::formats::CollectiveSweep>(&file)) {
        for (const auto& row : sweep->rows) in.points.push_back({sweep->world_size, static_cast<double>(row.bytes), row.time_us});
      } else if (const auto& run = std::get<ddpsim::formats::RankLog>(file); run.world_size > 1) {
        in.skews.push_back({run.world_size, arrival_skew_ms(path, warmup)});
        const std::string suffix = ".rank0.json";
        const bool named = path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
        in.multi_rank.push_back(named ? path.substr(0, path.size() - suffix.size()) : path);
      } else {
        if (in.compute) throw InputError({path, 0, 0}, "", "", "one 1-rank run (another was given before)");
        in.compute = fit_compute(run, warmup);
      }
    } catch (const ddpsim::formats::FormatError& e) {
      throw ddpsim::validate::input_error(e);
    }
    in.sources.push_back(path);
  }
  return in;
}

// The collective section fitted to the sweeps (the fit's table printed as it goes).
ddpsim::scenarios::CalibrationFile::Collective collective_section(const std::vector<ddpsim::validate::SweepPoint>& points,
                                                                 const std::string& first) {
  ddpsim::validate::CollectiveFit fit;
  try {
    fit = ddpsim::validate::fit_collective(points);
  } catch (const std::invalid_argument& e) {
    throw InputError({first, 0, 0}, "sweep", "", e.what());
  }
  ddpsim::scenarios::CalibrationFile::Collective out;
  out.comments = {
      "collective: time = launch + 2(W-1) latency + 2(W-1)/W bytes / bandwidth (docs/cost-models.md), relative",
      fmt::format("least squares over {} points: R^2 {:.6f}; relative error median {:.2f} %, max {:.2f} %", points.size(),
                  fit.r_squared, 100 * fit.median_relative_error, 100 * fit.max_relative_error)};
  for (const std::string& note : fit.notes) out.comments.push_back("note: " + note);
  if (fit.network_fitted) {
    out.latency_us = fit.latency_us;
    out.bandwidth_GBps = fit.bandwidth_GBps;
  }
  out.launch_overhead_us = fit.launch_overhead_us;
  fmt::print("{:>4} {:>12} {:>12} {:>12} {:>9}\n", "W", "bytes", "time_us", "fitted_us", "error");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    fmt::print("{:>4} {:>12.0f} {:>12.2f} {:>12.2f} {:>8.1f}%\n", p.world_size, p.bytes, p.time_us,
               p.time_us - fit.residuals_us[i], 100 * fit.residuals_us[i] / p.time_us);
  }
  return out;
}

// The model and data sections from a 1-rank run's means.
ddpsim::scenarios::CalibrationFile::Compute compute_section(const ComputeFit& compute, int warmup) {
  ddpsim::scenarios::CalibrationFile::Compute out;
  out.comments = {fmt::format("model: {} means over {} measured steps (after {} warm-up)",
                              compute.whole_model ? "whole-model" : "per-layer", compute.steps, warmup)};
  if (compute.whole_model) {
    out.forward_ms = compute.forward_ms[0];
    out.backward_ms = compute.backward_ms[0];
  }
  for (std::size_t l = 0; !compute.whole_model && l < compute.forward_ms.size(); ++l) {
    out.layers.push_back({compute.layers[l].name, compute.layers[l].params, compute.forward_ms[l], compute.backward_ms[l]});
  }
  out.optimizer_ms = compute.optimizer_ms;
  out.load_ms = compute.data_ms;
  return out;
}

// The straggler section fitted to multi-rank runs' arrival skew.
ddpsim::scenarios::CalibrationFile::Straggler straggler_section(const std::vector<ddpsim::validate::SkewPoint>& skews) {
  const ddpsim::validate::StragglerFit fit = ddpsim::validate::fit_straggler(skews);
  std::string skew = "straggler: arrival skew (slowest rank's backward end - the mean rank's, one host's clock):";
  for (const auto& p : skews) skew += fmt::format(" W={} {:.4g} ms", p.world_size, p.skew_ms);
  return {{skew, fmt::format("log2 form rms {:.3g} ms; the jitter form fits with rms {:.3g} ms as", fit.log2_rms_ms,
                             fit.jitter_rms_ms),
           fmt::format("  straggler: {{model: jitter, distribution: exponential, mean_ms: {:.6g}}}", fit.jitter_mean_ms)},
          fit.log2_penalty_ms};
}

// A --measured-step value, W=MS: a world size of at least 2 and a step time in ms.
std::pair<int, double> parse_measured_step(const std::string& text) {
  const InputError bad({"the command line", 0, 0}, "--measured-step", text,
                       "expected W=MS: a world size of 2 or more, '=', and a step time in milliseconds above 0 (8=104.5)");
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos) throw bad;
  try {
    std::size_t used_w = 0, used_ms = 0;
    const int w = std::stoi(text.substr(0, eq), &used_w);
    const double ms = std::stod(text.substr(eq + 1), &used_ms);
    if (used_w != eq || used_ms != text.size() - eq - 1 || w < 2 || w > ddpsim::scenarios::kMaxWorldSize ||
        !(ms > 0) || !std::isfinite(ms)) {
      throw bad;
    }
    return {w, ms};
  } catch (const std::logic_error&) {
    throw bad;
  }
}

// contention.compute_slowdown fitted with the scenario, calibrated with
// everything else this call fitted, to each multi-rank run's mean step and
// each --measured-step; several: the median of those s can reach (all
// out of reach: 0).
ddpsim::scenarios::CalibrationFile::Contention contention_section(const CalibrateOptions& o, const CalibrationInputs& in,
                                                                  const ddpsim::scenarios::CalibrationFile& so_far) {
  if (in.multi_rank.empty() && o.measured_steps.empty()) {
    throw InputError({o.scenario, 0, 0}, "--scenario", o.scenario,
                     "expected a multi-rank training run among --measured (or a --measured-step) to fit "
                     "contention.compute_slowdown to");
  }
  ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(o.scenario);
  if (!so_far.sources.empty()) {
    ddpsim::scenarios::apply_calibration_text(scenario, ddpsim::scenarios::to_yaml(so_far), "the calibration being fitted");
  }
  ddpsim::scenarios::CalibrationFile::Contention out;
  out.comments.push_back(fmt::format(
      "contention: compute slowed while a collective is in flight, fitted with {} to the mean step time of:", o.scenario));
  std::vector<ddpsim::validate::ContentionFit> fits;
  const auto add = [&](const std::string& what, int world_size, double step_ms) {
    const ddpsim::validate::ContentionFit& fit = fits.emplace_back(ddpsim::validate::fit_compute_slowdown(scenario, world_size, step_ms));
    out.comments.push_back(fmt::format("  {}: s = {:.4g} ({}{})", what, fit.compute_slowdown, fit.note,
                                       fit.out_of_reach ? "; left out of the median" : ""));
  };
  for (const std::string& prefix : in.multi_rank) {
    const auto run = ddpsim::validate::read_measured(prefix, scenario.job.warmup_iterations);
    add(prefix, run.world_size, run.step_ms);
  }
  for (const std::string& step : o.measured_steps) {
    const auto [w, ms] = parse_measured_step(step);
    add("--measured-step " + step, w, ms);
  }
  out.compute_slowdown = ddpsim::validate::median_compute_slowdown(fits);
  return out;
}

// Writes the calibration to --out; with --check-measured, only if it
// predicts the held-out runs (else the last known-good file stays: exit 3).
int write_calibration(const CalibrateOptions& o, const std::string& yaml) {
  const std::string& out_path = o.out;
  if (o.check_measured.empty()) {
    if (!out_path.empty()) write_file(out_path, yaml);
    return 0;
  }
  const std::string candidate = out_path + ".candidate";
  write_file(candidate, yaml);
  if (passes_check(o, candidate)) {
    std::filesystem::rename(candidate, out_path);
    fmt::print("accepted: {} is the new calibration\n", out_path);
    return 0;
  }
  if (std::filesystem::exists(out_path)) {
    fmt::print("rejected: keeping the last known-good calibration {} (the candidate is in {})\n", out_path, candidate);
  } else {
    fmt::print("rejected: no calibration written ({} does not exist; the candidate is in {})\n", out_path, candidate);
  }
  return 3;
}

// ddpsim calibrate: the collective model fitted to ddpsim-real's all-reduce
// sweeps, and per-layer compute from a 1-rank training run. With a check,
// the new calibration replaces --out only if it predicts the held-out runs;
// otherwise the last known-good one stays (exit 3).
int calibrate(const CalibrateOptions& o) {
  if (o.measured.empty() && o.measured_steps.empty()) {
    throw InputError({"the command line", 0, 0}, "--measured", "",
                     "expected ddpsim-real JSON files (--measured) or step times (--measured-step, with --scenario)");
  }
  for (const std::string& prefix : o.check_measured) {
    for (const std::string& m : o.measured) {
      if (m == prefix + ".rank0.json" || m == prefix) {
        throw InputError({m, 0, 0}, "--check-measured", prefix, "held-out runs the fit does not use");
      }
    }
  }
  const CalibrationInputs in = read_calibration_inputs(o.measured, o.warmup);
  ddpsim::scenarios::CalibrationFile calibration;
  calibration.sources = in.sources;
  if (!in.points.empty()) calibration.collective = collective_section(in.points, o.measured.front());
  if (in.compute) calibration.compute = compute_section(*in.compute, o.warmup);
  if (!in.skews.empty()) calibration.straggler = straggler_section(in.skews);
  if (!o.scenario.empty()) calibration.contention = contention_section(o, in, calibration);
  const std::string yaml = ddpsim::scenarios::to_yaml(calibration);
  fmt::print("{}", yaml);
  return write_calibration(o, yaml);
}

struct ValidateOptions {
  std::string scenario, calibration, report;
  std::vector<std::string> measured;
  std::optional<double> max_error_pct;
};

// ddpsim validate: exit 0, or 3 when a prediction misses by more than the threshold.
int validate_cmd(const ValidateOptions& o) {
  ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(o.scenario);
  if (!o.calibration.empty()) ddpsim::scenarios::apply_calibration(scenario, o.calibration);
  std::vector<ddpsim::validate::Measured> measured;
  for (const std::string& prefix : o.measured) measured.push_back(ddpsim::validate::read_measured(prefix, scenario.job.warmup_iterations));
  const auto rows = ddpsim::validate::compare(scenario, measured);
  fmt::print("{}", ddpsim::validate::validation_table(rows));
  fmt::print("{}", ddpsim::validate::ready_order_report(scenario, measured));
  if (!o.report.empty()) {
    std::filesystem::create_directories(o.report);
    write_file(o.report + "/report.md", ddpsim::validate::validation_markdown(scenario, rows));
    write_file(o.report + "/step_time.svg", ddpsim::validate::validation_svg("Prediction vs measurement: " + scenario.name, rows));
    fmt::print("report: {}/report.md, {}/step_time.svg\n", o.report, o.report);
  }
  const std::optional<double> limit = o.max_error_pct ? o.max_error_pct : scenario.max_error_pct;
  if (limit) {
    double worst = 0;
    for (const auto& r : rows) worst = std::max(worst, std::fabs(r.error_pct));
    fmt::print("largest error {:.1f} %, threshold {:.1f} %: {}\n", worst, *limit, worst <= *limit ? "ok" : "FAILED");
    if (worst > *limit) return 3;
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
  fmt::print("{}: ok ({} world size(s), {} iterations)\n", path, scenario.sweep.world_sizes.size(),
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
  run_cmd->add_option("--plot", run_opt.plot, "Write step time and scaling efficiency against W as an SVG plot");
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
  run_cmd->add_option("--schedule", run_opt.schedule,
                      "Simulate every-rank runs on the event engine in this order: time-order or rank-major "
                      "(default: levelized for a job without a fault but slow links, else chosen per job; same output, "
                      "docs/cost-models.md#levelized-evaluation)")
      ->check(CLI::IsMember({"time-order", "rank-major"}));

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

  CalibrateOptions co;
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

  ValidateOptions vo;
  CLI::App* validate_app = app.add_subcommand("validate", "Compare a scenario's predictions with ddpsim-real measurements");
  validate_app->add_option("--scenario", vo.scenario, "Scenario YAML file")->required();
  validate_app->add_option("--measured", vo.measured, "ddpsim-real train --json prefixes, one run per world size")
      ->required()->expected(1, -1);
  validate_app->add_option("--calibration", vo.calibration, "Apply this calibration file (ddpsim calibrate --out) first");
  validate_app->add_option("--max-error-pct", vo.max_error_pct, "Exit 3 when a step-time error exceeds this (or validation.max_error_pct)")
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
    app.exit(e);
    return 2;
  }

  try {
    if (*run_cmd) return run(run_opt);
    if (*check_cmd) return check(check_path);
    if (*buckets_cmd) return buckets(buckets_path, buckets_json);
    if (*sampler_cmd) return sampler(so);
    if (*validate_app) return validate_cmd(vo);
    if (*calibrate_cmd) return calibrate(co);
    if (*trace_cmd) return import_trace(trace_path, trace_scenario, trace_out);
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
