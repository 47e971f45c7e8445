#pragma once
// A model as DDP sees it: parameter tensors in registration order, the order
// their gradients become ready in backward, buffers, and per-tensor compute.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace ddpsim::models {

enum class DType { kFloat32, kFloat16, kBFloat16, kFloat64, kInt64, kInt32, kUInt8, kBool };
std::string_view to_string(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
std::int64_t element_size(DType dtype);

struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFloat32;
  std::int64_t numel() const;
  std::int64_t bytes() const { return numel() * element_size(dtype); }
};

struct ModelSpec {
  std::vector<Tensor> parameters;  ///< named_parameters(), registration order
  std::vector<int> ready_order;    ///< parameter indices, in gradient-ready order
  std::vector<Tensor> buffers;     ///< broadcast before forward when broadcast_buffers
  /// Per parameter: forward and backward compute attributed to it. The
  /// gradient of parameter i is ready when the backward time of every
  /// parameter up to i in ready_order has elapsed.
  std::vector<sim::Time> forward;
  std::vector<sim::Time> backward;
  /// Per parameter: bytes of activations its layer keeps from forward for
  /// backward, per local batch (empty: none given). Memory only.
  std::vector<std::int64_t> activations;
  /// Per parameter: the activation-checkpointed module it is in (an index
  /// among them), or -1; empty: none. Its forward is recomputed in backward
  /// (its backward time includes it) and its activations are not kept.
  std::vector<int> checkpointed;
  sim::Time optimizer;

  std::int64_t parameter_count() const;
  std::int64_t parameter_bytes() const;
  std::int64_t buffer_bytes() const;
  sim::Time forward_total() const;
  sim::Time backward_total() const;
};

/// Splits `total` over the parameters in proportion to their sizes, skipping
/// those whose weight is zero; rounding keeps the sum exactly `total`.
/// The same for a count (bytes): parts in proportion to `weights`, adding up to `total`.
std::vector<std::int64_t> spread_integer(std::int64_t total, const std::vector<std::int64_t>& weights);
std::vector<sim::Time> spread_by_size(sim::Time total, const std::vector<std::int64_t>& weights);

}  // namespace ddpsim::models
