#pragma once
// The real data-parallel training loop: each rank holds the full model,
// trains on its DistributedSampler partition of a synthetic dataset, and
// averages gradients bucket by bucket as they become ready, overlapping
// backward, then takes an SGD-with-momentum step.

#include <cstdint>
#include <string>
#include <vector>

#include "real_backend/mlp.hpp"
#include "real_backend/transport.hpp"

namespace ddpsim::real {

struct TrainerOptions {
  MlpShape shape{8, {64, 64}, 1};
  std::int64_t dataset_size = 128;
  int batch_size = 8;          ///< per rank
  int epochs = 1;
  int max_steps = -1;          ///< stop after this many steps in all (-1: all epochs)
  bool shuffle = true;
  std::uint64_t seed = 0;
  float lr = 0.01f;
  float momentum = 0.9f;
  double bucket_cap_mb = 25;
  double first_bucket_mb = 1;
};

/// Per-rank, per-iteration timing, in the simulator's per-rank field names.
struct StepTiming {
  int iteration = 0;
  double data_ms = 0;
  double compute_ms = 0;        ///< forward + backward + optimizer
  double exposed_comm_ms = 0;   ///< waiting for all-reduces after backward
  double step_ms = 0;
};

struct TrainResult {
  std::vector<float> parameters;
  std::vector<StepTiming> steps;
  std::vector<std::vector<std::int64_t>> ids_per_epoch;  ///< example IDs this rank consumed
  std::vector<std::int64_t> bucket_bytes;
};

/// The synthetic dataset: example `id` is a fixed function of (seed, id).
void synthetic_example(std::uint64_t seed, std::int64_t id, int input, int output, float* x, float* y);

TrainResult train(Transport& transport, const TrainerOptions& options);

/// One row of an all-reduce sweep; algbw = bytes / time, busbw = algbw * 2(W-1)/W (nccl-tests).
struct SweepRow {
  std::int64_t bytes = 0;
  double time_us = 0;  ///< mean over the timed repetitions, after one warm-up
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};
/// Sizes doubling from `min_bytes` to `max_bytes`, every rank taking part.
std::vector<SweepRow> allreduce_sweep(Transport& transport, std::int64_t min_bytes, std::int64_t max_bytes, int iters);

}  // namespace ddpsim::real
