#include "validate/calibrate.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace ddpsim::validate {
namespace {

// Design row for the unknowns (launch_us, latency_us, us per byte): the
// ring's 2(W-1) steps of bytes / W, or the binomial all-reduce's chain.
Eigen::RowVector3d design(const SweepPoint& p, models::Algorithm algorithm) {
  if (algorithm == models::Algorithm::kBinomial) {
    const models::BinomialCounts n = models::binomial_all_reduce_counts(p.world_size);
    return {1.0, static_cast<double>(n.latencies), n.transfers * p.bytes};
  }
  const double steps = 2.0 * (p.world_size - 1);
  return {1.0, steps, steps / p.world_size * p.bytes};
}

// Residuals, R^2 and relative errors of a fit given its prediction per point.
template <typename Predict>
void summarise(const std::vector<SweepPoint>& points, CollectiveFit& fit, Predict predict) {
  double mean = 0;
  for (const SweepPoint& p : points) mean += p.time_us;
  mean /= static_cast<double>(points.size());
  double ss_res = 0, ss_tot = 0;
  std::vector<double> relative;
  for (const SweepPoint& p : points) {
    const double predicted = predict(p);
    fit.residuals_us.push_back(p.time_us - predicted);
    ss_res += (p.time_us - predicted) * (p.time_us - predicted);
    ss_tot += (p.time_us - mean) * (p.time_us - mean);
    relative.push_back(std::fabs(p.time_us - predicted) / p.time_us);
  }
  fit.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  std::sort(relative.begin(), relative.end());
  fit.median_relative_error = relative[relative.size() / 2];
  fit.max_relative_error = relative.back();
}

}  // namespace

CollectiveFit fit_collective(const std::vector<SweepPoint>& points, models::Algorithm algorithm) {
  std::set<int> worlds;
  for (const SweepPoint& p : points) {
    if (p.world_size < 1 || p.bytes < 0 || !(p.time_us > 0) || !std::isfinite(p.time_us)) {
      throw std::invalid_argument(fmt::format("bad sweep point: W = {}, {} bytes, {} us", p.world_size, p.bytes, p.time_us));
    }
    worlds.insert(p.world_size);
  }
  if (worlds.empty()) throw std::invalid_argument("no sweep points");
  CollectiveFit fit;
  if (*worlds.rbegin() < 2) {
    // W = 1 (one GPU): every point is the launch overhead; its relative least
    // squares estimate is sum(1/t) / sum(1/t^2).
    double num = 0, den = 0;
    for (const SweepPoint& p : points) {
      num += 1 / p.time_us;
      den += 1 / (p.time_us * p.time_us);
    }
    fit.launch_overhead_us = num / den;
    fit.network_fitted = false;
    fit.notes.push_back("sweeps at W = 1 only: the launch overhead is fitted; latency and bandwidth need a world size "
                        "above 1 and stay the scenario's");
    summarise(points, fit, [&](const SweepPoint&) { return fit.launch_overhead_us; });
    return fit;
  }
  std::vector<bool> free = {true, true, true};  // launch, latency, per-byte
  if (worlds.size() < 2) {
    free[0] = false;
    fit.notes.push_back(fmt::format("one world size (W = {}): launch overhead and latency cannot be told apart; "
                                    "launch overhead fixed at 0 (add a sweep at W = 1 to measure it)",
                                    *worlds.begin()));
  }
  Eigen::Vector3d x = Eigen::Vector3d::Zero();
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<int> columns;
    for (int c = 0; c < 3; ++c) {
      if (free[static_cast<std::size_t>(c)]) columns.push_back(c);
    }
    Eigen::MatrixXd a(static_cast<Eigen::Index>(points.size()), static_cast<Eigen::Index>(columns.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(points.size()));
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Eigen::RowVector3d row = design(points[i], algorithm) / points[i].time_us;
      for (std::size_t j = 0; j < columns.size(); ++j) a(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = row(columns[j]);
      b(static_cast<Eigen::Index>(i)) = 1.0;
    }
    const Eigen::VectorXd solved = a.colPivHouseholderQr().solve(b);
    x.setZero();
    for (std::size_t j = 0; j < columns.size(); ++j) x(columns[j]) = solved(static_cast<Eigen::Index>(j));
    bool refit = false;
    for (int c : {0, 1}) {
      if (free[static_cast<std::size_t>(c)] && x(c) < 0) {
        free[static_cast<std::size_t>(c)] = false;
        refit = true;
        fit.notes.push_back(fmt::format("the {} came out negative ({:.3g} us): fixed at 0 and refitted",
                                        c == 0 ? "launch overhead" : "latency", x(c)));
      }
    }
    if (!refit) break;
  }
  if (!(x(2) > 0)) throw std::invalid_argument("the fitted time per byte is not positive: the sweep does not grow with size");
  fit.launch_overhead_us = x(0);
  fit.latency_us = x(1);
  fit.bandwidth_GBps = 1e-3 / x(2);  // us per byte -> bytes per ns
  summarise(points, fit, [&](const SweepPoint& p) { return design(p, algorithm).dot(x); });
  return fit;
}

StragglerFit fit_straggler(const std::vector<SkewPoint>& points) {
  if (points.empty()) throw std::invalid_argument("the straggler fit needs a multi-rank run");
  // The expected skew per unit of each form's parameter (docs/cost-models.md#stragglers).
  const auto log2_form = [](int w) { return std::log2(static_cast<double>(w)) * (w - 1) / w; };
  const auto jitter_form = [](int w) {
    double h = 0;
    for (int k = 1; k <= w; ++k) h += 1.0 / k;
    return h - 1;
  };
  const auto fit_through_origin = [&](auto form, double& coefficient, double& rms) {
    double num = 0, den = 0;
    for (const SkewPoint& p : points) {
      if (p.world_size < 2) throw std::invalid_argument("the straggler fit needs runs at W > 1");
      num += p.skew_ms * form(p.world_size);
      den += form(p.world_size) * form(p.world_size);
    }
    coefficient = std::max(0.0, num / den);
    double ss = 0;
    for (const SkewPoint& p : points) ss += std::pow(p.skew_ms - coefficient * form(p.world_size), 2);
    rms = std::sqrt(ss / static_cast<double>(points.size()));
  };
  StragglerFit fit;
  fit_through_origin(log2_form, fit.log2_penalty_ms, fit.log2_rms_ms);
  fit_through_origin(jitter_form, fit.jitter_mean_ms, fit.jitter_rms_ms);
  return fit;
}

}  // namespace ddpsim::validate
