#pragma once
// One DDP training job on W virtual ranks. Every rank runs the same loop:
// load data, (buffer broadcast,) forward, backward cut at bucket readiness
// with each bucket's all-reduce launched in index order on the communication
// stream, wait for all buckets, optimizer step. DdpProgram issues it as a
// TrainingProgram (models/program.hpp); exec/evaluate.hpp evaluates it.
// How it is evaluated (fast path, schedule, threads, the collective timer)
// is not part of the job: exec::ExecutionPolicy.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster.hpp"
#include "models/collective_cost.hpp"
#include "models/failure.hpp"
#include "models/faults.hpp"
#include "models/parameters.hpp"
#include "models/program.hpp"
#include "models/reducer.hpp"
#include "models/run_result.hpp"
#include "models/straggler.hpp"
#include "sim/engine.hpp"

namespace ddpsim::models {

struct DdpJob {
  ModelSpec model;
  DdpConfig ddp;
  sim::Time data_load;        ///< per micro-step, on the host, before forward
  int iterations = 10;        ///< optimizer steps per epoch
  int epochs = 1;
  int warmup_iterations = 2;  ///< excluded from step time and per-rank means
  int local_batch_size = 32;
  bool final_barrier = true;  ///< every rank runs dist.barrier() after its loop
  bool agree_on_skip = false; ///< all-reduce a skip flag after forward; a skip then happens on every rank
  bool join = false;          ///< each epoch's loop runs inside torch.distributed.algorithms.Join
  NetworkParams network;      ///< without a cluster: every route's latency and bandwidth; always: the launch overhead
  std::optional<ClusterSpec> cluster;  ///< none: one switch joining every rank with `network`'s routes
  Algorithm algorithm = Algorithm::kRing;  ///< all-reduce algorithm
  /// collective.model: the alpha-beta ring formulas, or NCCL's tuning model on
  /// the cluster (models/nccl_model.hpp), its bandwidths times nccl_bandwidth_scale.
  CollectiveModel collective_model = CollectiveModel::kRing;
  double nccl_bandwidth_scale = 1;
  StragglerModel straggler;
  std::vector<Fault> faults;
  Backend backend = Backend::kNccl;
  sim::Time watchdog_timeout = sim::Time::from_ms(600'000);  ///< zero: no watchdog
  bool fingerprint = false;   ///< TORCH_DISTRIBUTED_DEBUG=DETAIL: fail at the first divergent collective
  /// While a collective is in flight on a rank, its compute runs 1 + this times slower
  /// (contention.compute_slowdown; docs/cost-models.md#compute-slowed-by-communication).
  double compute_slowdown = 0;
  /// While a rank computes, a collective it is a member of runs 1 + this
  /// times slower (contention.comm_slowdown; docs/cost-models.md#compute-slowed-by-communication).
  double comm_slowdown = 0;
  int total_iterations() const { return iterations * epochs; }
};

/// The analytic engine for `job` on `world_size` ranks: its cluster, or one
/// switch whose routes have the collective section's latency and bandwidth.
std::unique_ptr<CollectiveTimer> analytic_timer(const DdpJob& job, int world_size);
/// The machine a job's collectives run on: its cluster, or a single switch with its collective section's routes.
ClusterSpec cluster_of(const DdpJob& job, int world_size);
/// How `backend` broadcasts: gloo down a binomial tree, NCCL pipelined.
Broadcast broadcast_of(Backend backend);
/// The slow_link faults of `job` slow from the start (no at_ms), as the timers take them.
std::vector<SlowLink> slow_links(const DdpJob& job);
/// The job's links that slow from a time on (slow_link faults with at_ms),
/// by time, the scenario's order among equal times.
std::vector<LinkSlowdown> link_slowdowns(const DdpJob& job);

/// A model given as one block: whole-model times and one fp32 gradient buffer
/// named "gradient" (gradient_bytes must be a multiple of 4).
ModelSpec block_model(sim::Time forward, sim::Time backward, sim::Time optimizer, std::int64_t gradient_bytes);

/// Operation tags in records and traces; OpLabel::index is the micro-step
/// (data, forward), the backward segment, the bucket, or the chunk.
enum class DdpTag : std::uint32_t {
  kData,
  kForward,
  kTraversal,         ///< find_unused_parameters: walk the autograd graph
  kBackward,          ///< syncing backward, one segment per bucket-ready point
  kLocalBackward,     ///< backward under no_sync(): no hooks, no all-reduce
  kAllReduce,         ///< one gradient bucket
  kUsedMap,           ///< find_unused_parameters: all-reduce of the used-parameter map
  kBufferBroadcast,   ///< buffers from rank 0 before forward
  kRebuildBroadcast,  ///< the bucket rebuild's two broadcasts
  kInitBroadcast,     ///< construction: parameters and buffers from rank 0
  kOptimizer,
  kSkipFlag,          ///< agree_on_skip: the all-reduced "skip this backward" flag
  kExtraCollective,   ///< a fault: one more collective on some ranks
  kArtifact,          ///< rank 0 writing logs or a checkpoint
  kFinalBarrier,      ///< dist.barrier() after the loop
  kJoinCount,         ///< Join: all-reduce counting the ranks not yet joined
  kShadowAllReduce,   ///< Join: a joined rank's zero-filled all-reduce for a bucket
  kShadowBroadcast,   ///< Join: a joined rank's buffer broadcast
  kBucketCopyOut,     ///< ddp.bucket_copy_GBps: a bucket's gradients copied back after its all-reduce
  kHookCompute,       ///< a comm hook's work at the bucket's hook, on the backward thread (index: bucket)
  kHookAllReduce,     ///< a comm hook's all-reduce (index: bucket x 4 + its place in the hook's chain)
  kHookCallback,      ///< a comm hook's callback between its all-reduces (index: as kHookAllReduce)
  /// construction: _verify_param_shape_across_processes, the parameter count
  /// all-gathered (index 0), then every parameter's sizes and strides broadcast (index 1), int64
  kVerifyParams,
};
/// kHookAllReduce and kHookCallback: a bucket's chain has at most this many stages per kind.
inline constexpr std::uint32_t kHookStages = 4;
/// "forward", "all_reduce bucket 2", ...
std::string op_name(sim::OpLabel label);

/// True when every rank runs the same program with the same times: no
/// fault, no straggler model, no debug fingerprint (the DDP loop itself
/// treats ranks alike).
bool symmetric(const DdpJob& job);

/// True when every rank issues the same operations, only their straggler
/// delays differing: no fault but slow links (which price collectives), and
/// no unused parameter that stops a rank (without find_unused_parameters).
/// Such a job is evaluated op by op across ranks unless a trace or a
/// schedule asks for the engine (docs/cost-models.md#levelized-evaluation).
bool uniform_program(const DdpJob& job);

/// True when no fault of `job` makes a rank leave lockstep: its faults only
/// slow a rank or a link down, so the ranks still meet in every collective.
bool keeps_lockstep(const DdpJob& job);

/// The DDP training loop of `job` as a TrainingProgram. Holds a reference:
/// the job must outlive it and its evaluations.
class DdpProgram final : public TrainingProgram {
 public:
  explicit DdpProgram(const DdpJob& job) : job_(job) {}
  ProgramTraits traits() const override;
  CommSettings comm() const override;
  std::unique_ptr<CollectiveTimer> analytic_timer(int world_size) const override;
  std::vector<SlowLink> slow_links() const override;
  std::vector<LinkSlowdown> link_slowdowns() const override;
  std::unique_ptr<Evaluation> evaluation(int simulated, int world_size, std::uint64_t seed) const override;

 private:
  const DdpJob& job_;
};

}  // namespace ddpsim::models
