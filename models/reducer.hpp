#pragma once
// PyTorch DDP's Reducer: which gradients share a bucket, at construction and
// after the rebuild, and when each bucket is ready during backward.
// Reference: ../shared/reference/ddp_semantics.md sections 1 and 2;
// torch/csrc/distributed/c10d/reducer.cpp (compute_bucket_assignment_by_size).

#include <cstdint>
#include <optional>
#include <vector>

#include "models/parameters.hpp"
#include "models/comm_hook.hpp"

namespace ddpsim::models {

inline constexpr std::int64_t kMiB = 1024 * 1024;

/// int(mb * 1024 * 1024), as DistributedDataParallel computes bucket_bytes_cap.
inline std::int64_t bucket_bytes(double mb) { return static_cast<std::int64_t>(mb * 1024 * 1024); }

struct DdpConfig {
  std::int64_t bucket_cap_bytes = 25 * kMiB;   ///< int(bucket_cap_mb * 2^20)
  std::int64_t first_bucket_bytes = 1 * kMiB;  ///< dist._DEFAULT_FIRST_BUCKET_BYTES
  /// DDP(bucket_cap_mb=X) with X given: since PyTorch 2.3 the first bucket is
  /// capped at X too (_BucketCapacityConfig.create in torch/nn/parallel/
  /// distributed.py); only DDP's default cap keeps the 1 MiB first bucket.
  /// The scenario's with_cap sets first_bucket_bytes from the cap when true.
  bool first_bucket_follows_cap = false;
  /// ddp.first_bucket_mb was given: the first bucket is pinned, whatever cap
  /// is tried (the advisor's caps included).
  bool first_bucket_given = false;
  bool find_unused_parameters = false;
  bool static_graph = false;
  bool broadcast_buffers = true;
  int gradient_accumulation = 1;        ///< micro-steps per optimizer step; all but the last under no_sync()
  std::vector<int> unused_parameters;   ///< parameter indices that get no gradient
  sim::Time traversal_per_tensor;       ///< find_unused_parameters: autograd-graph walk, per parameter tensor
  /// DDP's own per-byte work on a rank, in bytes per second (0: none): each
  /// gradient copied into its bucket at its hook (lengthening backward) and
  /// back out after its bucket's all-reduce (before the optimizer).
  double bucket_copy_bytes_per_s = 0;
  /// register_comm_hook: what each bucket's reduction does (models/comm_hook.hpp).
  CommHook comm_hook;
  /// The time to copy `bytes` once at bucket_copy_bytes_per_s (zero when unset).
  sim::Time bucket_copy(std::int64_t bytes) const {
    return bucket_copy_bytes_per_s > 0
               ? sim::Time::from_ns(static_cast<double>(bytes) * 1e9 / bucket_copy_bytes_per_s, "a bucket's copy time (ddp.bucket_copy_GBps)")
               : sim::Time{};
  }
};

struct Bucket {
  std::vector<int> params;  ///< parameter indices, in the order they were added
  std::int64_t bytes = 0;
  DType dtype = DType::kFloat32;
};

/// compute_bucket_assignment_by_size: tensors in `order`, grouped by dtype,
/// each group filling buckets up to `limits` (the last limit repeats). A
/// bucket closes once its size reaches the limit, so it may overshoot by one
/// tensor; a tensor is never split. Partly filled buckets follow, in order of
/// their dtype's first appearance. With `sort_by_min_index` (no explicit
/// order in PyTorch) buckets are sorted by their smallest parameter index.
std::vector<Bucket> assign_buckets(const std::vector<Tensor>& params, const std::vector<int>& order,
                                   const std::vector<std::int64_t>& limits, bool sort_by_min_index);

/// Buckets at construction: one per dtype (limit infinity) unless
/// find_unused_parameters without static_graph, then [1 MiB, cap]; sorted by
/// smallest index, then the list reversed.
std::vector<Bucket> initial_buckets(const ModelSpec& model, const DdpConfig& ddp);

/// Buckets after the rebuild, from the gradient-ready order with
/// [first_bucket, cap] limits; none when find_unused_parameters without static_graph.
std::optional<std::vector<Bucket>> rebuilt_buckets(const ModelSpec& model, const DdpConfig& ddp);

/// The buckets a step after the rebuild reduces: the rebuilt ones, or the
/// construction ones where DDP does not rebuild.
std::vector<Bucket> steady_buckets(const ModelSpec& model, const DdpConfig& ddp);

/// The first iteration that uses rebuilt buckets (its forward runs the
/// rebuild's two broadcasts): 1, 2 with static_graph, none without a rebuild.
std::optional<int> rebuild_iteration(const DdpConfig& ddp);

/// Backward compute cut where buckets become ready.
struct BackwardPlan {
  std::vector<sim::Time> segments;         ///< compute pieces, in order; they sum to the backward time
  std::vector<int> bucket_ready_segment;   ///< per bucket: ready at the end of this segment
  int launchable = 0;  ///< buckets 0..launchable-1 are launched; a bucket holding a
                       ///< parameter without gradient (and all after it) never is
};

/// Parameter p's gradient is ready once backward has computed every
/// parameter up to p in the ready order. Unused parameters cost no backward
/// time; with find_unused_parameters they are marked ready at the first hook.
BackwardPlan plan_backward(const ModelSpec& model, const DdpConfig& ddp, const std::vector<Bucket>& buckets);

}  // namespace ddpsim::models
