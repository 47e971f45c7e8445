// The FSDP training loop as a TrainingProgram (models/fsdp_program.hpp):
// each rank's process issues one iteration at a time to a sim::OpSink.

#include "models/fsdp_program.hpp"

#include <fmt/format.h>

#include <deque>
#include <optional>
#include <stdexcept>

#include "models/ddp_run.hpp"
#include "models/fsdp_run.hpp"
#include "models/replica_pricing.hpp"
#include "sim/levelized.hpp"

namespace ddpsim::models {
namespace fsdp {
namespace {

sim::OpLabel label(FsdpTag tag, int iteration, int index = 0) {
  return {static_cast<std::uint32_t>(tag), static_cast<std::uint32_t>(iteration), static_cast<std::uint32_t>(index)};
}

// What one rank does differently in one iteration: its faults there.
struct IterationFaults {
  double compute = 1;              // slowdown
  double data = 1;                 // slowdown, target data
  int micro_steps = 1;             // fsdp.gradient_accumulation, or micro_batches' count
  bool skip = false;               // skip_iteration: `continue` after loading the batch
  std::vector<bool> skipped;       // skip_unit: the units not called (with the units inside them)
  std::vector<sim::Collective> extra;  // extra_collective, after the step
  std::optional<sim::Time> artifact;   // rank0_artifact's host work, after the step
};

// The process groups one rank's collectives go to: the world, or under
// hybrid sharding its node's shard group and its replica group.
struct RankGroups {
  sim::GroupId shard = sim::kWorldGroup;
  sim::GroupId replica = sim::kWorldGroup;
};

sim::Time scaled(sim::Time t, double factor) {
  return factor == 1 ? t
                     : sim::Time::from_ns(static_cast<double>(t.count_ns()) * factor,
                                          "a slowed op's time (model times under faults' slowdown factors)");
}

// Issues iteration g of one rank's loop. The CPU runs ahead of the GPU, so
// the order of issue is the order of each stream; one process group's
// collectives share one NCCL stream, FIFO (docs/fsdp.md#the-step).
class IterationIssuer {
 public:
  IterationIssuer(const DdpJob& job, const FsdpConfig& cfg, const FsdpPlan& plan, const IterationFaults& faults,
                  RankGroups groups, sim::OpSink& sink, int rank, int g)
      : job_(job), cfg_(cfg), plan_(plan), faults_(faults), groups_(groups), sink_(sink), rank_(rank), g_(g),
        gathered_(plan.units.size(), false), pending_(plan.units.size()) {
    for (std::size_t u = 0; u < plan.units.size(); ++u) gathered_[u] = plan.unit_plans[u].gather_bytes == 0;
  }

  // Returns the optimizer step, the op the process waits for. All micro-steps
  // but the last run under no_sync(): no reduction, and SHARD_GRAD_OP keeps
  // its units gathered into the next micro-step.
  sim::OpRef issue() {
    std::optional<sim::OpRef> last;
    const int steps = faults_.micro_steps;
    const sim::Time data_time = scaled(job_.data_load, faults_.data);
    for (int m = 0; m < steps; ++m) {
      sync_ = m == steps - 1;
      // A micro-step's batch is loaded once the previous backward has run (the
      // CPU returns from backward(); the root's pre-forward waits for the
      // compute stream); the root's all-gather is issued once it is loaded.
      next_after_ = sink_.enqueue(rank_, sim::StreamKind::kHost, data_time, label(FsdpTag::kData, g_, m), last);
      if (faults_.skip) return *next_after_;  // `continue` before forward
      forward(m);
      last = backward();
    }
    sim::OpRef out = sink_.enqueue(rank_, sim::StreamKind::kCompute, scaled(job_.model.optimizer, faults_.compute),
                                   label(FsdpTag::kOptimizer, g_), last);
    if (faults_.artifact) {
      out = sink_.enqueue(rank_, sim::StreamKind::kHost, *faults_.artifact, label(FsdpTag::kArtifact, g_), out);
    }
    for (std::size_t k = 0; k < faults_.extra.size(); ++k) {  // e.g. a metric's all-reduce, then .item()
      out = sink_.enqueue_collective(rank_, sim::kWorldGroup, faults_.extra[k],
                                     label(FsdpTag::kExtraCollective, g_, static_cast<int>(k)), out);
    }
    return out;
  }

 private:
  void forward(int micro_step) {
    const std::vector<int> last = last_segment_of(plan_.forward);
    // TORCH_DISTRIBUTED_DEBUG=DETAIL checks the order in FSDP's first iteration only.
    const bool checking = job_.fingerprint && g_ == 0 && micro_step == 0 && plan_.shard_group > 1;
    std::vector<bool> checked(plan_.units.size(), false);
    for (std::size_t i = 0; i < plan_.forward.size(); ++i) {
      const int u = plan_.forward[i].unit;
      if (skipped(u)) continue;
      if (checking && !checked[static_cast<std::size_t>(u)]) {
        checked[static_cast<std::size_t>(u)] = true;
        check_order(u);
      }
      gather(u);
      if (cfg_.forward_prefetch) prefetch_after(plan_.forward, i);
      const sim::OpRef op = compute(FsdpTag::kForward, plan_.forward[i]);
      if (last[static_cast<std::size_t>(u)] == static_cast<int>(i) && plan_.unit_plans[static_cast<std::size_t>(u)].freed_after_forward) {
        free(u, op);
      }
    }
  }

  // Returns the last reduction, or under no_sync the last gradient compute.
  sim::OpRef backward() {
    const std::vector<int> last = last_segment_of(plan_.backward);
    std::optional<sim::OpRef> reduced;
    std::vector<bool> started(plan_.units.size(), false);
    for (std::size_t i = 0; i < plan_.backward.size(); ++i) {
      const int u = plan_.backward[i].unit;
      if (skipped(u)) continue;
      if (!started[static_cast<std::size_t>(u)]) {
        started[static_cast<std::size_t>(u)] = true;
        gather(u);
        if (cfg_.backward_prefetch == BackwardPrefetch::kBackwardPre) prefetch_after(plan_.backward, i);
      }
      const sim::OpRef op = compute(FsdpTag::kBackward, plan_.backward[i]);
      reduced = op;
      if (last[static_cast<std::size_t>(u)] != static_cast<int>(i)) continue;
      // _should_free_in_backward: when syncing, or under a strategy that reshards after forward.
      const bool frees = sync_ || reshards_after_forward(plan_.strategy);
      if (plan_.shard_group > 1 && frees) free(u, op);
      if (cfg_.backward_prefetch == BackwardPrefetch::kBackwardPost) prefetch_after(plan_.backward, i);
      if (!sync_) continue;  // no_sync: the unsharded gradient is kept, nothing is reduced
      const auto& up = plan_.unit_plans[static_cast<std::size_t>(u)];
      const bool sharded = plan_.strategy != ShardingStrategy::kNoShard;
      const sim::Collective c{sharded ? sim::CollectiveKind::kReduceScatter : sim::CollectiveKind::kAllReduce,
                              up.reduce_bytes};
      reduced = sink_.enqueue_collective(rank_, sharded ? groups_.shard : sim::kWorldGroup, c,
                                         label(sharded ? FsdpTag::kReduceScatter : FsdpTag::kAllReduce, g_, u), op);
      if (up.replica_bytes > 0) {  // HSDP: the shard across the replicas, on its own stream
        reduced = sink_.enqueue_collective(rank_, groups_.replica, {sim::CollectiveKind::kAllReduce, up.replica_bytes},
                                           label(FsdpTag::kReplicaAllReduce, g_, u), *reduced);
      }
    }
    return *reduced;
  }

  // All-gathers unit u unless it is gathered; the rate limiter first waits
  // for the oldest free when two are queued (_FreeEventQueue).
  void gather(int u) {
    const auto ui = static_cast<std::size_t>(u);
    if (gathered_[ui]) return;
    std::optional<sim::OpRef> after = next_after_;
    next_after_.reset();
    if (cfg_.limit_all_gathers && frees_.size() >= kMaxInflightAllGathers) {
      // A batch loaded after the previous backward comes after every free
      // (a compute op) already: it is the later of the two.
      if (!after) after = frees_.front();
      frees_.pop_front();
    }
    pending_[ui] = sink_.enqueue_collective(rank_, groups_.shard,
                                            {sim::CollectiveKind::kAllGather, plan_.unit_plans[ui].gather_bytes},
                                            label(FsdpTag::kAllGather, g_, u), after);
    gathered_[ui] = true;
  }

  // _ExecOrderData._check_order at unit u's pre-forward, first iteration:
  // two all-gathers on the shard group, of each rank's handle count and of
  // its handle indices (int32), which the CPU waits for (.cpu()) before it
  // all-gathers the unit. Ranks at different units fail at the second
  // (FsdpProgram::comm's reader, models::collective_library).
  void check_order(int u) {
    std::optional<sim::OpRef> after = next_after_;
    if (!after && cfg_.limit_all_gathers && frees_.size() >= kMaxInflightAllGathers) after = frees_.front();
    const std::int64_t bytes = 4 * plan_.shard_group;
    const sim::OpRef count = sink_.enqueue_collective(rank_, groups_.shard, {sim::CollectiveKind::kAllGather, bytes},
                                                      label(FsdpTag::kOrderCount, g_, u), after);
    next_after_ = sink_.enqueue_collective(rank_, groups_.shard, {sim::CollectiveKind::kAllGather, bytes},
                                           label(FsdpTag::kOrderCheck, g_, u), count);
  }

  // The prefetch of the next unit (in `order`'s sequence of units) after segment i.
  void prefetch_after(const std::vector<FsdpSegment>& order, std::size_t i) {
    const int u = order[i].unit;
    for (std::size_t j = i + 1; j < order.size(); ++j) {
      if (order[j].unit != u && !skipped(order[j].unit)) {
        gather(order[j].unit);
        return;
      }
    }
  }

  sim::OpRef compute(FsdpTag tag, const FsdpSegment& s) {
    const auto ui = static_cast<std::size_t>(s.unit);
    std::optional<sim::OpRef> after = pending_[ui];
    pending_[ui].reset();
    if (!after) std::swap(after, next_after_);  // nothing gathered first (NO_SHARD): the batch
    return sink_.enqueue(rank_, sim::StreamKind::kCompute, scaled(s.time, faults_.compute), label(tag, g_, s.unit), after);
  }

  void free(int u, sim::OpRef op) {
    gathered_[static_cast<std::size_t>(u)] = false;
    if (cfg_.limit_all_gathers) frees_.push_back(op);
  }

  bool skipped(int u) const { return !faults_.skipped.empty() && faults_.skipped[static_cast<std::size_t>(u)]; }

  std::vector<int> last_segment_of(const std::vector<FsdpSegment>& segments) const {
    std::vector<int> last(plan_.units.size(), -1);
    for (std::size_t i = 0; i < segments.size(); ++i) last[static_cast<std::size_t>(segments[i].unit)] = static_cast<int>(i);
    return last;
  }

  static constexpr std::size_t kMaxInflightAllGathers = 2;  // _FreeEventQueue's "empirically chosen" 2

  const DdpJob& job_;
  const FsdpConfig& cfg_;
  const FsdpPlan& plan_;
  const IterationFaults& faults_;
  RankGroups groups_;
  sim::OpSink& sink_;
  int rank_, g_;
  std::vector<bool> gathered_;
  std::vector<std::optional<sim::OpRef>> pending_;  // an all-gather the unit's next compute waits for
  std::deque<sim::OpRef> frees_;                    // the limiter's queue: the ops after which units were freed
  std::optional<sim::OpRef> next_after_;
  bool sync_ = true;
};

// One rank's loop: each iteration issued when the previous one's optimizer
// step ends; then the final barrier.
class RankProcess final : public sim::Process {
 public:
  RankProcess(const DdpJob& job, const FsdpConfig& cfg, const FsdpPlan& plan, int rank, Progress& progress,
              RankGroups groups = {})
      : job_(job), cfg_(cfg), plan_(plan), rank_(rank), progress_(progress), groups_(groups) {}

  void start(sim::Engine& e) {
    schedule_timed_faults(job_.faults, rank_, e, status());
    step(e, 0);
  }

  void on_wake(sim::Engine& e, std::uint64_t token) override {
    const auto g = static_cast<int>(token);
    if (g < job_.total_iterations()) progress_.tally(e.worker(), g, e.now());
    if (g + 1 <= last_step()) {
      step(e, g + 1);
    } else {
      status().finished = true;
    }
  }

  // Every step as a program every rank runs (levelized evaluation).
  sim::UniformProgram record() {
    sim::Recorder r;
    std::int32_t previous = -1;
    for (int k = 0; k <= last_step(); ++k) {
      const auto last = static_cast<std::int32_t>(issue(r, k).index);
      r.end_step(previous, last);
      previous = last;
    }
    return std::move(r).program();
  }

  int last_step() const { return job_.total_iterations() - (job_.final_barrier ? 0 : 1); }

 private:
  RankStatus& status() { return progress_.ranks[static_cast<std::size_t>(rank_)]; }

  // Issues step k, unless a crash fault kills the rank at its start.
  void step(sim::Engine& e, int k) {
    for (const Fault& f : job_.faults) {
      if (f.as<fault::Crash>() && f.applies(rank_, k)) {
        status().faults.insert(FaultType::kCrash);
        e.crash(rank_, fmt::format("killed at the start of iteration {} (fault: crash)", k));
        return;
      }
    }
    e.wake_when_done(issue(e, k), *this, static_cast<std::uint64_t>(k));
  }

  sim::OpRef issue(sim::OpSink& s, int k) {
    if (k == job_.total_iterations()) {
      return s.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kBarrier, 0},
                                  label(FsdpTag::kFinalBarrier, k));
    }
    ++status().iterations_run;
    const IterationFaults faults = faults_in(k);
    if (job_.fingerprint && plan_.shard_group > 1) {
      if (k == 0) first_order_ = forward_units(faults);
      else if (status().warning_iteration < 0) warn_on_order(k, faults);
    }
    return IterationIssuer(job_, cfg_, plan_, faults, groups_, s, rank_, k).issue();
  }

  // The units in the order their forward starts, as FSDP records
  // handles_pre_forward_order: the first segment of each unit not skipped.
  std::vector<int> forward_units(const IterationFaults& faults) const {
    std::vector<int> out;
    std::vector<bool> seen(plan_.units.size(), false);
    for (const FsdpSegment& s : plan_.forward) {
      const auto u = static_cast<std::size_t>(s.unit);
      if (seen[u] || (!faults.skipped.empty() && faults.skipped[u])) continue;
      seen[u] = true;
      out.push_back(s.unit);
    }
    return out;
  }

  // _ExecOrderData._check_order after the first iteration: each unit's
  // pre-forward is compared with the first iteration's order, on the rank
  // alone (no collective); the first difference warns and checking stops.
  // A unit missing at the end is never compared, so it does not warn.
  void warn_on_order(int k, const IterationFaults& faults) {
    const std::vector<int> now = forward_units(faults);
    for (std::size_t i = 0; i < now.size(); ++i) {
      if (i < first_order_.size() && now[i] == first_order_[i]) continue;
      const std::string got = fmt::format("[{}]", unit_name(plan_.units[static_cast<std::size_t>(now[i])]));
      const std::string prefix =
          i < first_order_.size()
              ? fmt::format("Expected to all-gather for [{}] but trying to all-gather parameters for ",
                            unit_name(plan_.units[static_cast<std::size_t>(first_order_[i])]))
              : std::string("Expected to not all-gather any more parameters in the forward but trying to all-gather "
                            "parameters for ");
      status().warning_iteration = k;
      status().warning = fmt::format(
          "UserWarning: Forward order differs from that of the first iteration on rank {}. Collectives are unchecked "
          "and may give incorrect results or hang.\n{}{}",
          rank_ % plan_.shard_group, prefix, got);
      return;
    }
  }

  // This rank's faults in iteration g (a crash is step's; a slow link prices collectives).
  IterationFaults faults_in(int g) {
    IterationFaults out;
    out.micro_steps = cfg_.gradient_accumulation;
    for (const Fault& f : job_.faults) {
      if (!f.applies(rank_, g)) continue;
      if (const auto* slow = f.as<fault::Slowdown>()) {
        (slow->data ? out.data : out.compute) *= slow->factor;
      } else if (f.as<fault::SkipIteration>()) {
        out.skip = true;
      } else if (const auto* skip = f.as<fault::SkipUnit>()) {
        if (out.skipped.empty()) out.skipped.assign(plan_.units.size(), false);
        for (std::size_t u = 0; u < plan_.units.size(); ++u) {  // the unit and every unit inside it
          for (int a = static_cast<int>(u); a >= 0 && !out.skipped[u]; a = plan_.units[static_cast<std::size_t>(a)].parent) {
            out.skipped[u] = a == skip->unit;
          }
        }
      } else if (const auto* micro = f.as<fault::MicroBatches>()) {
        out.micro_steps = micro->count;
      } else if (const auto* extra = f.as<fault::ExtraCollective>()) {
        out.extra.push_back(extra->collective);
      } else if (const auto* artifact = f.as<fault::Rank0Artifact>()) {
        out.artifact = out.artifact.value_or(sim::Time{}) + artifact->duration;
      } else {
        continue;
      }
      status().faults.insert(f.type());
    }
    return out;
  }

  const DdpJob& job_;
  const FsdpConfig& cfg_;
  const FsdpPlan& plan_;
  int rank_;
  Progress& progress_;
  RankGroups groups_;
  std::vector<int> first_order_;  // debug.fingerprint: the first iteration's forward order
};

class FsdpEvaluation final : public Evaluation {
 public:
  FsdpEvaluation(const DdpJob& job, const FsdpConfig& cfg, int simulated, int world_size)
      : job_(job),
        cfg_(cfg),
        plan_(plan_fsdp(job, cfg, world_size, job.cluster ? job.cluster->gpus_per_node : world_size)),
        accounting_(simulated, job.warmup_iterations, cfg.gradient_accumulation, fsdp_namer(plan_)),
        simulated_(simulated),
        world_size_(world_size) {}

  sim::Observer& accounting() override { return accounting_; }

  void start(sim::Engine& engine) override {
    progress_.emplace(simulated_, job_.total_iterations(), engine.workers());
    const std::vector<RankGroups> groups = add_groups(engine);
    for (int r = 0; r < simulated_; ++r) {
      ranks_.push_back(std::make_unique<RankProcess>(job_, cfg_, plan_, r, *progress_, groups[static_cast<std::size_t>(r)]));
    }
    for (auto& p : ranks_) p->start(engine);
  }

  RunResult finish(const sim::RunSummary& summary) override {
    progress_->gather();
    return accounting_.result(job_, *progress_, summary, simulated_, world_size_);
  }

  void price_groups_with(CollectiveTimer* timer) override { timer_ = timer; }

  // Hybrid sharding: a shard group per node (on the comm stream, priced as
  // the evaluator prices a node) and a replica group per local GPU index
  // (its own NCCL stream, here the host's, idle in backward). Every rank is
  // simulated (not symmetric). The replica groups share each node's NICs:
  // each all-reduce progresses at the rate the replica groups then in flight
  // leave it (ReplicaPricing: the NIC's fair share, or on the SimGrid engine
  // the groups in flight run together on the platform). On PCIe nodes under
  // SimGrid the shard groups join them: a GPU's PCIe link carries both rings.
  std::vector<RankGroups> add_groups(sim::Engine& engine) {
    std::vector<RankGroups> out(static_cast<std::size_t>(simulated_));
    if (plan_.replicas <= 1) return out;
    const int per_node = plan_.shard_group;
    std::vector<std::vector<int>> shards;
    for (int node = 0; node < plan_.replicas; ++node) {
      std::vector<int> members(static_cast<std::size_t>(per_node));
      for (int i = 0; i < per_node; ++i) members[static_cast<std::size_t>(i)] = node * per_node + i;
      shards.push_back(std::move(members));
    }
    const bool simgrid = timer_ != nullptr && timer_->engine() == "simgrid";
    const bool together = simgrid && job_.cluster && nic_routes_cross_gpu_links(*job_.cluster);
    const std::vector<SlowLink> slow = slow_links(job_);
    for (std::size_t i = 0; i < shards.size() && !together; ++i) {
      // Priced as ranks 0 .. per_node-1 (the nodes are alike), with the
      // slow links of this node's ranks, renumbered so.
      const sim::GroupId id =
          slow.empty() ? engine.add_group(shards[i])
                       : engine.add_group(shards[i], sim::StreamKind::kComm,
                                          [timer = timer_, mine = slow_links_in(slow, shards[i])](
                                              const sim::Collective& c, int n) { return timer->time(c, n, mine); });
      for (int r : shards[i]) out[static_cast<std::size_t>(r)].shard = id;
    }
    std::vector<std::vector<int>> groups = together ? shards : std::vector<std::vector<int>>{};
    std::vector<sim::StreamKind> streams(groups.size(), sim::StreamKind::kComm);
    for (std::vector<int>& r : replica_groups(world_size_, per_node)) {
      groups.push_back(std::move(r));
      streams.push_back(sim::StreamKind::kHost);
    }
    replica_pricing_ = std::make_unique<ReplicaPricing>(job_, groups, simgrid ? timer_ : nullptr);
    const std::vector<sim::GroupId> ids =
        engine.add_sharing_groups(groups, streams,
                                  [pricing = replica_pricing_.get()](const sim::Collective& c, int group,
                                                                     const std::vector<sim::InFlight>& in_flight) {
                                    return pricing->time(c, group, in_flight);
                                  });
    const std::size_t first_replica = together ? shards.size() : 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (int r : groups[i]) {
        RankGroups& mine = out[static_cast<std::size_t>(r)];
        (i < first_replica ? mine.shard : mine.replica) = ids[i];
      }
    }
    return out;
  }

  sim::UniformProgram record() override {
    recording_.emplace(1, job_.total_iterations(), 1);
    recorded_ = std::make_unique<RankProcess>(job_, cfg_, plan_, 0, *recording_);
    return recorded_->record();
  }

  sim::Time per_rank(int, const sim::ProgramOp&) const override { return {}; }

  RunResult finish_levelized(const sim::LevelizedRun& run) override {
    progress_.emplace(simulated_, job_.total_iterations(), 1);
    for (RankStatus& s : progress_->ranks) {
      s = recording_->ranks.front();
      s.finished = true;
    }
    // Step k is iteration k (there is no construction step).
    for (int g = 0; g < job_.total_iterations(); ++g) {
      const auto ug = static_cast<std::size_t>(g);
      progress_->all.iteration_end[ug] = run.step_end[ug];
      progress_->all.finished_ranks[ug] = simulated_;
    }
    return accounting_.result(job_, *progress_, run.summary, simulated_, world_size_);
  }

 private:
  const DdpJob& job_;
  const FsdpConfig& cfg_;
  const FsdpPlan plan_;
  Accounting accounting_;
  int simulated_, world_size_;
  std::optional<Progress> progress_;
  std::vector<std::unique_ptr<RankProcess>> ranks_;
  std::optional<Progress> recording_;
  std::unique_ptr<RankProcess> recorded_;
  CollectiveTimer* timer_ = nullptr;  // the evaluator's (price_groups_with), not owned
  std::unique_ptr<ReplicaPricing> replica_pricing_;
};

}  // namespace
}  // namespace fsdp

std::vector<std::vector<int>> replica_groups(int world_size, int per_node) {
  std::vector<std::vector<int>> out;
  if (per_node < 1 || world_size <= per_node) return out;
  const int nodes = world_size / per_node;
  for (int i = 0; i < per_node; ++i) {
    std::vector<int> members;
    for (int node = 0; node < nodes; ++node) members.push_back(node * per_node + i);
    out.push_back(std::move(members));
  }
  return out;
}

std::string fsdp_op_name(sim::OpLabel label) {
  switch (static_cast<FsdpTag>(label.tag)) {
    case FsdpTag::kData: return "data";
    case FsdpTag::kForward: return fmt::format("forward unit {}", label.index);
    case FsdpTag::kBackward: return fmt::format("backward unit {}", label.index);
    case FsdpTag::kAllGather: return fmt::format("all_gather unit {}", label.index);
    case FsdpTag::kReduceScatter: return fmt::format("reduce_scatter unit {}", label.index);
    case FsdpTag::kAllReduce: return fmt::format("all_reduce unit {}", label.index);
    case FsdpTag::kOptimizer: return "optimizer";
    case FsdpTag::kFinalBarrier: return "barrier";
    case FsdpTag::kArtifact: return "rank 0 artifact";
    case FsdpTag::kExtraCollective: return fmt::format("extra collective {}", label.index);
    case FsdpTag::kReplicaAllReduce: return fmt::format("all_reduce replicas unit {}", label.index);
    case FsdpTag::kOrderCount: return fmt::format("forward-order count unit {}", label.index);
    case FsdpTag::kOrderCheck: return fmt::format("forward-order check unit {}", label.index);
  }
  return "";
}

ProgramTraits FsdpProgram::traits() const {
  // Faults as DDP's (models/faults.hpp); no straggler model under FSDP (the
  // loader refuses one). Hybrid sharding's groups: engine, time order only.
  const bool contended = job_.compute_slowdown > 0 || job_.comm_slowdown > 0;
  const bool hybrid = is_hybrid(cfg_.sharding);
  return {symmetric(job_) && !hybrid, uniform_program(job_) && !contended && !hybrid,
          keeps_lockstep(job_) && !contended && !hybrid, false};
}

CommSettings FsdpProgram::comm() const {
  // What the forward-order check all-gathers: the unit's handle index, named as the unit's module.
  std::vector<std::string> units;
  for (const FsdpUnit& u : build_units(job_.model, cfg_.wrap)) units.push_back(unit_name(u));
  ContentReader reads = [units](sim::OpLabel l) -> std::optional<std::string> {
    if (l.tag != static_cast<std::uint32_t>(FsdpTag::kOrderCheck)) return std::nullopt;
    return fmt::format("[{}]", units.at(static_cast<std::size_t>(l.index)));
  };
  return {job_.backend, job_.watchdog_timeout, job_.fingerprint ? ddp::kFingerprintBytes : 0, job_.compute_slowdown,
          job_.comm_slowdown, std::move(reads)};
}

std::vector<SlowLink> FsdpProgram::slow_links() const { return models::slow_links(job_); }

std::vector<LinkSlowdown> FsdpProgram::link_slowdowns() const { return models::link_slowdowns(job_); }

std::unique_ptr<CollectiveTimer> FsdpProgram::analytic_timer(int world_size) const {
  return models::analytic_timer(job_, world_size);
}

std::unique_ptr<Evaluation> FsdpProgram::evaluation(int simulated, int world_size, std::uint64_t) const {
  if (job_.iterations < 1 || job_.warmup_iterations >= job_.total_iterations()) {
    throw std::invalid_argument("warm-up must leave at least one measured iteration");
  }
  if (cfg_.gradient_accumulation < 1) throw std::invalid_argument("gradient accumulation must be at least 1");
  return std::make_unique<fsdp::FsdpEvaluation>(job_, cfg_, simulated, world_size);
}

}  // namespace ddpsim::models
