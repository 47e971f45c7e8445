#pragma once
// What failures cost: seeded failure arrivals over a training horizon,
// detection, relaunch, checkpoint reload and recomputation, checkpoint
// writes, goodput, and the checkpoint interval that maximises it beside
// Young's and Daly's formulas. Derivations: docs/cost-models.md#failures.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace ddpsim::models {

enum class Detection { kWatchdog, kHeartbeat };

struct FailureSpec {
  double mtbf_hours = 0;        ///< mean time between failures
  bool per_gpu = true;          ///< true: of one GPU (the job's is mtbf / W); false: of the job
  Detection detection = Detection::kWatchdog;
  sim::Time watchdog;           ///< detection by the collective watchdog (peers hang until it fires)
  sim::Time heartbeat;          ///< detection by the launcher's heartbeat / health check
  sim::Time relaunch;           ///< tear down, reschedule, restart processes, re-initialise NCCL
  double horizon_hours = 24;    ///< wall-clock time simulated
  bool corrupt_latest = false;  ///< the first failure finds the latest checkpoint unreadable
  std::optional<int> restart_world_size;  ///< elastic: the job comes back with this many ranks
};

struct CheckpointSpec {
  sim::Time interval;        ///< of training time between checkpoints
  double size_gb = 0;        ///< full training state
  double write_gbps = 1;     ///< GB/s
  double read_gbps = 1;      ///< GB/s
  bool async = false;        ///< written in the background: no stall, valid once written
  int keep_last = 2;         ///< checkpoints kept; a corrupt latest needs >= 2 to fall back
  sim::Time write_cost() const;
  sim::Time load_cost() const;
};

struct Recovery {
  double at_hours = 0;      ///< wall-clock time of the failure
  sim::Time detection;
  sim::Time relaunch;
  sim::Time reload;         ///< loading the checkpoint (twice when the latest was corrupt)
  sim::Time recompute;      ///< training since the checkpoint it resumed from, done again
  bool fell_back = false;   ///< the latest checkpoint was corrupt: resumed from the previous one
  sim::Time total() const { return detection + relaunch + reload + recompute; }
};

struct RestartReport {
  std::vector<Recovery> recoveries;
  double horizon_hours = 0;
  double useful_hours = 0;     ///< training time that counts at the end of the horizon
  double checkpoint_hours = 0; ///< stalls writing checkpoints
  double goodput = 0;          ///< useful / horizon
  double job_mtbf_minutes = 0;
  double young_minutes = 0;    ///< sqrt(2 C M)
  double daly_minutes = 0;     ///< Daly's higher-order optimum
  double best_minutes = 0;     ///< the interval maximising expected goodput (Daly's full model, numerically)
  double expected_goodput_at_interval = 0;
  double expected_goodput_at_best = 0;
};

/// Young: sqrt(2 C M).
double young_interval(double checkpoint_cost, double mtbf);
/// Daly (FGCS 2006), higher order: sqrt(2CM) [1 + sqrt(C/2M)/3 + (C/2M)/9] - C for C < 2M, else M.
double daly_interval(double checkpoint_cost, double mtbf);
/// Daly's expected goodput for interval tau: tau / (M e^(R/M) (e^((tau + C)/M) - 1)), R = restart cost.
double expected_goodput(double tau, double checkpoint_cost, double restart_cost, double mtbf);

/// Simulates failures over the horizon for a job of `world_size` ranks.
RestartReport simulate_restarts(const FailureSpec& failures, const CheckpointSpec& checkpoint, int world_size,
                                std::uint64_t seed);

/// Elastic restart, mid-epoch: the examples of the epoch's order that the
/// first `consumed` positions did not cover, spread rank-strided over the
/// new world size without padding, so no example is seen twice or skipped.
struct ElasticResume {
  std::int64_t consumed = 0;                       ///< examples taken before the failure
  std::vector<std::vector<std::int64_t>> ranks;    ///< the rest, per new rank
  std::vector<std::int64_t> duplicates;            ///< over the whole epoch (the audit)
  std::vector<std::int64_t> omissions;
};
ElasticResume resume_epoch(const std::vector<std::int64_t>& epoch_order, std::int64_t dataset_size,
                           std::int64_t consumed, int new_world_size);

}  // namespace ddpsim::models
