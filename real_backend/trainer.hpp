#pragma once
// The real data-parallel training loop: each rank trains on its
// DistributedSampler partition of a synthetic dataset and takes an
// SGD-with-momentum step, under one of two programs:
// - DDP (ddp_program.cpp): a full replica per rank; gradients averaged bucket
//   by bucket as they become ready, overlapping backward; rank 0 checkpoints
//   the complete state.
// - FSDP (fsdp_program.cpp): each layer a unit whose parameters, gradients
//   and optimizer state are sharded over the ranks; all-gathers before its
//   forward and backward, a reduce-scatter of its gradient; every rank
//   checkpoints its shard, rank 0 a manifest.
// Checkpoints every K steps; a relaunch resumes from the newest valid one,
// on the same or a different number of ranks (the simulator's elastic rule,
// models::resume_epoch). Faults reproduce the seed's hang.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "real_backend/checkpoint.hpp"
#include "real_backend/mlp.hpp"
#include "real_backend/replica.hpp"
#include "real_backend/transport.hpp"

namespace ddpsim::real {

/// `skip-backward:rank=R,iter=I`: rank R skips backward (and its collectives
/// and step) in iteration I. `kill:rank=R,step=S`: rank R sends itself SIGKILL
/// at the start of step S.
struct Fault {
  enum class Kind { kSkipBackward, kKill };
  Kind kind = Kind::kSkipBackward;
  int rank = 0;
  int iteration = 0;
};
/// Parses the --fault syntax; throws std::invalid_argument saying what was expected.
Fault parse_fault(const std::string& text);

/// The training program: DDP, or FSDP with FULL_SHARD, SHARD_GRAD_OP or
/// HYBRID_SHARD (sharded over the transport's node groups).
enum class Parallelism { kDdp, kFullShard, kShardGradOp, kHybridShard };
/// "ddp", "full_shard", "shard_grad_op", "hybrid_shard": the names the rank logs carry.
std::string parallelism_name(Parallelism p);

struct TrainerOptions {
  Parallelism parallelism = Parallelism::kDdp;
  MlpShape shape{8, {64, 64}, 1};
  std::int64_t dataset_size = 128;
  int batch_size = 8;          ///< per rank
  int epochs = 1;
  int max_steps = -1;          ///< stop once this many steps are done in all, resumed ones included (-1: all epochs)
  bool shuffle = true;
  std::uint64_t seed = 0;
  float lr = 0.01f;
  float momentum = 0.9f;
  double bucket_cap_mb = 25;
  double first_bucket_mb = 1;
  /// DDP's communication hook: "allreduce" or "fp16_compress" (CPU, MPI: each bucket all-reduced in half precision).
  std::string comm_hook = "allreduce";
  std::vector<Fault> faults;
  bool symmetric_skip = false;  ///< agree on skipping backward with a one-element all-reduce first
  std::string checkpoint_dir;   ///< empty: no checkpoints
  int checkpoint_every = 0;     ///< steps; 0: never
  int keep_checkpoints = 3;
  bool resume = false;          ///< start from the newest valid checkpoint in checkpoint_dir
  std::function<void(const std::string&)> log;  ///< rank 0's messages
};

/// Per-rank, per-iteration timing, in the simulator's per-rank field names
/// (docs/scenario-format.md#json-output); milliseconds of wall-clock time.
struct StepTiming {
  int iteration = 0;
  int epoch = 0;
  int examples = 0;             ///< this rank's batch
  bool skipped = false;         ///< backward skipped (fault, or the ranks' vote)
  double data_ms = 0;
  double forward_compute_ms = 0;   ///< forward start -> backward start
  double backward_compute_ms = 0;  ///< backward start -> end of backward compute
  double backward_comm_ms = 0;     ///< first bucket launched -> all buckets done
  double backward_overlap_ms = 0;  ///< first bucket launched -> backward compute end
  double optimizer_ms = 0;
  double compute_ms = 0;           ///< forward + backward + optimizer
  double collective_ms = 0;        ///< bucket all-reduces executing, overlapped or not
  double exposed_comm_ms = 0;      ///< after backward, waiting for the all-reduces
  double step_ms = 0;
  /// When backward compute ended, on the host's steady clock (CLOCK_MONOTONIC,
  /// shared by every process on a host): the ranks' arrival skew, for the
  /// straggler fit of ddpsim calibrate. 0 when skipped.
  double backward_end_clock_ms = 0;
  std::vector<double> layer_forward_ms;   ///< per layer, layers.0 first (CPU only)
  std::vector<double> layer_backward_ms;
};

struct EpochIds {
  int epoch = 0;
  std::vector<std::int64_t> ids;  ///< in the order this rank consumed them
};

struct TrainResult {
  std::vector<float> parameters;
  std::vector<StepTiming> steps;
  std::vector<EpochIds> epochs;
  std::vector<std::int64_t> bucket_bytes;  ///< DDP's buckets
  std::vector<std::int64_t> unit_bytes;    ///< FSDP's units: padded flat parameters, bytes
  std::int64_t resumed_from_step = -1;     ///< -1: started from scratch
  std::int64_t peak_memory_bytes = -1;     ///< FSDP: the most tensor bytes held at once (-1: not counted)
};

/// A training program as the loop drives it, on every rank.
class Program {
 public:
  virtual ~Program() = default;
  /// "cpu" or the GPU's name.
  virtual std::string device() const = 0;
  /// Before the first step: every rank starts from the same parameters.
  virtual void start(Transport& t) = 0;
  /// Forward of `rows` examples (host, row-major; 0 allowed); fills
  /// forward_compute_ms (its time less any wait for communication, which
  /// goes to exposed_comm_ms) and layer_forward_ms of `timing`.
  virtual void forward(Transport& t, const float* x, const float* y, int rows, StepTiming& timing) = 0;
  /// Backward, the gradient reductions and the optimizer step; fills the rest of `timing`.
  virtual void backward_and_step(Transport& t, StepTiming& timing) = 0;
  /// Called on every rank when a checkpoint is due: `position` (no tensors)
  /// and the program's state. Returns what rank 0 logs.
  virtual std::string checkpoint(Transport& t, const TrainState& position, const TrainerOptions& o) = 0;
  /// Loads the newest valid checkpoint of o.checkpoint_dir into the program
  /// on every rank (resharding it under FSDP); its position, or none.
  virtual std::optional<TrainState> resume(Transport& t, const TrainerOptions& o) = 0;
  /// The full parameters in registration order, on every rank (FSDP gathers them).
  virtual std::vector<float> parameters(Transport& t) = 0;
  /// What the result reports of the program: buckets or units, peak memory.
  virtual void describe(TrainResult& out) const = 0;
};

/// DDP over `replica` (which must outlive the program).
std::unique_ptr<Program> make_ddp_program(Replica& replica, const TrainerOptions& options, int world_size);
/// FSDP on the CPU: each of the MLP's layers a unit, sharded over `world_size` ranks.
std::unique_ptr<Program> make_fsdp_program(const TrainerOptions& options, int world_size);

/// The synthetic dataset: example `id` is a fixed function of (seed, id).
void synthetic_example(std::uint64_t seed, std::int64_t id, int input, int output, float* x, float* y);

/// The replica's configuration for these options (buckets from the simulator's reducer).
ReplicaConfig replica_config(const TrainerOptions& options, int world_size);

TrainResult train(Transport& transport, Program& program, const TrainerOptions& options);

/// One row of an all-reduce sweep; algbw = bytes / time, busbw = algbw * 2(W-1)/W (nccl-tests).
struct SweepRow {
  std::int64_t bytes = 0;
  double time_us = 0;  ///< mean over the timed repetitions, after one warm-up
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};
/// Sizes doubling from `min_bytes` to `max_bytes`, every rank taking part. `buffer`
/// holds at least max_bytes in memory the transport reaches.
/// A sweep of `kind` (all_reduce, all_gather, reduce_scatter or broadcast)
/// from min_bytes to max_bytes, doubling, in nccl-tests' sizes and
/// bandwidths; all_gather and reduce_scatter sizes rounded down to a
/// multiple of W floats. `buffer` holds max_bytes of transport memory.
std::vector<SweepRow> collective_sweep(Transport& transport, sim::CollectiveKind kind, float* buffer, std::int64_t min_bytes,
                                       std::int64_t max_bytes, int iters);
std::vector<SweepRow> allreduce_sweep(Transport& transport, float* buffer, std::int64_t min_bytes,
                                      std::int64_t max_bytes, int iters);

}  // namespace ddpsim::real
