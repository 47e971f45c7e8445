#pragma once
// PyTorch FSDP (FullyShardedDataParallel, FSDP1) as far as its layout goes:
// the configuration a scenario's `fsdp:` section gives, and the units
// (FlatParameters) its auto-wrap policy builds from a model's parameters.
// Semantics and sources: ../shared/reference/fsdp_semantics.md section 1;
// derivations: docs/fsdp.md#units.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/parameters.hpp"

namespace ddpsim::models {

/// torch.distributed.fsdp.ShardingStrategy.
enum class ShardingStrategy : std::uint8_t { kFullShard, kShardGradOp, kNoShard, kHybridShard, kHybridShardZero2 };
/// PyTorch's spelling: "FULL_SHARD", "SHARD_GRAD_OP", ...
std::string_view to_string(ShardingStrategy strategy);
std::optional<ShardingStrategy> parse_sharding_strategy(std::string_view name);
/// HYBRID_SHARD and _HYBRID_SHARD_ZERO2: shard inside a node, replicate across nodes.
bool is_hybrid(ShardingStrategy strategy);
/// FULL_SHARD and HYBRID_SHARD free a unit's parameters after its forward
/// (RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES); the root never does.
bool reshards_after_forward(ShardingStrategy strategy);

/// torch.distributed.fsdp.BackwardPrefetch, and None.
enum class BackwardPrefetch : std::uint8_t { kBackwardPre, kBackwardPost, kNone };
std::string_view to_string(BackwardPrefetch prefetch);

/// auto_wrap_policy: size_based_auto_wrap_policy(min_num_params), or the
/// modules whose paths match one of `modules` (a class, as the paths of its
/// instances: "transformer.h.*" for GPT-2's blocks; `*` is one path
/// component). Neither: one unit, the root, holding every parameter.
struct WrapPolicy {
  std::optional<std::int64_t> min_num_params;
  std::vector<std::string> modules;
};

struct FsdpConfig {
  ShardingStrategy sharding = ShardingStrategy::kFullShard;
  WrapPolicy wrap;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::kBackwardPre;
  bool forward_prefetch = false;
  bool limit_all_gathers = true;
  std::optional<DType> param_dtype;   ///< mixed_precision.param_dtype: none keeps the parameters' own
  std::optional<DType> reduce_dtype;  ///< mixed_precision.reduce_dtype: none is param_dtype's
  int gradient_accumulation = 1;      ///< micro-steps per optimizer step, all but the last under no_sync()
};

/// One FSDP unit: the module FSDP wrapped and the parameters its
/// FlatParameter holds (those of its subtree that no wrapped descendant took).
struct FsdpUnit {
  std::string module;        ///< the module path; "" for the root
  std::vector<int> params;   ///< parameter indices, in registration order
  std::int64_t numel = 0;    ///< elements of the flat parameter, before padding
  bool root = false;
  int parent = -1;           ///< the index of the nearest wrapped ancestor's unit; -1 for the root
  int forward_position = 0;  ///< where its forward starts: its module's place in a pre-order walk
};

/// A unit's name in reports and messages: its module path, "<root>" for the root.
inline std::string unit_name(const FsdpUnit& u) { return u.root ? std::string("<root>") : u.module; }

/// Unit indices in the order their forwards start (the root first, then
/// by module in a pre-order walk, registration order among siblings). FSDP
/// records this order in the first iteration; backward runs it reversed.
std::vector<int> forward_order(const std::vector<FsdpUnit>& units);

/// The units `_recursive_wrap` builds, in the order it wraps them (children
/// before parents, children in registration order; the root, always a unit,
/// last). Module paths come from parameter names ("h.0.attn.weight" is
/// parameter "weight" of module "h.0.attn").
std::vector<FsdpUnit> build_units(const ModelSpec& model, const WrapPolicy& policy);

/// Does `path` match `pattern`, component by component, `*` matching one?
bool module_matches(std::string_view pattern, std::string_view path);

/// A flat parameter of `numel` elements padded to a multiple of `shard_group`
/// ranks, as FlatParamHandle pads it: shard_group x ceil(numel / shard_group).
std::int64_t padded_numel(std::int64_t numel, int shard_group);

/// The ranks one unit is sharded over: W, or a node's GPUs under hybrid
/// sharding, or 1 under NO_SHARD.
int shard_group_size(ShardingStrategy strategy, int world_size, int gpus_per_node);

}  // namespace ddpsim::models
