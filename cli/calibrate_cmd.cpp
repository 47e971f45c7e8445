// ddpsim calibrate (cli/subcommands.hpp): collective sweeps, a one-rank
// run's compute, multi-rank runs' skew and contention, nccl-tests tables.

#include <fmt/format.h>

#include <memory>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <variant>

#include "cli/cli_io.hpp"
#include "cli/exit_codes.hpp"
#include "cli/subcommands.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "formats/measured_run.hpp"
#include "formats/overlap_file.hpp"
#include "loader/calibration_file.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"
#include "validate/calibrate.hpp"
#include "validate/nccl_tests.hpp"
#include "validate/validation.hpp"

namespace ddpsim::cli {
namespace {

using scenarios::InputError;

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
        if (sweep->op != "all_reduce") {
          throw InputError({path, 0, 0}, "op", sweep->op,
                           "expected an all_reduce sweep: the collective fit is of all-reduce times");
        }
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
                                                                 const std::string& first, bool binomial) {
  ddpsim::validate::CollectiveFit fit;
  try {
    fit = ddpsim::validate::fit_collective(points, binomial ? ddpsim::models::Algorithm::kBinomial
                                                            : ddpsim::models::Algorithm::kRing);
  } catch (const std::invalid_argument& e) {
    throw InputError({first, 0, 0}, "sweep", "", e.what());
  }
  ddpsim::scenarios::CalibrationFile::Collective out;
  out.binomial = binomial;
  out.comments = {
      binomial ? "collective: time = launch + L(W) latency + T(W) bytes / bandwidth, the binomial all-reduce's chain "
                 "(docs/cost-models.md#open-mpis-binomial-all-reduce), relative"
               : "collective: time = launch + 2(W-1) latency + 2(W-1)/W bytes / bandwidth (docs/cost-models.md), relative",
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

// contention's two slowdowns as an overlap micro-benchmark measured them,
// apart from any training run (python3 -m ddpsim_torch overlap).
ddpsim::scenarios::CalibrationFile::Contention measured_contention(const std::string& path) {
  ddpsim::formats::OverlapMeasurement m;
  try {
    m = ddpsim::formats::read_overlap(path);
  } catch (const ddpsim::formats::FormatError& e) {
    throw ddpsim::validate::input_error(e);
  }
  ddpsim::scenarios::CalibrationFile::Contention out;
  out.comments.push_back(fmt::format(
      "contention: measured apart from any training run, {} on {}, {} ranks, {} thread(s), {} all-reduce "
      "size(s) pooled ({})",
      m.backend, m.device, m.world_size, m.threads, m.sizes.size(), path));
  out.compute_slowdown = m.compute_slowdown;
  out.comm_slowdown = m.comm_slowdown;
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
  return kExitMissedTarget;
}

// The collective section fitted to nccl-tests tables with the scenario's NCCL model.
ddpsim::scenarios::CalibrationFile::Collective nccl_section(const CalibrateOptions& o) {
  if (o.scenario.empty()) {
    throw InputError({"the command line", 0, 0}, "--nccl-tests", o.nccl_tests.front(),
                     "expected --scenario too: the cluster NCCL's model is fitted on");
  }
  const ddpsim::scenarios::Scenario scenario = ddpsim::scenarios::load_scenario(o.scenario);
  std::vector<ddpsim::validate::NcclTestsTable> tables;
  for (const std::string& path : o.nccl_tests) tables.push_back(ddpsim::validate::read_nccl_tests(path));
  const ddpsim::validate::NcclFit fit = ddpsim::validate::fit_nccl(scenario, tables);
  ddpsim::scenarios::CalibrationFile::Collective out;
  out.comments = {fmt::format("collective: NCCL's tuning model on {}'s cluster, fitted to {} nccl-tests rows (relative least",
                              o.scenario, fit.rows),
                  fmt::format("squares of floor + NCCL's latency + bytes / (scale x NCCL's bandwidth)): median error {:.1f} %",
                              fit.median_error_pct)};
  out.launch_overhead_us = fit.floor_us;
  out.bandwidth_scale = fit.bandwidth_scale;
  return out;
}

}  // namespace

// ddpsim calibrate: the collective model fitted to ddpsim-real's all-reduce
// sweeps, and per-layer compute from a 1-rank training run. With a check,
// the new calibration replaces --out only if it predicts the held-out runs;
// otherwise the last known-good one stays (exit 3).
int calibrate(const CalibrateOptions& o) {
  check_outputs({{"--out", o.out}});
  if (o.measured.empty() && o.measured_steps.empty() && o.nccl_tests.empty() && o.overlap.empty()) {
    throw InputError({"the command line", 0, 0}, "--measured", "",
                     "expected ddpsim-real JSON files (--measured), step times (--measured-step, with --scenario), "
                     "nccl-tests output (--nccl-tests, with --scenario) or an overlap measurement (--overlap)");
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
  for (const std::string& path : o.nccl_tests) calibration.sources.push_back(path);
  if (!in.points.empty() && !o.nccl_tests.empty()) {
    throw InputError({o.nccl_tests.front(), 0, 0}, "--nccl-tests", o.nccl_tests.front(),
                     "expected either all-reduce sweeps (--measured) or nccl-tests tables: each fits the collective section");
  }
  if (!in.points.empty()) calibration.collective = collective_section(in.points, o.measured.front(), o.algorithm == "binomial");
  if (!o.nccl_tests.empty()) calibration.collective = nccl_section(o);
  if (in.compute) calibration.compute = compute_section(*in.compute, o.warmup);
  if (!in.skews.empty()) calibration.straggler = straggler_section(in.skews);
  const bool fit_contention =
      !o.scenario.empty() && (!in.multi_rank.empty() || !o.measured_steps.empty() || o.nccl_tests.empty());
  if (!o.overlap.empty()) {
    if (fit_contention) {
      throw InputError({o.overlap, 0, 0}, "--overlap", o.overlap,
                       "the contention section measured (--overlap) or fitted with --scenario to multi-rank step "
                       "times: one of the two");
    }
    calibration.sources.push_back(o.overlap);
    calibration.contention = measured_contention(o.overlap);
  } else if (fit_contention) {
    calibration.contention = contention_section(o, in, calibration);
  }
  const std::string yaml = ddpsim::scenarios::to_yaml(calibration);
  fmt::print("{}", yaml);
  return write_calibration(o, yaml);
}

Verb add_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Fit the collective model to measured all-reduce sweeps");
  cmd->add_option(
         "--measured", o->measured,
         "ddpsim-real JSON: allreduce-sweep files (one per world size) and/or one 1-rank train run (PREFIX.rank0.json)")
      ->expected(1, -1);
  CLI::Option* calibration_out_opt =
      cmd->add_option("--out", o->out, "Write the calibration (YAML; a scenario's calibration: key reads it)");
  cmd->add_option("--warmup", o->warmup, "Training steps left out of the means (default 2)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--scenario", o->scenario,
                  "Fit contention.compute_slowdown: this scenario, calibrated with the rest of the fit, "
                  "predicting each multi-rank run among --measured and each --measured-step");
  cmd->add_option("--measured-step", o->measured_steps,
                  "W=MS: a step time measured at W ranks elsewhere (a published table, a job's logs), "
                  "for the contention fit; repeatable")
      ->expected(1, -1)
      ->needs("--scenario");
  cmd->add_option("--nccl-tests", o->nccl_tests,
                  "nccl-tests all_reduce_perf output: fit the scenario's NCCL model (collective.model nccl) "
                  "to it, its floor (collective.launch_overhead_us) and collective.bandwidth_scale")
      ->expected(1, -1)
      ->needs("--scenario");
  cmd->add_option("--overlap", o->overlap,
                  "python3 -m ddpsim_torch overlap's JSON: the contention section (compute_slowdown and "
                  "comm_slowdown) as measured there, in place of a fit to step times");
  CLI::Option* check_scenario =
      cmd->add_option("--check-scenario", o->check_scenario,
                      "Accept the calibration only if this scenario, calibrated with it, predicts the "
                      "--check-measured runs; else keep the last known-good --out");
  CLI::Option* check_measured =
      cmd->add_option("--check-measured", o->check_measured, "ddpsim-real train --json prefixes the fit does not use")
          ->expected(1, -1);
  check_scenario->needs(check_measured);
  check_measured->needs(check_scenario)->needs(calibration_out_opt);
  cmd->add_option("--max-error-pct", o->max_error_pct, "The check's threshold (default: validation.max_error_pct)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--algorithm", o->algorithm,
                  "The all-reduce the sweeps are fitted as: ring (default) or binomial (Open MPI's "
                  "non-blocking in-place all-reduce, ddpsim-real's; for a scenario with collective.algorithm "
                  "binomial)")
      ->check(CLI::IsMember({"ring", "binomial"}));
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return calibrate(*o);
          }};
}

}  // namespace ddpsim::cli
