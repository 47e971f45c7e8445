// The DDP training loop as a TrainingProgram: each rank's process
// (RankProgram) issues its operations to a sim::OpSink, and an Evaluation
// wires it to whichever evaluator exec/ chose.

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "models/ddp_run.hpp"
#include "sim/levelized.hpp"

namespace ddpsim::models {

namespace ddp {
namespace {

// The training loop of one rank: a synchronous script, each iteration
// issued when the previous one's last operation ends.
class RankProgram final : public sim::Process {
  struct Entry {
    int g;  // global iteration (for a shadow: the others' iteration)
    enum Kind { kIteration, kShadow, kJoinExit } kind;
  };

 public:
  RankProgram(const Plan& plan, int rank, int world_size, std::uint64_t seed, Progress& progress)
      : plan_(plan), job_(plan.job), rank_(rank), world_size_(world_size), seed_(seed), progress_(progress) {
    // The iterations this rank's loop runs: every epoch, less its missing batches.
    const int fewer = fewer_batches(job_.faults, rank);
    if (fewer > 0) status().faults.insert(FaultType::kUnevenBatches);
    // With Join, a rank out of data shadows the others' remaining iterations,
    // then every rank's Join exit all-reduces the count of ranks not joined.
    runs_ = job_.iterations - fewer;
    most_ = job_.iterations - plan.fewest_missing;
    iterations_ = std::max(0, runs_);
    shadows_per_epoch_ = job_.join ? std::max(0, most_ - runs_) : 0;
    per_epoch_ = iterations_ + shadows_per_epoch_ + (job_.join ? 1 : 0);
    loop_size_ = static_cast<std::size_t>(job_.epochs) * static_cast<std::size_t>(per_epoch_);
  }

  // DistributedDataParallel's constructor: parameters and buffers from rank 0.
  // Training starts once it returns.
  void construct(sim::Engine& e) {
    broadcast_initial_state(e);
    schedule_timed_faults(job_.faults, rank_, e, status());
  }

  void start(sim::Engine& e) { step(e, 0); }

  // What this program issues, for a job whose ranks all issue the same
  // (uniform_program): construction, each step of the loop, the barrier.
  sim::UniformProgram record() {
    sim::Recorder r;
    broadcast_initial_state(r);
    r.end_step(-1, -1);
    std::int32_t previous = -1;  // the first step is issued at time zero, with construction
    for (std::size_t k = 0; k < loop_size_ + (job_.final_barrier ? 1 : 0); ++k) {
      const auto last = static_cast<std::int32_t>(issue(r, k).index);
      r.end_step(previous, last);
      previous = last;
    }
    return std::move(r).program();
  }
  std::size_t loop_size() const { return loop_size_; }
  // The global iteration loop step k finishes (tallied), if it is one.
  std::optional<int> tallied(std::size_t k) const {
    const Entry entry = loop(k);
    if (entry.kind == Entry::kJoinExit) return std::nullopt;
    return entry.g;
  }
  const RankStatus& recorded_status() { return status(); }

  void on_wake(sim::Engine& e, std::uint64_t token) override {
    const auto k = static_cast<std::size_t>(token);
    if (k < loop_size_) {
      // A shadowed iteration counts as done for this rank: it joined.
      const Entry entry = loop(k);
      if (entry.kind != Entry::kJoinExit) {
        const auto g = static_cast<std::size_t>(entry.g);
        Progress::Tally& tally = progress_.by_worker[static_cast<std::size_t>(e.worker())];
        tally.iteration_end[g] = sim::max(tally.iteration_end[g], e.now());
        ++tally.finished_ranks[g];
      }
      step(e, k + 1);
    } else {
      status().finished = true;
    }
  }

 private:
  RankStatus& status() { return progress_.ranks[static_cast<std::size_t>(rank_)]; }

  bool fires(FaultType type, int g) {
    for (const Fault& f : job_.faults) {
      if (f.type() == type && f.applies(rank_, g)) {
        status().faults.insert(type);
        return true;
      }
    }
    return false;
  }

  // DistributedDataParallel's constructor: _verify_param_shape_across_processes (the parameter
  // count all-gathered, one int64 a rank; then every parameter's sizes and strides broadcast from
  // rank 0, int64), then _sync_module_states broadcasts the parameters and buffers.
  void broadcast_initial_state(sim::OpSink& e) {
    std::int64_t dims = 0;
    for (const Tensor& t : job_.model.parameters) dims += 2 * static_cast<std::int64_t>(t.shape.size());
    constructed_ = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kAllGather, 8 * static_cast<std::int64_t>(world_size_)},
                                        label(DdpTag::kVerifyParams, 0, 0));
    if (dims > 0) {
      constructed_ = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kBroadcast, 8 * dims},
                                          label(DdpTag::kVerifyParams, 0, 1));
    }
    std::int64_t bytes = plan_.parameter_bytes + plan_.buffer_bytes;
    for (int chunk = 0; bytes > 0; ++chunk, bytes -= kInitBroadcastChunk) {
      constructed_ = e.enqueue_collective(rank_, sim::kWorldGroup,
                                          {sim::CollectiveKind::kBroadcast, std::min(bytes, kInitBroadcastChunk)},
                                          label(DdpTag::kInitBroadcast, 0, chunk));
    }
  }

  // Runs the k-th step of this rank's loop, or what follows the loop.
  void step(sim::Engine& e, std::size_t k) {
    if (k == loop_size_ && !job_.final_barrier) {
      status().finished = true;
      return;
    }
    if (k < loop_size_) {
      const Entry entry = loop(k);
      if (entry.kind == Entry::kIteration && !may_run(e, entry.g)) return;
    }
    e.wake_when_done(issue(e, k), *this, k);
  }

  // Issues the k-th step (an iteration, a Join step, the final barrier);
  // returns the op the process then waits for.
  sim::OpRef issue(sim::OpSink& e, std::size_t k) {
    if (k == loop_size_) {
      return e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kBarrier, 0},
                                  label(DdpTag::kFinalBarrier, job_.total_iterations()));
    }
    const Entry entry = loop(k);
    if (entry.kind != Entry::kIteration) return join_step(e, entry);
    ++status().iterations_run;
    return run_iteration(e, entry.g);
  }

  // Whether iteration g starts: the rank dies instead at a pending
  // reduction error or a crash fault.
  bool may_run(sim::Engine& e, int g) {
    if (!pending_unused_.empty()) {
      // PyTorch checks at the next forward that the previous reduction finished.
      std::string indices;
      for (int p : pending_unused_) indices += (indices.empty() ? "" : " ") + std::to_string(p);
      e.crash(rank_, fmt::format(
                         "RuntimeError: Expected to have finished reduction in the prior iteration before starting a "
                         "new one. This error indicates that your module has parameters that were not used in "
                         "producing loss. You can enable unused parameter detection by passing the keyword argument "
                         "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`. Parameter "
                         "indices which did not receive grad for rank {}: {}",
                         rank_, indices));
      return false;
    }
    if (fires(FaultType::kCrash, g)) {
      e.crash(rank_, fmt::format("killed at the start of iteration {} (fault: crash)", g));
      return false;
    }
    return true;
  }

  sim::OpRef join_count(sim::OpSink& e, int g, std::optional<sim::OpRef> after) {
    return e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kAllReduce, 4},
                                label(DdpTag::kJoinCount, g), after);
  }

  // Join's hooks for a rank out of data: the count, then the collectives the
  // others' iteration runs (buffer broadcast, one zero-filled all-reduce per bucket).
  sim::OpRef join_step(sim::OpSink& e, const Entry& entry) {
    sim::OpRef last = join_count(e, entry.g, std::nullopt);
    if (entry.kind == Entry::kJoinExit) return last;  // every rank's exit: not a shadow
    ++shadows_;
    if (job_.ddp.broadcast_buffers && plan_.buffer_bytes > 0) {
      last = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kBroadcast, plan_.buffer_bytes},
                                  label(DdpTag::kShadowBroadcast, entry.g), last);
      ++shadows_;
    }
    const std::vector<Bucket>& buckets = rebuilt_ ? *plan_.rebuilt : plan_.initial;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      last = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kAllReduce, buckets[b].bytes},
                                  label(DdpTag::kShadowAllReduce, entry.g, static_cast<int>(b)), last);
      ++shadows_;
    }
    progress_.ranks[static_cast<std::size_t>(rank_)].shadow_collectives = shadows_;
    return last;
  }

  double slowdown(int g, bool data) {
    double factor = 1;
    for (const Fault& f : job_.faults) {
      const auto* slow = f.as<fault::Slowdown>();
      if (slow && slow->data == data && f.applies(rank_, g)) {
        status().faults.insert(FaultType::kSlowdown);
        factor *= slow->factor;
      }
    }
    return factor;
  }

  static sim::Time scaled(sim::Time t, double factor) {
    return factor == 1 ? t
                       : sim::Time::from_ns(static_cast<double>(t.count_ns()) * factor,
                                            "a slowed op's time (model times under faults' slowdown factors)");
  }

  // This rank's straggler delay in iteration g, on its first backward
  // segment; a recording marks that op as per-rank instead (sim::OpSink::per_rank).
  sim::Time straggle(sim::OpSink& e, int g) const {
    return e.per_rank(straggler_delay(job_.straggler, rank_, g, world_size_, seed_));
  }

  // What a piece of an iteration issued last: on the compute stream, and
  // on the communication stream if anything.
  struct Issued {
    sim::OpRef compute;
    std::optional<sim::OpRef> comm;
  };

  // The syncing backward of iteration g: find_unused_parameters' graph
  // traversal, backward cut at bucket readiness, each ready bucket's
  // all-reduce launched in index order, find_unused_parameters' used-map
  // all-reduce; an unused parameter without find_unused_parameters raises
  // at the next forward.
  Issued syncing_backward(sim::OpSink& e, int g, double compute_factor) {
    using sim::StreamKind;
    const ModelSpec& m = job_.model;
    const DdpConfig& ddp = job_.ddp;
    if (ddp.find_unused_parameters && !ddp.static_graph) {
      const auto tensors = static_cast<std::int64_t>(m.parameters.size());
      e.enqueue(rank_, StreamKind::kCompute, ddp.traversal_per_tensor * tensors,
                label(DdpTag::kTraversal, g));
    }
    std::vector<int> unused = ddp.unused_parameters;
    for (const Fault& f : job_.faults) {
      const auto* u = f.as<fault::UnusedParameters>();
      if (u && f.applies(rank_, g)) {
        status().faults.insert(FaultType::kUnusedParameters);
        unused.insert(unused.end(), u->parameters.begin(), u->parameters.end());
      }
    }
    std::sort(unused.begin(), unused.end());
    unused.erase(std::unique(unused.begin(), unused.end()), unused.end());
    const bool use_rebuilt = rebuilt_;
    const BackwardPlan& bp = plan_.backward_with_unused(use_rebuilt, unused);
    const std::vector<Bucket>& buckets = use_rebuilt ? *plan_.rebuilt : plan_.initial;
    const sim::Time slow = straggle(e, g);
    const CommHook& hook = ddp.comm_hook;
    const bool compress = hook.compresses(syncing_backwards_);
    const bool first_compressed = compress && hook.powersgd_family() && syncing_backwards_ == hook.powersgd.start_powerSGD_iter;
    const sim::OpRef backward_last = backward_pieces(e, g, bp, slow, compute_factor, use_rebuilt, compress, first_compressed);
    Issued out{backward_last, std::nullopt};
    // Buckets launch strictly in index order: the comm stream is FIFO.
    std::vector<sim::OpRef>& reduced = reduced_;
    reduced.clear();
    for (int b = 0; b < bp.launchable; ++b) {
      const auto ub = static_cast<std::size_t>(b);
      if (compress) {
        out.comm = hook_chain(e, plan_.hook(use_rebuilt, first_compressed, ub), g, b, launch_[ub], compute_factor);
      } else {
        out.comm = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kAllReduce, buckets[ub].bytes},
                                         label(DdpTag::kAllReduce, g, b), launch_[ub]);
      }
      reduced.push_back(*out.comm);
    }
    // finalize_backward copies each reduced bucket back into the gradients, in
    // bucket order, each once its all-reduce is done (ddp.bucket_copy_GBps).
    if (ddp.bucket_copy_bytes_per_s > 0) {
      for (std::size_t b = 0; b < reduced.size(); ++b) {
        out.compute = e.enqueue(rank_, StreamKind::kCompute, scaled(ddp.bucket_copy(buckets[b].bytes), compute_factor),
                                label(DdpTag::kBucketCopyOut, g, static_cast<int>(b)), reduced[b]);
      }
    }
    if (ddp.find_unused_parameters && !ddp.static_graph) {
      out.comm = e.enqueue_collective(rank_, sim::kWorldGroup,
                                       {sim::CollectiveKind::kAllReduce, 4 * static_cast<std::int64_t>(m.parameters.size())},
                                       label(DdpTag::kUsedMap, g), segment_.back());
    }
    ++syncing_backwards_;
    if (!unused.empty() && !ddp.find_unused_parameters && !ddp.static_graph) pending_unused_ = unused;
    return out;
  }

  // Backward's pieces on the compute stream. A bucket's hook runs on the
  // backward thread once it and every bucket before it are ready (the
  // Reducer launches in index order): its work there follows the piece that
  // made the last of them ready. Fills launch_ (what each bucket's reduction
  // waits for); returns the last compute op.
  sim::OpRef backward_pieces(sim::OpSink& e, int g, const BackwardPlan& bp, sim::Time slow, double compute_factor,
                             bool use_rebuilt, bool compress, bool first_compressed) {
    using sim::StreamKind;
    std::vector<sim::OpRef>& segment = segment_;
    segment.clear();
    launch_.clear();
    int next = 0, launch_segment = -1;
    std::optional<sim::OpRef> last;
    for (std::size_t s = 0; s < bp.segments.size(); ++s) {
      segment.push_back(e.enqueue(rank_, StreamKind::kCompute,
                                  scaled(bp.segments[s], compute_factor) + (s == 0 ? slow : sim::Time{}),
                                  label(DdpTag::kBackward, g, static_cast<int>(s))));
      last = segment.back();
      for (; next < bp.launchable; ++next) {
        const auto ub = static_cast<std::size_t>(next);
        launch_segment = std::max(launch_segment, bp.bucket_ready_segment[ub]);
        if (launch_segment > static_cast<int>(s)) break;
        launch_.push_back(segment[static_cast<std::size_t>(launch_segment)]);
        if (!compress) continue;
        const sim::Time at_hook = plan_.hook(use_rebuilt, first_compressed, ub).at_hook;
        if (at_hook > sim::Time{}) {
          launch_.back() = e.enqueue(rank_, StreamKind::kCompute, scaled(at_hook, compute_factor),
                                     label(DdpTag::kHookCompute, g, next));
          last = launch_.back();
        }
      }
    }
    return *last;
  }

  // A bucket's comm hook after its work at the hook (`launched`): its
  // all-reduces and the callbacks between them, in order, on the
  // communication stream; returns the last.
  sim::OpRef hook_chain(sim::OpSink& e, const BucketHookPlan& plan, int g, int b, sim::OpRef launched, double compute_factor) {
    std::optional<sim::OpRef> last = launched;
    std::uint32_t reduces = 0, callbacks = 0;
    const auto index = [b](std::uint32_t k) { return static_cast<int>(static_cast<std::uint32_t>(b) * kHookStages + k); };
    for (const HookStage& stage : plan.chain) {
      if (stage.collective) {
        last = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kAllReduce, stage.bytes},
                                    label(DdpTag::kHookAllReduce, g, index(reduces++)), last);
      } else {
        last = e.enqueue(rank_, sim::StreamKind::kComm, scaled(stage.time, compute_factor),
                         label(DdpTag::kHookCallback, g, index(callbacks++)), last);
      }
    }
    return *last;
  }

  // After iteration g's optimizer step `last`: rank 0's artifacts and extra
  // collectives the faults add; returns what the process then waits for.
  sim::OpRef after_step(sim::OpSink& e, int g, sim::OpRef last) {
    for (const Fault& f : job_.faults) {
      if (!f.applies(rank_, g)) continue;
      if (const auto* artifact = f.as<fault::Rank0Artifact>()) {
        status().faults.insert(FaultType::kRank0Artifact);
        last = e.enqueue(rank_, sim::StreamKind::kHost, artifact->duration, label(DdpTag::kArtifact, g), last);
      }
      if (const auto* extra = f.as<fault::ExtraCollective>()) {
        status().faults.insert(FaultType::kExtraCollective);
        // e.g. dist.all_reduce(loss) then loss.item() for a log line: the host waits for it.
        last = e.enqueue_collective(rank_, sim::kWorldGroup, extra->collective, label(DdpTag::kExtraCollective, g), last);
      }
    }
    return last;
  }

  // Issues iteration g; returns its last operation.
  sim::OpRef run_iteration(sim::OpSink& e, int g) {
    using sim::StreamKind;
    const ModelSpec& m = job_.model;
    const DdpConfig& ddp = job_.ddp;
    const int steps = ddp.gradient_accumulation;
    const double compute_factor = slowdown(g, false);
    const sim::Time data_time = scaled(job_.data_load, slowdown(g, true));
    std::optional<sim::OpRef> last_comm;
    std::optional<sim::OpRef> last_compute;
    for (int micro = 0; micro < steps; ++micro) {
      const bool sync = micro == steps - 1;
      sim::OpRef before_forward = e.enqueue(rank_, StreamKind::kHost, data_time, label(DdpTag::kData, g, micro),
                                            first_forward_ ? constructed_ : std::nullopt);
      first_forward_ = false;
      // Join: each forward of a rank with data all-reduces the count of such ranks.
      if (job_.join && micro == 0) before_forward = join_count(e, g, before_forward);
      if (micro == 0 && fires(FaultType::kSkipIteration, g)) return before_forward;  // `continue` before forward
      if (micro == 0 && plan_.rebuild_at && !rebuilt_ && syncing_backwards_ >= (ddp.static_graph ? 2 : 1)) {
        // sync_bucket_indices: the rebuilt index list with the bucket count (P + 1 int32), then the
        // bucket sizes (B int32), from rank 0.
        rebuilt_ = true;
        const std::int64_t sizes[2] = {4 * (static_cast<std::int64_t>(m.parameters.size()) + 1),
                                       4 * static_cast<std::int64_t>(plan_.rebuilt->size())};
        for (int k = 0; k < 2; ++k) {
          before_forward = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kBroadcast, sizes[k]},
                                                label(DdpTag::kRebuildBroadcast, g, k), before_forward);
        }
      }
      // The forward after a no_sync() forward skips the buffer broadcast.
      if (micro == 0 && ddp.broadcast_buffers && plan_.buffer_bytes > 0) {
        before_forward = e.enqueue_collective(rank_, sim::kWorldGroup,
                                              {sim::CollectiveKind::kBroadcast, plan_.buffer_bytes},
                                              label(DdpTag::kBufferBroadcast, g), before_forward);
      }
      last_compute = e.enqueue(rank_, StreamKind::kCompute, scaled(plan_.forward_total, compute_factor),
                               label(DdpTag::kForward, g, micro), before_forward);
      if (!sync) {
        last_compute = e.enqueue(rank_, StreamKind::kCompute, scaled(plan_.backward_total, compute_factor),
                                 label(DdpTag::kLocalBackward, g, micro));
        continue;
      }
      bool skip = fires(FaultType::kSkipBackward, g);
      if (job_.agree_on_skip) {
        // flag = all_reduce(skip): every rank learns that some rank skips, and skips too.
        last_comm = e.enqueue_collective(rank_, sim::kWorldGroup, {sim::CollectiveKind::kAllReduce, 4},
                                         label(DdpTag::kSkipFlag, g), last_compute);
        for (const Fault& f : job_.faults) {
          const auto* other = f.as<fault::SkipBackward>();
          skip = skip || (other && other->iteration == g);
        }
      }
      if (skip) continue;  // no backward, no hooks, no all-reduce
      const Issued backward = syncing_backward(e, g, compute_factor);
      last_compute = backward.compute;
      if (backward.comm) last_comm = backward.comm;
    }
    // finalize_backward waits for every launched bucket; the step follows.
    sim::OpRef last = e.enqueue(rank_, StreamKind::kCompute, scaled(m.optimizer, compute_factor),
                                label(DdpTag::kOptimizer, g), last_comm ? last_comm : last_compute);
    return after_step(e, g, last);
  }

  const Plan& plan_;
  const DdpJob& job_;
  int rank_;
  int world_size_;
  std::uint64_t seed_;
  Progress& progress_;
  // What this rank's loop runs, in order, each epoch: its iterations, then
  // (Join) a shadow of each iteration others still run, then the Join exit.
  // Computed, not stored: a per-rank list is one more cache miss a wake.
  int runs_ = 0;                // iterations less the missing batches (may be below zero)
  int most_ = 0;                // iterations the rank with most batches runs
  int iterations_ = 0;          // max(0, runs_)
  int shadows_per_epoch_ = 0;
  int per_epoch_ = 0;
  std::size_t loop_size_ = 0;
  Entry loop(std::size_t k) const {
    const auto per = static_cast<std::size_t>(per_epoch_);
    const int base = static_cast<int>(k / per) * job_.iterations;
    const int p = static_cast<int>(k % per);
    if (p < iterations_) return {base + p, Entry::kIteration};
    if (p - iterations_ < shadows_per_epoch_) return {base + runs_ + (p - iterations_), Entry::kShadow};
    return {base + most_ - 1, Entry::kJoinExit};
  }
  int shadows_ = 0;
  std::optional<sim::OpRef> constructed_;
  bool first_forward_ = true;
  bool rebuilt_ = false;
  int syncing_backwards_ = 0;
  std::vector<int> pending_unused_;  // raised at the next forward
  std::vector<sim::OpRef> segment_;  // this iteration's backward pieces (kept to reuse its storage)
  std::vector<sim::OpRef> reduced_;  // this iteration's bucket all-reduces (likewise)
  std::vector<sim::OpRef> launch_;   // what each bucket's reduction waits for: its segment, or its hook's work
};

void check_job(const DdpJob& job) {
  if (job.iterations < 1 || job.epochs < 1) throw std::invalid_argument("at least one iteration is needed");
  if (job.warmup_iterations < 0 || job.warmup_iterations >= job.total_iterations()) {
    throw std::invalid_argument("warm-up must leave at least one measured iteration");
  }
  if (job.ddp.gradient_accumulation < 1) throw std::invalid_argument("gradient accumulation must be at least 1");
  if (job.model.parameters.empty() || job.model.ready_order.size() != job.model.parameters.size() ||
      job.model.forward.size() != job.model.parameters.size() ||
      job.model.backward.size() != job.model.parameters.size()) {
    throw std::invalid_argument("model: parameters, ready order and per-parameter times disagree in length");
  }
}

// One evaluation of a DDP job: `simulated` ranks whose collectives run over `world_size`.
class DdpEvaluation final : public Evaluation {
 public:
  DdpEvaluation(const DdpJob& job, int simulated, int world_size, std::uint64_t seed)
      : job_(job),
        plan_(job, simulated),
        accounting_(simulated, job.warmup_iterations, job.ddp.gradient_accumulation),
        simulated_(simulated),
        world_size_(world_size),
        seed_(seed) {}

  sim::Observer& accounting() override { return accounting_; }

  void start(sim::Engine& engine) override {
    progress_.emplace(simulated_, job_.total_iterations(), engine.workers());
    mark_slow_links(progress_->ranks);
    programs_.reserve(static_cast<std::size_t>(simulated_));
    for (int r = 0; r < simulated_; ++r) {
      programs_.push_back(std::make_unique<RankProgram>(plan_, r, world_size_, seed_, *progress_));
      programs_.back()->construct(engine);
    }
    for (auto& p : programs_) p->start(engine);
  }

  RunResult finish(const sim::RunSummary& summary) override {
    progress_->gather();
    return assemble(job_, plan_, accounting_, *progress_, summary, simulated_, world_size_);
  }

  // One rank's program is every rank's; its status too.
  sim::UniformProgram record() override {
    recording_.emplace(1, job_.total_iterations(), 1);
    recorded_ = std::make_unique<RankProgram>(plan_, 0, world_size_, seed_, *recording_);
    return recorded_->record();
  }

  sim::Time per_rank(int rank, const sim::ProgramOp& op) const override {
    return straggler_delay(job_.straggler, rank, static_cast<int>(op.label.iteration), world_size_, seed_);
  }

  RunResult finish_levelized(const sim::LevelizedRun& run) override {
    progress_.emplace(simulated_, job_.total_iterations(), 1);
    RankStatus status = recorded_->recorded_status();
    status.finished = true;
    progress_->ranks.assign(static_cast<std::size_t>(simulated_), status);
    mark_slow_links(progress_->ranks);
    // Step 0 is construction; step k + 1 is the loop's k-th.
    for (std::size_t k = 0; k < recorded_->loop_size(); ++k) {
      if (const std::optional<int> g = recorded_->tallied(k)) {
        const auto ug = static_cast<std::size_t>(*g);
        progress_->all.iteration_end[ug] = sim::max(progress_->all.iteration_end[ug], run.step_end[k + 1]);
        progress_->all.finished_ranks[ug] += simulated_;
      }
    }
    return assemble(job_, plan_, accounting_, *progress_, run.summary, simulated_, world_size_);
  }

 private:
  // The ranks whose slow link slows collectives down say so in their status.
  void mark_slow_links(std::vector<RankStatus>& ranks) const {
    bool slowed = false;
    std::vector<SlowLink> links = models::slow_links(job_);
    for (const LinkSlowdown& s : models::link_slowdowns(job_)) links.push_back(s.link);
    for (const SlowLink& s : links) slowed = slowed || (s.rank < world_size_ && world_size_ > 1 && s.factor > 1);
    if (!slowed) return;
    for (const Fault& f : job_.faults) {
      for (int r : f.ranks) {
        if (f.as<fault::SlowLink>() && r < simulated_) ranks[static_cast<std::size_t>(r)].faults.insert(FaultType::kSlowLink);
      }
    }
  }

  const DdpJob& job_;
  const Plan plan_;
  Accounting accounting_;
  int simulated_, world_size_;
  std::uint64_t seed_;
  std::optional<Progress> progress_;
  std::vector<std::unique_ptr<RankProgram>> programs_;
  std::optional<Progress> recording_;
  std::unique_ptr<RankProgram> recorded_;
};

}  // namespace
}  // namespace ddp

ProgramTraits DdpProgram::traits() const {
  // Compute slowed by communication couples each rank's compute to when its
  // collectives start: only the engine's time order evaluates it.
  const bool contended = job_.compute_slowdown > 0 || job_.comm_slowdown > 0;
  return {symmetric(job_), uniform_program(job_) && !contended, keeps_lockstep(job_) && !contended,
          std::holds_alternative<JitterStraggler>(job_.straggler)};
}

CommSettings DdpProgram::comm() const {
  return {job_.backend, job_.watchdog_timeout, job_.fingerprint ? ddp::kFingerprintBytes : 0, job_.compute_slowdown,
          job_.comm_slowdown, {}};
}

std::unique_ptr<CollectiveTimer> DdpProgram::analytic_timer(int world_size) const {
  return models::analytic_timer(job_, world_size);
}

std::vector<SlowLink> DdpProgram::slow_links() const { return models::slow_links(job_); }

std::vector<LinkSlowdown> DdpProgram::link_slowdowns() const { return models::link_slowdowns(job_); }

std::unique_ptr<Evaluation> DdpProgram::evaluation(int simulated, int world_size, std::uint64_t seed) const {
  ddp::check_job(job_);
  return std::make_unique<ddp::DdpEvaluation>(job_, simulated, world_size, seed);
}

}  // namespace ddpsim::models
