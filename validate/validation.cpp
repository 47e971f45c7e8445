#include "validate/validation.hpp"

#include "validate/median.hpp"

#include "present/efficiency.hpp"
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "models/baseline.hpp"
#include "models/reducer.hpp"
#include "loader/input_error.hpp"
#include "loader/memory_plan.hpp"
#include "sweep/runner.hpp"
#include "sim/build_info.hpp"

namespace ddpsim::validate {
namespace {

using scenarios::InputError;

double pct(double predicted, double measured) { return 100 * (predicted - measured) / measured; }

}  // namespace

InputError input_error(const formats::FormatError& e) { return InputError({e.file(), 0, 0}, e.key(), "", e.what()); }

std::vector<formats::RankLog> read_rank_logs(const std::string& prefix) {
  try {
    return formats::read_run(prefix);
  } catch (const formats::FormatError& e) {
    throw input_error(e);
  }
}

std::vector<std::vector<double>> backward_ends(const std::vector<formats::RankLog>& logs, int warmup) {
  std::map<int, std::vector<double>> by_iteration;
  try {
    for (const formats::RankLog& log : logs) {
      for (std::size_t i = 0; i < log.steps.size(); ++i) {
        const formats::MeasuredStep& step = log.steps[i];
        if (step.iteration >= warmup && !step.skipped) {
          by_iteration[step.iteration].push_back(log.need(&formats::MeasuredStep::backward_end_clock_ms, "backward_end_clock_ms", i));
        }
      }
    }
  } catch (const formats::FormatError& e) {
    throw input_error(e);
  }
  std::vector<std::vector<double>> out;
  for (auto& [it, ends] : by_iteration) {
    if (ends.size() == logs.size()) out.push_back(std::move(ends));
  }
  return out;
}

namespace {

// Each rank's mean compute, exposed communication and data time over its measured steps.
struct StepSums {
  double compute = 0, exposed = 0, data = 0;
  int samples = 0;
};

// Whether any step of any rank breaks the step down (a log with step_ms only: StepLog's).
bool has_breakdown(const std::vector<formats::RankLog>& logs) {
  for (const formats::RankLog& log : logs) {
    for (const formats::MeasuredStep& s : log.steps) {
      if (s.compute_ms || s.exposed_comm_ms || s.data_ms) return true;
    }
  }
  return false;
}

StepSums sum_steps(const std::vector<formats::RankLog>& logs, int warmup, bool breakdown, std::vector<double>& rank0_steps) {
  StepSums sums;
  for (std::size_t r = 0; r < logs.size(); ++r) {
    const formats::RankLog& log = logs[r];
    for (std::size_t i = 0; i < log.steps.size(); ++i) {
      const formats::MeasuredStep& s = log.steps[i];
      if (s.iteration < warmup || s.skipped) continue;
      if (r == 0) rank0_steps.push_back(s.step_ms);
      ++sums.samples;
      if (!breakdown) continue;
      sums.compute += log.need(&formats::MeasuredStep::compute_ms, "compute_ms", i);
      sums.exposed += log.need(&formats::MeasuredStep::exposed_comm_ms, "exposed_comm_ms", i);
      sums.data += log.need(&formats::MeasuredStep::data_ms, "data_ms", i);
    }
  }
  return sums;
}

}  // namespace

Measured read_measured(const std::string& prefix, int warmup) {
  Measured m;
  m.prefix = prefix;
  const std::string first = formats::rank_log_path(prefix, 0);
  const std::vector<formats::RankLog> logs = read_rank_logs(prefix);
  const formats::RankLog& r0 = logs.front();
  m.world_size = static_cast<int>(logs.size());
  m.host = r0.host;
  m.device = r0.device;
  m.transport = r0.transport;
  m.ready_order = r0.gradient_ready_order;
  m.parallelism = r0.parallelism;
  if (!r0.comm_hook.empty()) m.comm_hook = r0.comm_hook;
  for (const formats::RankLog& log : logs) {
    if (log.peak_memory_bytes >= 0) m.peak_memory_bytes = std::max(m.peak_memory_bytes.value_or(0), log.peak_memory_bytes);
  }
  std::vector<double> steps;
  StepSums sums;
  m.breakdown = has_breakdown(logs);
  try {
    sums = sum_steps(logs, warmup, m.breakdown, steps);
  } catch (const formats::FormatError& e) {
    throw input_error(e);
  }
  // Waiting for other ranks: each rank's gap to the last rank's end of backward.
  double wait = 0;
  int waits = 0;
  for (const std::vector<double>& e : m.breakdown ? backward_ends(logs, warmup) : std::vector<std::vector<double>>{}) {
    const double last = *std::max_element(e.begin(), e.end());
    for (double t : e) wait += last - t;
    waits += m.world_size;
  }
  if (steps.size() < 2) {
    throw InputError({first, 0, 0}, "steps", std::to_string(steps.size()), fmt::format("at least 2 steps after the {} warm-up", warmup));
  }
  m.steps = static_cast<int>(steps.size());
  for (double s : steps) m.step_ms += s;
  m.step_ms /= static_cast<double>(steps.size());
  for (double s : steps) m.step_sd_ms += (s - m.step_ms) * (s - m.step_ms);
  m.step_sd_ms = std::sqrt(m.step_sd_ms / static_cast<double>(steps.size() - 1));
  m.compute_ms = sums.compute / sums.samples;
  m.wait_ms = waits > 0 ? wait / waits : 0;
  // The simulator's exposed communication excludes waiting; the rank's own measure includes it.
  m.exposed_comm_ms = std::max(0.0, sums.exposed / sums.samples - m.wait_ms);
  m.data_ms = sums.data / sums.samples;
  return m;
}

ContentionFit fit_compute_slowdown(const scenarios::Scenario& scenario, int world_size, double measured_ms) {
  if (const auto& cluster = scenario.job.cluster; cluster && world_size > cluster->gpus()) {
    throw InputError({scenario.source, 0, 0}, "cluster", fmt::format("'{} x {} GPUs'", cluster->nodes, cluster->gpus_per_node),
                     fmt::format("expected room for every measured world size (a step was measured at W = {})", world_size));
  }
  scenarios::Scenario s = scenario;
  const scenarios::SweepAxes axes{{scenario.sweep.bucket_caps_mb.front()}, {world_size}};
  const auto predict = [&](double slowdown) {
    s.job.compute_slowdown = slowdown;
    const scenarios::SweepResult sweep = scenarios::run_sweep(s, axes);
    const scenarios::SweepRow& row = sweep.rows.front();
    if (!row.run.step_ms) {
      throw InputError({scenario.source, 0, 0}, "world_size", std::to_string(world_size),
                       "a scenario that completes at this world size (it hung or crashed)");
    }
    return *row.run.step_ms;
  };
  ContentionFit fit;
  fit.measured_ms = measured_ms;
  fit.predicted_without_ms = predict(0);
  if (fit.predicted_without_ms >= measured_ms) {
    fit.predicted_ms = fit.predicted_without_ms;
    fit.note = fmt::format("W = {}: predicted {:.4g} ms without contention, at or above the measured {:.4g} ms: 0",
                           world_size, fit.predicted_without_ms, measured_ms);
    return fit;
  }
  double lo = 0, hi = kMaxComputeSlowdown;
  if (const double most = predict(hi); most < measured_ms) {
    fit.predicted_ms = fit.predicted_without_ms;
    fit.out_of_reach = true;
    fit.note = fmt::format("W = {}: measured {:.4g} ms; even s = {:g} predicts only {:.4g} ms (without: {:.4g}): "
                           "what is missing is not compute beside communication, so 0",
                           world_size, measured_ms, hi, most, fit.predicted_without_ms);
    return fit;
  }
  for (int i = 0; i < 60 && hi - lo > 1e-6 * std::max(1.0, lo); ++i) {
    const double mid = (lo + hi) / 2;
    (predict(mid) < measured_ms ? lo : hi) = mid;
  }
  fit.compute_slowdown = hi;
  fit.predicted_ms = predict(hi);
  fit.note = fmt::format("W = {}: measured {:.4g} ms; predicted {:.4g} ms without contention, {:.4g} ms with it",
                         world_size, measured_ms, fit.predicted_without_ms, fit.predicted_ms);
  return fit;
}

std::string comm_hook_report(const scenarios::Scenario& scenario, const std::vector<Measured>& measured) {
  if (scenario.parallelism != scenarios::Parallelism::kDdp) return {};
  const std::string modelled(models::to_string(scenario.job.ddp.comm_hook.kind));
  std::string out;
  for (const Measured& m : measured) {
    if (m.comm_hook == modelled) continue;
    out += fmt::format("comm hook: {} (W = {}) ran {}, the scenario models {}: the prediction is for the "
                       "scenario's (ddp.comm_hook)\n",
                       m.prefix, m.world_size, m.comm_hook, modelled);
  }
  return out;
}

std::string ready_order_report(const scenarios::Scenario& scenario, const std::vector<Measured>& measured) {
  const models::ModelSpec& model = scenario.job.model;
  std::vector<std::string> predicted;
  for (int p : model.ready_order) predicted.push_back(model.parameters[static_cast<std::size_t>(p)].name);
  std::string out;
  for (const Measured& m : measured) {
    if (m.ready_order.empty()) continue;
    out += fmt::format("ready order: {} (W = {}): ", m.prefix, m.world_size);
    const auto [mine, theirs] = std::mismatch(m.ready_order.begin(), m.ready_order.end(), predicted.begin(), predicted.end());
    if (mine == m.ready_order.end() && theirs == predicted.end()) {
      out += fmt::format("the scenario's, {} parameters\n", predicted.size());
    } else if (m.ready_order.size() != predicted.size()) {
      out += fmt::format("DDP saw {} parameters become ready, the scenario orders {}\n", m.ready_order.size(), predicted.size());
    } else {
      out += fmt::format("differs from the scenario's at position {} of {}: measured '{}', scenario '{}' (buckets and "
                         "overlap were predicted for the scenario's order)\n",
                         mine - m.ready_order.begin(), predicted.size(), *mine, *theirs);
    }
  }
  return out;
}

namespace {

// The program name a rank log gives the scenario's program ("ddp", "full_shard", ...).
std::string program_of(const scenarios::Scenario& s) {
  if (s.parallelism == scenarios::Parallelism::kDdp || !s.fsdp) return "ddp";
  std::string name(models::to_string(s.fsdp->sharding));
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name;
}

void check_program(const scenarios::Scenario& s, const Measured& m) {
  const std::string program = program_of(s);
  if (m.parallelism == program) return;
  throw InputError(s.parallelism_at.line > 0 ? s.parallelism_at : scenarios::Location{s.source, 0, 0}, "parallelism", program,
                   fmt::format("expected the program the run measured ({} ran {})", m.prefix, m.parallelism));
}

}  // namespace

std::vector<ValidationRow> compare(const scenarios::Scenario& scenario, const std::vector<Measured>& measured) {
  for (const Measured& m : measured) check_program(scenario, m);
  // The measured world sizes, at the scenario's first bucket cap.
  scenarios::SweepAxes axes{{scenario.sweep.bucket_caps_mb.front()}, {}};
  for (const Measured& m : measured) {
    if (std::find(axes.world_sizes.begin(), axes.world_sizes.end(), m.world_size) == axes.world_sizes.end()) {
      axes.world_sizes.push_back(m.world_size);
    }
  }
  if (const auto& cluster = scenario.job.cluster) {
    for (int w : axes.world_sizes) {
      if (w > cluster->gpus()) {
        throw scenarios::InputError({scenario.source, 0, 0}, "cluster",
                                    fmt::format("'{} x {} GPUs'", cluster->nodes, cluster->gpus_per_node),
                                    fmt::format("expected room for every measured world size (a run has W = {})", w));
      }
    }
  }
  const scenarios::SweepResult sweep = scenarios::run_sweep(scenario, axes);
  const Measured* one = nullptr;
  for (const Measured& m : measured) {
    if (m.world_size == 1) one = &m;
  }
  std::vector<ValidationRow> rows;
  for (const Measured& m : measured) {
    const auto it = std::find_if(sweep.rows.begin(), sweep.rows.end(),
                                 [&](const scenarios::SweepRow& r) { return r.run.world_size == m.world_size; });
    if (it == sweep.rows.end() || !it->run.step_ms) {
      throw InputError({scenario.source, 0, 0}, "world_size", std::to_string(m.world_size),
                       "a scenario that completes at this world size (it hung or crashed)");
    }
    ValidationRow row;
    row.measured = m;
    row.predicted_ms = *it->run.step_ms;
    row.baseline_ms = it->closed_form_ms;
    row.error_pct = pct(row.predicted_ms, m.step_ms);
    row.baseline_error_pct = pct(row.baseline_ms, m.step_ms);
    double compute = 0, exposed = 0, wait = 0, data = 0;
    for (const models::RankStats& r : it->run.ranks) {
      compute += r.compute_ms;
      exposed += r.exposed_comm_ms;
      wait += r.wait_ms;
      data += r.data_ms;
    }
    const auto n = static_cast<double>(std::max<std::size_t>(1, it->run.ranks.size()));
    row.compute = {compute / n, m.compute_ms};
    row.exposed_comm = {exposed / n, m.exposed_comm_ms};
    row.data = {data / n, m.data_ms};
    row.wait = {wait / n, m.wait_ms};
    if (one) {
      row.measured_efficiency = one->step_ms / m.step_ms;  // weak scaling: a fixed batch per rank
      const auto base = std::find_if(sweep.rows.begin(), sweep.rows.end(),
                                     [](const scenarios::SweepRow& r) { return r.run.world_size == 1; });
      if (base != sweep.rows.end() && base->run.step_ms) row.predicted_efficiency = *base->run.step_ms / row.predicted_ms;
    }
    if (m.peak_memory_bytes) {
      const std::int64_t predicted = scenarios::predict_memory(scenario, m.world_size).peak();
      row.memory = ValidationRow::Memory{predicted, *m.peak_memory_bytes,
                                         pct(static_cast<double>(predicted), static_cast<double>(*m.peak_memory_bytes))};
    }
    rows.push_back(row);
  }
  return rows;
}

double median_compute_slowdown(const std::vector<ContentionFit>& fits) {
  std::vector<double> s;
  for (const ContentionFit& f : fits) {
    if (!f.out_of_reach) s.push_back(f.compute_slowdown);
  }
  return median(s);
}

namespace {

// A measured part of the step, or "-" where the logs give the step only (StepLog's).
std::string measured_part(double ms, bool known) { return known ? fmt::format("{:.3f}", ms) : "-"; }

}  // namespace

std::string validation_table(const std::vector<ValidationRow>& rows) {
  std::string out = fmt::format("{:>3} {:>17} {:>10} {:>8} {:>10} {:>8}   {:>15} {:>15} {:>15} {:>9}\n", "W", "measured_ms",
                                "predicted", "error", "baseline", "error", "compute p/m", "exposed p/m", "wait p/m", "eff m/p");
  for (const ValidationRow& r : rows) {
    const std::string eff = r.measured_efficiency && r.predicted_efficiency
                                ? fmt::format("{:.0f}/{:.0f}%", 100 * *r.measured_efficiency, 100 * *r.predicted_efficiency)
                                : "-";
    const bool known = r.measured.breakdown;
    out += fmt::format("{:>3} {:>9.3f} +-{:<6.3f} {:>10.3f} {:>+7.1f}% {:>10.3f} {:>+7.1f}%   {:>7.3f}/{:<7} {:>7.3f}/{:<7} {:>7.3f}/{:<7} {:>9}\n",
                       r.measured.world_size, r.measured.step_ms, r.measured.step_sd_ms, r.predicted_ms, r.error_pct,
                       r.baseline_ms, r.baseline_error_pct, r.compute.predicted_ms, measured_part(r.compute.measured_ms, known),
                       r.exposed_comm.predicted_ms, measured_part(r.exposed_comm.measured_ms, known), r.wait.predicted_ms,
                       measured_part(r.wait.measured_ms, known), eff);
    if (r.measured_efficiency && known) {
      const std::string flag =
          present::low_efficiency_flag(*r.measured_efficiency, r.exposed_comm.measured_ms, r.wait.measured_ms, r.data.measured_ms);
      if (!flag.empty()) out.back() = ' ', out += fmt::format("   measured{}\n", flag);
    }
  }
  for (const ValidationRow& r : rows) {
    if (!r.memory) continue;
    out += fmt::format("W = {}: peak memory per rank measured {} B, predicted {} B, error {:+.2f} %\n", r.measured.world_size,
                       r.memory->measured, r.memory->predicted, r.memory->error_pct);
  }
  return out;
}

std::string validation_markdown(const scenarios::Scenario& scenario, const std::vector<ValidationRow>& rows) {
  std::string out = fmt::format("# Prediction vs measurement: {}\n\n", scenario.name);
  out += fmt::format("Scenario `{}`{}; measured on {} ({}, {}).\n\n", scenario.source,
                     scenario.calibration.empty() ? "" : fmt::format(", calibration `{}`", scenario.calibration),
                     rows.empty() ? "-" : rows.front().measured.host, rows.empty() ? "-" : rows.front().measured.device,
                     rows.empty() ? "-" : rows.front().measured.transport);
  out += fmt::format("Provenance: ddpsim {} (commit {}), scenario SHA-256 `{}`{}.\n\n", sim::ddpsim_version(),
                     sim::git_commit(), scenario.sha256,
                     scenario.calibration.empty() ? "" : fmt::format(", calibration SHA-256 `{}`", scenario.calibration_sha256));
  out += "| W | measured step (ms) | predicted (ms) | error | baseline (ms) | baseline error | compute pred / meas (ms) | "
         "exposed comm pred / meas (ms) | wait pred / meas (ms) | efficiency meas / pred |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ValidationRow& r : rows) {
    const std::string eff = r.measured_efficiency && r.predicted_efficiency
                                ? fmt::format("{:.1f} % / {:.1f} %", 100 * *r.measured_efficiency, 100 * *r.predicted_efficiency)
                                : "-";
    const bool known = r.measured.breakdown;
    out += fmt::format("| {} | {:.3f} ± {:.3f} ({} steps) | {:.3f} | {:+.1f} % | {:.3f} | {:+.1f} % | {:.3f} / {} | {:.3f} / {} | {:.3f} / {} | {} |\n",
                       r.measured.world_size, r.measured.step_ms, r.measured.step_sd_ms, r.measured.steps, r.predicted_ms,
                       r.error_pct, r.baseline_ms, r.baseline_error_pct, r.compute.predicted_ms,
                       measured_part(r.compute.measured_ms, known), r.exposed_comm.predicted_ms,
                       measured_part(r.exposed_comm.measured_ms, known), r.wait.predicted_ms,
                       measured_part(r.wait.measured_ms, known), eff);
    if (r.measured_efficiency && known) {
      const std::string flag =
          present::low_efficiency_flag(*r.measured_efficiency, r.exposed_comm.measured_ms, r.wait.measured_ms, r.data.measured_ms);
      if (!flag.empty()) out += fmt::format("\n**W = {}, measured:**{}\n\n", r.measured.world_size, flag);
    }
  }
  out += "\nThe baseline is the closed form: compute + every bucket's ring all-reduce, none overlapped, + the straggler "
         "term; the simulator earns its complexity where its error is smaller. Measured wait: each rank's gap to the "
         "last rank's end of backward (one host's clock); measured exposed communication excludes it, as the "
         "simulator's does.\n\n"
         "![step time and efficiency](step_time.svg)\n";
  if (std::any_of(rows.begin(), rows.end(), [](const ValidationRow& r) { return r.memory.has_value(); })) {
    out += "\n## Peak memory per rank\n\n| W | measured (bytes) | predicted (bytes) | error |\n|---|---|---|---|\n";
    for (const ValidationRow& r : rows) {
      if (r.memory) {
        out += fmt::format("| {} | {} | {} | {:+.2f} % |\n", r.measured.world_size, r.memory->measured, r.memory->predicted,
                           r.memory->error_pct);
      }
    }
    out += "\nMeasured: the largest rank's count of the tensors it held at once (ddpsim-real's FSDP); predicted: the "
           "memory model (docs/fsdp.md#memory).\n";
  }
  return out;
}

std::string validation_svg(const std::string& title, const std::vector<ValidationRow>& rows) {
  std::vector<present::PlotPoint> points;
  for (const ValidationRow& r : rows) {
    points.push_back({r.measured.world_size, r.measured.step_ms, r.measured.step_sd_ms, r.predicted_ms, r.baseline_ms,
                      r.measured_efficiency, r.predicted_efficiency});
  }
  return present::scaling_svg(title, points);
}

}  // namespace ddpsim::validate
