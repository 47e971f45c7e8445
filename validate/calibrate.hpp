#pragma once
// Calibration of the collective cost model from measured all-reduce sweeps
// (ddpsim-real allreduce-sweep --json, one file per world size):
//   time = launch + 2(W-1) latency + 2(W-1)/W * bytes / bandwidth
// (docs/cost-models.md), fitted by least squares with Eigen.

#include <string>
#include <vector>

#include "models/cluster.hpp"

namespace ddpsim::validate {

struct SweepPoint {
  int world_size = 1;
  double bytes = 0;
  double time_us = 0;
};

struct CollectiveFit {
  double launch_overhead_us = 0;
  double latency_us = 0;          ///< alpha, per ring step
  double bandwidth_GBps = 0;
  bool network_fitted = true;     ///< false: W = 1 sweeps only, latency and bandwidth not fitted
  double r_squared = 0;           ///< of the times, unweighted
  std::vector<double> residuals_us;  ///< measured - fitted, per point
  double median_relative_error = 0;
  double max_relative_error = 0;
  std::vector<std::string> notes;  ///< what could not be separated or was fixed at 0, and why
};

/// Least squares on relative errors (each point weighted by 1 / its time, so
/// an 8-byte latency counts as much as a 256 MiB transfer). Latency and
/// bandwidth need points at some W > 1; with W = 1 sweeps alone (one GPU) only
/// the launch overhead is fitted and network_fitted is false. Launch overhead
/// and latency separate only with two or more world sizes (W = 1 measures the
/// launch overhead alone). A negative
/// estimate is fixed at 0 and the rest refitted. Throws std::invalid_argument
/// when the bandwidth cannot be fitted. With kBinomial the form is the
/// binomial all-reduce's: launch + latencies x latency + transfers x bytes /
/// bandwidth (models::binomial_all_reduce_counts); any other algorithm, the ring's.
CollectiveFit fit_collective(const std::vector<SweepPoint>& points, models::Algorithm algorithm = models::Algorithm::kRing);

/// The ranks' arrival skew at one world size: the mean over steps of the
/// slowest rank's backward end minus the mean rank's.
struct SkewPoint {
  int world_size = 2;
  double skew_ms = 0;
};

struct StragglerFit {
  double log2_penalty_ms = 0;  ///< skew = penalty log2(W) (W-1)/W: one slow rank, penalty per doubling
  double jitter_mean_ms = 0;   ///< skew = mean (H_W - 1): exponential delays on every rank
  double log2_rms_ms = 0;      ///< residuals of each form
  double jitter_rms_ms = 0;
};
/// Least squares through the origin of both forms; needs a point at W > 1.
StragglerFit fit_straggler(const std::vector<SkewPoint>& points);

}  // namespace ddpsim::validate
