#pragma once
// The FSDP training loop (PyTorch FSDP1) as a TrainingProgram: per unit an
// all-gather before its forward and (when freed) before its backward, its
// compute, the reduce-scatter of its gradient, the optimizer after the last.
// Issue order, streams and the rate limiter: docs/fsdp.md#the-step.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/ddp_job.hpp"
#include "models/fsdp.hpp"
#include "models/program.hpp"

namespace ddpsim::models {

/// Operation tags of the FSDP program (OpLabel::index is the unit), apart
/// from DdpTag's so that op_name tells them apart.
enum class FsdpTag : std::uint32_t {
  kData = 64,
  kForward,
  kBackward,
  kAllGather,
  kReduceScatter,
  kAllReduce,  ///< NO_SHARD's gradient all-reduce
  kOptimizer,
  kFinalBarrier,
  kArtifact,         ///< a rank0_artifact fault's host work
  kExtraCollective,  ///< an extra_collective fault's collective
  kReplicaAllReduce, ///< hybrid sharding: a unit's gradient shard across the replicas
  kOrderCount,       ///< debug.fingerprint, first iteration: the forward-order check's all-gather of handle counts
  kOrderCheck,       ///< then of the unit's handle index, which the ranks compare (models::ContentReader)
};
/// "all_gather unit 3", ...; empty for a tag that is not FSDP's.
std::string fsdp_op_name(sim::OpLabel label);

/// A run of consecutive parameters of one unit, in execution order.
struct FsdpSegment {
  int unit = 0;
  sim::Time time;
};

/// What one unit moves and when it is gathered.
struct FsdpUnitPlan {
  std::int64_t gather_bytes = 0;  ///< the all-gather: padded elements x the compute dtype (0: never gathered)
  std::int64_t reduce_bytes = 0;  ///< the reduce-scatter (padded) or NO_SHARD's all-reduce, in the reduce dtype
  bool freed_after_forward = false;  ///< FULL_SHARD and HYBRID_SHARD, not the root: gathered again in backward
  std::int64_t replica_bytes = 0;    ///< hybrid: the shard's all-reduce across replicas, in the reduce dtype (0: none)
};

/// Everything every rank shares, computed once per world size.
struct FsdpPlan {
  ShardingStrategy strategy = ShardingStrategy::kFullShard;  ///< NO_SHARD when the shard group is one rank
  int shard_group = 1;
  int replicas = 1;  ///< hybrid: shard groups (nodes) holding a replica each
  std::vector<FsdpUnit> units;
  std::vector<FsdpUnitPlan> unit_plans;
  std::vector<FsdpSegment> forward;   ///< parameters in registration order, grouped by unit
  std::vector<FsdpSegment> backward;  ///< parameters in gradient-ready order, grouped by unit
};

/// The plan of `job`'s model under `cfg` on `world_size` ranks of `gpus_per_node`.
/// Hybrid sharding needs whole nodes (std::invalid_argument otherwise).
FsdpPlan plan_fsdp(const DdpJob& job, const FsdpConfig& cfg, int world_size, int gpus_per_node);

/// How many times a step all-gathers unit `u` with `accumulation`
/// micro-steps: twice a micro-step when freed after forward, once when only
/// freed in backward (FULL_SHARD's root), once a step when never freed
/// before the sync (SHARD_GRAD_OP); 0 when never gathered.
int gathers_per_step(const FsdpPlan& plan, const FsdpUnitPlan& u, int accumulation);

/// Hybrid sharding's replica groups, one GPU of each node: `replicas` nodes
/// of one GPU, each ring on the NIC share one GPU gets while `in_flight`
/// replica groups of a node run at once (inter bandwidth x nics_per_node /
/// in_flight, at most the whole NIC; every group of the node: in_flight =
/// gpus_per_node). `job` needs a cluster.
std::unique_ptr<CollectiveTimer> replica_timer(const DdpJob& job, int replicas, int in_flight);
/// The same with every replica group of a node in flight.
std::unique_ptr<CollectiveTimer> replica_timer(const DdpJob& job, int replicas);

/// Hybrid sharding's replica groups of `world_size` ranks in nodes of
/// `per_node`: for each local index i, ranks i, i + per_node, ... (one per
/// node); none up to one node. The SimGrid engine needs their rings up front.
std::vector<std::vector<int>> replica_groups(int world_size, int per_node);

/// Compute + every collective of a step unoverlapped, priced by `timer`
/// over `world_size` ranks: FSDP's closed-form baseline.
double fsdp_closed_form_ms(const DdpJob& job, const FsdpConfig& cfg, int world_size, int gpus_per_node,
                           CollectiveTimer& timer);

/// The FSDP loop of `job` (its model, training loop, network and cluster;
/// its ddp section unused) under `cfg`. Holds references: both must outlive
/// it and its evaluations.
class FsdpProgram final : public TrainingProgram {
 public:
  FsdpProgram(const DdpJob& job, const FsdpConfig& cfg) : job_(job), cfg_(cfg) {}
  ProgramTraits traits() const override;
  CommSettings comm() const override;
  std::unique_ptr<CollectiveTimer> analytic_timer(int world_size) const override;
  std::vector<SlowLink> slow_links() const override;
  std::vector<LinkSlowdown> link_slowdowns() const override;
  std::unique_ptr<Evaluation> evaluation(int simulated, int world_size, std::uint64_t seed) const override;

 private:
  const DdpJob& job_;
  const FsdpConfig& cfg_;
};

}  // namespace ddpsim::models
