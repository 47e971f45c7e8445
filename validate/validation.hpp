#pragma once
// Prediction against measurement: a scenario simulated at the world sizes a
// real run measured, each step time beside the measured one and beside the
// closed-form baseline, with per-component errors; reports as a text table,
// Markdown and an SVG plot.

#include <optional>
#include <string>
#include <vector>

#include "formats/measured_run.hpp"
#include "models/ddp_job.hpp"
#include "present/plot.hpp"
#include "loader/input_error.hpp"
#include "sweep/runner.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::validate {

/// FormatError (formats/measured_run.hpp) as the InputError that main turns into exit 2.
scenarios::InputError input_error(const formats::FormatError& e);

/// Every rank's log of a run (formats::read_run); InputError naming the file.
std::vector<formats::RankLog> read_rank_logs(const std::string& prefix);

/// Per iteration after `warmup` that every rank logged: each rank's end of
/// backward (backward_end_clock_ms, one host's monotonic clock).
std::vector<std::vector<double>> backward_ends(const std::vector<formats::RankLog>& logs, int warmup);

/// One measured run (ddpsim-real train --json PREFIX), all its ranks.
struct Measured {
  std::string prefix;
  int world_size = 1;
  int steps = 0;              ///< after the warm-up, not skipped
  double step_ms = 0;         ///< rank 0's mean step time
  double step_sd_ms = 0;      ///< its standard deviation
  double compute_ms = 0;      ///< means over ranks and steps
  double exposed_comm_ms = 0; ///< waiting for all-reduces after backward, less wait_ms
  double wait_ms = 0;         ///< gap to the last rank's end of backward (one host's clock)
  double data_ms = 0;
  /// Whether the logs break a step down (compute_ms, exposed_comm_ms, data_ms, backward_end_clock_ms:
  /// ddpsim-real and `ddpsim measure` do); a user's own loop timed by ddpsim_torch.StepLog logs step_ms
  /// only, and the breakdown's measured columns print "-".
  bool breakdown = true;
  std::string host, device, transport;
  std::vector<std::string> ready_order;  ///< rank 0's gradient_ready_order, when recorded
  std::string parallelism = "ddp";       ///< "ddp", "full_shard" or "shard_grad_op" (formats::RankLog)
  std::string comm_hook = "allreduce";   ///< DDP's comm hook the run registered (formats::RankLog)
  std::optional<std::int64_t> peak_memory_bytes;  ///< the largest rank's, where the run counted it (FSDP)
};
/// Reads PREFIX.rank<r>.json for every rank; the first `warmup` iterations
/// are left out. Throws scenarios::InputError naming the file.
Measured read_measured(const std::string& prefix, int warmup);

/// contention.compute_slowdown fitted to a step time measured at W ranks
/// (a run's mean, or a published figure): the s at which the scenario
/// predicts it at its first bucket cap (bisection on s in [0, 10]: the
/// prediction grows with s). 0, with a note saying why, when the prediction
/// without it is already at or above the measurement, or when even s = 10
/// (compute at 1/11 of its speed beside communication) falls short: the gap
/// is then not compute beside communication.
inline constexpr double kMaxComputeSlowdown = 10;
struct ContentionFit {
  double compute_slowdown = 0;
  double predicted_without_ms = 0, predicted_ms = 0, measured_ms = 0;
  bool out_of_reach = false;  ///< even s = kMaxComputeSlowdown falls short: s is not what is missing
  std::string note;
};
ContentionFit fit_compute_slowdown(const scenarios::Scenario& scenario, int world_size, double measured_ms);
/// The value for several measured steps: the median of the fits s can reach
/// (the others say nothing about s); 0 when none can.
double median_compute_slowdown(const std::vector<ContentionFit>& fits);

/// One line per measured run that recorded DDP's gradient-ready order: whether
/// it is the scenario's `model.gradient_ready_order`, else the first position
/// where they part (the buckets and overlap were predicted for the scenario's).
std::string ready_order_report(const scenarios::Scenario& scenario, const std::vector<Measured>& measured);
/// A line for each measured run whose comm hook is not the scenario's: the
/// prediction is for the scenario's hook, the measurement another's.
std::string comm_hook_report(const scenarios::Scenario& scenario, const std::vector<Measured>& measured);

struct Component {
  double predicted_ms = 0;
  double measured_ms = 0;
};

struct ValidationRow {
  Measured measured;
  double predicted_ms = 0;
  double baseline_ms = 0;
  double error_pct = 0;           ///< (predicted - measured) / measured
  double baseline_error_pct = 0;
  Component compute, exposed_comm, wait, data;
  std::optional<double> measured_efficiency, predicted_efficiency;  ///< against W = 1, when measured
  /// Peak memory per rank, bytes: the memory model (scenarios::predict_memory)
  /// against what the run counted; only where it counted it.
  struct Memory {
    std::int64_t predicted = 0, measured = 0;
    double error_pct = 0;
  };
  std::optional<Memory> memory;
};

/// Simulates `scenario` at each measured world size (its own world sizes are
/// replaced, its first bucket cap used). InputError at the scenario's
/// `parallelism` when a run measured another program.
std::vector<ValidationRow> compare(const scenarios::Scenario& scenario, const std::vector<Measured>& measured);

std::string validation_table(const std::vector<ValidationRow>& rows);
std::string validation_markdown(const scenarios::Scenario& scenario, const std::vector<ValidationRow>& rows);
std::string validation_svg(const std::string& title, const std::vector<ValidationRow>& rows);
}  // namespace ddpsim::validate
