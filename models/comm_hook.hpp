#pragma once
// DDP's communication hooks (DistributedDataParallel.register_comm_hook):
// what each does to one gradient bucket, read off PyTorch's source
// (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py and
// powerSGD_hook.py; docs/cost-models.md#communication-hooks):
// - allreduce: the bucket all-reduced as it is (DDP without a hook);
// - fp16_compress / bf16_compress: the bucket cast to half precision and
//   divided by W at the hook, the half-size buffer all-reduced, cast back
//   in the future's callback;
// - powerSGD: plain all-reduce until start_powerSGD_iter; then the bucket's
//   tensors it leaves alone (rank-1 ones, those below min_compression_rate)
//   all-reduced together, P = M Q all-reduced, P orthogonalised,
//   Q = M^T P all-reduced, M = P Q^T; error feedback adds last step's error
//   first and keeps this step's;
// - batched_powerSGD: the whole bucket as one square matrix (zero-padded),
//   no uncompressed all-reduce.
// The hook's compute is priced by named rates (HookCost) that
// `ddpsim_torch profile --comm-hook` measures on one rank.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "models/parameters.hpp"
#include "sim/time.hpp"

namespace ddpsim::models {

struct Bucket;

enum class CommHookKind : std::uint8_t { kAllReduce, kFp16Compress, kBf16Compress, kPowerSgd, kBatchedPowerSgd };
/// PyTorch's names: allreduce, fp16_compress, bf16_compress, powerSGD, batched_powerSGD.
std::string_view to_string(CommHookKind kind);
std::optional<CommHookKind> parse_comm_hook(std::string_view name);
/// Every hook's name, in CommHookKind's order.
const std::vector<std::string_view>& comm_hook_names();

/// PowerSGDState's options, PyTorch's defaults.
struct PowerSgdOptions {
  int matrix_approximation_rank = 1;
  int start_powerSGD_iter = 1000;
  double min_compression_rate = 2;
  bool use_error_feedback = true;
  bool warm_start = true;
  double orthogonalization_epsilon = 0;  ///< no cost of its own: a term in a division
};

/// The rates the hook's compute is priced at.
struct HookCost {
  double cast_bytes_per_s = 0;    ///< fp32 bytes cast to (and back from) half precision per second
  double pass_bytes_per_s = 0;    ///< one elementwise pass (add, clone, subtract, copy) over fp32 bytes
  double matmul_flops_per_s = 0;  ///< batched matrix products, flops
  /// First touch of a tensor the hook allocates each step, bytes per second
  /// beyond the pass that fills it (a CPU's page faults); 0: free (CUDA's caching allocator).
  double alloc_bytes_per_s = 0;
  sim::Time per_op;               ///< each torch call the hook's Python makes (dispatch, launch)
  bool measured = false;          ///< from profile --comm-hook, not the defaults
};
/// Stated defaults where nothing was measured: a GPU's (NCCL) or a CPU core's (gloo).
HookCost default_hook_cost(bool gpu);

struct CommHook {
  CommHookKind kind = CommHookKind::kAllReduce;
  PowerSgdOptions powersgd;
  HookCost cost = default_hook_cost(true);
  bool powersgd_family() const { return kind == CommHookKind::kPowerSgd || kind == CommHookKind::kBatchedPowerSgd; }
  /// Whether `step` (the count of syncing backwards before it) is compressed.
  bool compresses(int step) const;
  /// How many of the steps from..to-1 it compresses.
  int compressed_steps(int from, int to) const;
};

/// One operation of a bucket's hook after the bucket is ready: compute (a
/// callback's work, on the communication side) or an all-reduce.
struct HookStage {
  bool collective = false;
  std::int64_t bytes = 0;  ///< collective: bytes all-reduced
  sim::Time time;          ///< compute: its time
};

/// What one bucket's hook does in one step.
struct BucketHookPlan {
  sim::Time at_hook;             ///< compute on the backward thread before the first all-reduce
  std::vector<HookStage> chain;  ///< then, in order, on the communication side
  std::int64_t input_bytes = 0;  ///< the bucket as DDP hands it over
  std::int64_t wire_bytes = 0;   ///< bytes all-reduced: the collectives' sizes summed
  sim::Time compute() const;     ///< at_hook and every compute stage
};

/// Bucket `bucket` of `model` under `hook` in a step that compresses (for
/// powerSGD, a step at or past start_powerSGD_iter; otherwise the bucket is
/// all-reduced as it is). `first_compressed`: no warm-started P, Q yet.
BucketHookPlan plan_bucket_hook(const CommHook& hook, const ModelSpec& model, const Bucket& bucket, bool compressing,
                                bool first_compressed);

/// Bytes the hook keeps across steps on each rank: error feedback (one
/// bucket-sized buffer a bucket, padded to the square for the batched
/// variant) and warm start's P and Q; zero for the other hooks.
std::int64_t comm_hook_state_bytes(const CommHook& hook, const ModelSpec& model, const std::vector<Bucket>& buckets);

}  // namespace ddpsim::models
