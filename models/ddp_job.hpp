#pragma once
// One DDP training job on W virtual ranks. Every rank runs the same loop:
// load data, (buffer broadcast,) forward, backward cut at bucket readiness
// with each bucket's all-reduce launched in index order on the communication
// stream, wait for all buckets, optimizer step. The engine times it.

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
#include "models/reducer.hpp"
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
  CollectiveTimer* timer = nullptr;  ///< not owned; none: the analytic engine (analytic_timer)
  StragglerModel straggler;
  std::vector<Fault> faults;
  sim::Backend backend = sim::Backend::kNccl;
  sim::Time watchdog_timeout = sim::Time::from_ms(600'000);  ///< zero: no watchdog
  bool fingerprint = false;   ///< TORCH_DISTRIBUTED_DEBUG=DETAIL: fail at the first divergent collective
  bool fast_path = true;      ///< symmetric jobs: simulate one rank for all (simulate_ddp); false: always rank by rank
  /// The engine's schedule for every-rank runs; unset: levelized for a
  /// uniform_program job, else chosen per job (simulate_ddp). All give the
  /// same results; a trace always gets the engine in kTimeOrder.
  std::optional<sim::Schedule> schedule;
  /// Threads one rank-major simulation may use (sim::EngineOptions::threads;
  /// each gets at least kRanksPerEngineThread ranks). The results do not depend on it.
  int threads = 1;
  int total_iterations() const { return iterations * epochs; }
};

/// The analytic engine for `job` on `world_size` ranks: its cluster, or one
/// switch whose routes have the collective section's latency and bandwidth.
std::unique_ptr<CollectiveTimer> analytic_timer(const DdpJob& job, int world_size);
/// The slow_link faults of `job` as the timers take them.
std::vector<SlowLink> slow_links(const DdpJob& job);

/// A model given as one block: whole-model times and one fp32 gradient buffer
/// named "gradient" (gradient_bytes must be a multiple of 4).
ModelSpec block_model(sim::Time forward, sim::Time backward, sim::Time optimizer, std::int64_t gradient_bytes);

enum class Outcome { kCompleted, kHang, kCrash };
std::string_view to_string(Outcome outcome);

/// Per-rank means over the measured iterations, in milliseconds.
struct RankStats {
  int rank = 0;
  double data_ms = 0;          ///< data loading
  double compute_ms = 0;       ///< forward + backward + optimizer (+ graph traversal)
  double collective_ms = 0;    ///< collective execution, overlapped or not
  double exposed_comm_ms = 0;  ///< compute stream idle while a collective executed
  double wait_ms = 0;          ///< compute stream idle while a collective waited for other ranks
  // DDP's own timing fields (_get_ddp_logging_data), for the syncing micro-step:
  double forward_compute_ms = 0;       ///< forward start -> backward start
  double backward_compute_ms = 0;      ///< backward start -> end of backward compute
  double backward_comm_ms = 0;         ///< first bucket launched -> all buckets done
  double backward_overlap_ms = 0;      ///< first bucket launched -> backward compute end
};

/// Scaling efficiency below this is flagged in every table, with the overhead
/// that costs most.
inline constexpr double kLowEfficiency = 0.8;
struct Overhead {
  std::string_view name;  ///< "exposed communication", "straggler wait" or "data loading"
  double ms = 0;          ///< per step
};
/// The largest of the three non-compute costs of a step.
Overhead costliest_overhead(double exposed_comm_ms, double wait_ms, double data_ms);
/// "  below 80%: exposed communication costs most (0.42 ms per step)", or "" at or above 80 %.
std::string low_efficiency_flag(double efficiency, double exposed_comm_ms, double wait_ms, double data_ms);

/// A process that stopped with an error, as PyTorch would raise it.
struct RankError {
  int rank = 0;
  double at_ms = 0;
  std::string message;
};

struct RunResult {
  int world_size = 0;
  Outcome outcome = Outcome::kCompleted;
  std::optional<double> step_ms;  ///< mean iteration time after warm-up; none if none completed
  int measured_iterations = 0;    ///< iterations after warm-up that every rank completed
  std::int64_t global_batch = 0;  ///< local batch x W x gradient accumulation
  int iterations = 0;
  std::vector<RankStats> ranks;
  std::vector<sim::BlockedOp> blocked;  ///< who waits where, when the run hung
  std::vector<RankError> errors;        ///< why ranks stopped, when the run crashed
  std::optional<FailureReport> failure; ///< the earliest collective that did not complete, and why
  std::vector<MisalignedPair> misalignments;  ///< silently mismatched pairs
  std::vector<int> iterations_run;      ///< per rank: loop iterations started
  std::vector<int> shadow_collectives;  ///< per rank: collectives Join issued for it after it ran out of data
  std::uint64_t events = 0;     ///< events the engine processed
  std::uint64_t rank_ops = 0;   ///< operations completed, summed over the W ranks
  bool fast_path = false;       ///< one rank was simulated for all (symmetric)
  bool levelized = false;       ///< evaluated op by op across ranks (every rank issues the same ops)
  sim::Time end;
};

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
};
/// "forward", "all_reduce bucket 2", ...
std::string op_name(sim::OpLabel label);

/// A rank-major simulation's threads each run at least this many ranks: they
/// meet once per collective, which costs more than a few thousand ranks' work
/// on the development machine (bench/README.md#schedules).
inline constexpr int kRanksPerEngineThread = 4096;

/// True when every rank runs the same program with the same times: no
/// fault, no straggler model, no debug fingerprint (the DDP loop itself
/// treats ranks alike).
bool symmetric(const DdpJob& job);

/// The engine schedule a rank-by-rank simulation of `job` on `ranks` ranks
/// without a trace uses: `job.schedule` if set; otherwise time order when
/// a fault makes ranks leave lockstep (they crash, hang or disagree, which
/// rank-major hands back to time order anyway); otherwise rank-major (each
/// rank runs ahead to its next collective) when ranks rarely share an
/// instant (a jitter straggler model) or when it gets two or more threads
/// (DdpJob::threads, kRanksPerEngineThread ranks each), where it is faster
/// (bench/README.md#schedules); time order otherwise.
sim::Schedule choose_schedule(const DdpJob& job, int ranks);

/// True when every rank issues the same operations, only their straggler
/// delays differing: no fault but slow links (which price collectives), and
/// no unused parameter that stops a rank (without find_unused_parameters). Such a job, without a trace or a
/// DdpJob::schedule, is evaluated op by op across ranks
/// (sim::run_levelized; docs/cost-models.md#levelized-evaluation).
bool uniform_program(const DdpJob& job);

/// Simulates `job` on `world_size` ranks. `trace`, if given, sees every op
/// (time order). A uniform_program job without either is evaluated
/// levelized, unless a collective's members arrive further apart than the
/// watchdog allows. Otherwise every rank simulated runs on the engine, on
/// the schedule choose_schedule gives; a rank-major run that reaches what
/// only time order simulates (a crash, ranks that disagree, the watchdog)
/// is run again in time order. The results are the same
/// (tests/CMakeLists.txt: schedule.*, levelized.*).
/// A symmetric job (with fast_path, without a trace) is simulated exactly
/// by one rank whose collectives are priced over W, at a cost that does not
/// grow with W; the result is the same as rank by rank (tests/fastpath.cmake).
RunResult simulate_ddp(const DdpJob& job, int world_size, std::uint64_t seed, sim::Observer* trace = nullptr);

}  // namespace ddpsim::models
