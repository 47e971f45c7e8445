#include "models/ddp_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "sim/levelized.hpp"
#include "sim/small_list.hpp"

namespace ddpsim::models {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kCompleted: return "completed";
    case Outcome::kHang: return "hang";
    case Outcome::kCrash: return "crash";
  }
  return "?";
}

std::string op_name(sim::OpLabel label) {
  switch (static_cast<DdpTag>(label.tag)) {
    case DdpTag::kData: return "data";
    case DdpTag::kForward: return "forward";
    case DdpTag::kTraversal: return "find_unused traversal";
    case DdpTag::kBackward: return fmt::format("backward {}", label.index);
    case DdpTag::kLocalBackward: return "backward (no_sync)";
    case DdpTag::kAllReduce: return fmt::format("all_reduce bucket {}", label.index);
    case DdpTag::kUsedMap: return "all_reduce used-parameter map";
    case DdpTag::kBufferBroadcast: return "broadcast buffers";
    case DdpTag::kRebuildBroadcast: return fmt::format("broadcast rebuilt buckets {}", label.index);
    case DdpTag::kInitBroadcast: return fmt::format("broadcast initial state {}", label.index);
    case DdpTag::kOptimizer: return "optimizer";
    case DdpTag::kSkipFlag: return "all_reduce skip flag";
    case DdpTag::kExtraCollective: return "extra collective";
    case DdpTag::kArtifact: return "rank 0 artifact write";
    case DdpTag::kFinalBarrier: return "barrier";
    case DdpTag::kJoinCount: return "all_reduce Join count";
    case DdpTag::kShadowAllReduce: return fmt::format("all_reduce bucket {} (Join shadow, zeros)", label.index);
    case DdpTag::kShadowBroadcast: return "broadcast buffers (Join shadow)";
  }
  return "?";
}

ModelSpec block_model(sim::Time forward, sim::Time backward, sim::Time optimizer, std::int64_t gradient_bytes) {
  if (gradient_bytes <= 0 || gradient_bytes % 4 != 0) {
    throw std::invalid_argument("gradient bytes must be a positive multiple of 4");
  }
  ModelSpec m;
  m.parameters.push_back(Tensor{"gradient", {gradient_bytes / 4}, DType::kFloat32});
  m.ready_order = {0};
  m.forward = {forward};
  m.backward = {backward};
  m.optimizer = optimizer;
  return m;
}

namespace {

// TORCH_DISTRIBUTED_DEBUG=DETAIL's per-rank fingerprint: op type, sequence
// number, and the shapes and dtypes of a few tensors, serialised as int64s.
constexpr std::int64_t kFingerprintBytes = 64;

// Construction broadcasts parameters and buffers in chunks of this size.
constexpr std::int64_t kInitBroadcastChunk = 250 * kMiB;

sim::OpLabel label(DdpTag tag, int iteration, int index = 0) {
  return {static_cast<std::uint32_t>(tag), static_cast<std::uint32_t>(iteration), static_cast<std::uint32_t>(index)};
}

// Everything every rank shares: bucket tables and backward cuts, computed once.
struct Plan {
  const DdpJob& job;
  std::vector<Bucket> initial;
  std::optional<std::vector<Bucket>> rebuilt;
  std::optional<int> rebuild_at;
  int fewest_missing = 0;  // the smallest uneven_batches shortfall over ranks
  // The model's totals, summed once here rather than by every rank every iteration.
  std::int64_t buffer_bytes = 0;
  std::int64_t parameter_bytes = 0;
  sim::Time forward_total, backward_total;

  Plan(const DdpJob& j, int world_size)
      : job(j),
        initial(initial_buckets(j.model, j.ddp)),
        rebuilt(rebuilt_buckets(j.model, j.ddp)),
        rebuild_at(rebuild_iteration(j.ddp)),
        buffer_bytes(j.model.buffer_bytes()),
        parameter_bytes(j.model.parameter_bytes()),
        forward_total(j.model.forward_total()),
        backward_total(j.model.backward_total()) {
    fewest_missing = j.iterations;
    for (int r = 0; r < world_size; ++r) {
      int fewer = 0;
      for (const Fault& f : j.faults) {
        if (f.type == FaultType::kUnevenBatches && f.has_rank(r)) fewer = std::max(fewer, f.fewer);
      }
      fewest_missing = std::min(fewest_missing, fewer);
    }
    std::sort(config_unused.begin(), config_unused.end());
    config_unused.erase(std::unique(config_unused.begin(), config_unused.end()), config_unused.end());
    for (int t = 0; t < 2; ++t) {
      if (t == 0 || rebuilt) common[t] = plan_for(t == 1, config_unused);
    }
  }

  // Backward cuts when some parameters get no gradient on a rank, by bucket
  // table. Ranks may ask from several engine threads at once: the job's own
  // unused set (every rank's, without faults) is planned up front and read
  // freely; other sets are planned once, under a lock.
  const BackwardPlan& backward_with_unused(bool rebuilt_table, const std::vector<int>& unused) const {
    const int t = rebuilt_table ? 1 : 0;
    if (common[t] && unused == config_unused) return *common[t];
    const std::lock_guard lock(cache_mutex);
    auto& cache = backward_cache[t];
    auto it = cache.find(unused);
    if (it == cache.end()) it = cache.emplace(unused, plan_for(rebuilt_table, unused)).first;
    return it->second;
  }

 private:
  BackwardPlan plan_for(bool rebuilt_table, const std::vector<int>& unused) const {
    DdpConfig d = job.ddp;
    d.unused_parameters = unused;
    return plan_backward(job.model, d, rebuilt_table ? *rebuilt : initial);
  }
  std::vector<int> config_unused = job.ddp.unused_parameters;
  std::optional<BackwardPlan> common[2];
  mutable std::mutex cache_mutex;
  mutable std::map<std::vector<int>, BackwardPlan> backward_cache[2];
};

// Where each rank is; filled by the programs, read by the analysis.
struct Progress {
  // Per iteration, over the ranks one engine thread ran (sim::Engine::worker()).
  struct Tally {
    std::vector<sim::Time> iteration_end;  // max over ranks
    std::vector<int> finished_ranks;
  };
  std::vector<RankStatus> ranks;
  std::vector<Tally> by_worker;
  Tally all;  // the workers' tallies together, once the run ends

  Progress(int ranks_simulated, int iterations, int workers)
      : ranks(static_cast<std::size_t>(ranks_simulated)),
        by_worker(static_cast<std::size_t>(workers), Tally{std::vector<sim::Time>(static_cast<std::size_t>(iterations)),
                                                           std::vector<int>(static_cast<std::size_t>(iterations), 0)}),
        all(by_worker.front()) {}
  void gather() {
    for (const Tally& t : by_worker) {
      for (std::size_t g = 0; g < all.iteration_end.size(); ++g) {
        all.iteration_end[g] = sim::max(all.iteration_end[g], t.iteration_end[g]);
        all.finished_ranks[g] += t.finished_ranks[g];
      }
    }
  }
};

// Takes the ops one rank's program issues, in the engine's calls, as a
// program every rank runs (sim::run_levelized). An OpRef it returns names
// the op's index in the program.
class Recorder {
 public:
  sim::OpRef enqueue(int, sim::StreamKind stream, sim::Time duration, sim::OpLabel label,
                     std::optional<sim::OpRef> after = std::nullopt) {
    sim::ProgramOp& op = add(stream, label, after);
    op.duration = duration;
    op.per_rank = per_rank_next_;
    per_rank_next_ = false;
    return ref();
  }
  sim::OpRef enqueue_collective(int, sim::GroupId, sim::Collective collective, sim::OpLabel label,
                                std::optional<sim::OpRef> after = std::nullopt) {
    sim::ProgramOp& op = add(sim::StreamKind::kComm, label, after);
    op.is_collective = true;
    op.collective = collective;
    return ref();
  }
  /// The next op's duration differs by rank (LevelizedOptions::extra).
  void next_per_rank() { per_rank_next_ = true; }
  /// The ops since the last step form one, issued when op `issued_after`
  /// ends (-1: at time zero); the process then waits for `waits_for`.
  void end_step(std::int32_t issued_after, std::int32_t waits_for) {
    program_.steps.push_back({program_.ops.size(), issued_after, waits_for});
  }
  sim::UniformProgram program() && { return std::move(program_); }

 private:
  sim::ProgramOp& add(sim::StreamKind stream, sim::OpLabel label, const std::optional<sim::OpRef>& after) {
    sim::ProgramOp& op = program_.ops.emplace_back();
    op.stream = stream;
    op.label = label;
    op.after = after ? static_cast<std::int32_t>(after->index) : -1;
    return op;
  }
  sim::OpRef ref() const { return {static_cast<std::uint32_t>(program_.ops.back().stream), program_.ops.size() - 1}; }
  sim::UniformProgram program_;
  bool per_rank_next_ = false;
};

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
    int fewer = 0;
    for (const Fault& f : job_.faults) {
      if (f.type == FaultType::kUnevenBatches && f.has_rank(rank)) fewer = std::max(fewer, f.fewer);
    }
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
    for (const Fault& f : job_.faults) {
      if (f.type == FaultType::kCrash && f.at && f.has_rank(rank_)) {
        status().faults.insert(FaultType::kCrash);
        e.schedule_crash(rank_, *f.at, fmt::format("killed at {:.3f} ms (fault: crash)", f.at->ms()));
      }
    }
  }

  void start(sim::Engine& e) { step(e, 0); }

  // What this program issues, for a job whose ranks all issue the same
  // (uniform_program): construction, each step of the loop, the barrier.
  sim::UniformProgram record() {
    Recorder r;
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
      if (f.type == type && f.applies(rank_, g)) {
        status().faults.insert(type);
        return true;
      }
    }
    return false;
  }

  template <class E>
  void broadcast_initial_state(E& e) {
    std::int64_t bytes = plan_.parameter_bytes + plan_.buffer_bytes;
    for (int chunk = 0; bytes > 0; ++chunk, bytes -= kInitBroadcastChunk) {
      constructed_ = e.enqueue_collective(rank_, sim::Engine::kWorld,
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
  template <class E>
  sim::OpRef issue(E& e, std::size_t k) {
    if (k == loop_size_) {
      return e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kBarrier, 0},
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

  template <class E>
  sim::OpRef join_count(E& e, int g, std::optional<sim::OpRef> after) {
    return e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kAllReduce, 4},
                                label(DdpTag::kJoinCount, g), after);
  }

  // Join's hooks for a rank out of data: the count, then the collectives the
  // others' iteration runs (buffer broadcast, one zero-filled all-reduce per bucket).
  template <class E>
  sim::OpRef join_step(E& e, const Entry& entry) {
    sim::OpRef last = join_count(e, entry.g, std::nullopt);
    if (entry.kind == Entry::kJoinExit) return last;  // every rank's exit: not a shadow
    ++shadows_;
    if (job_.ddp.broadcast_buffers && plan_.buffer_bytes > 0) {
      last = e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kBroadcast, plan_.buffer_bytes},
                                  label(DdpTag::kShadowBroadcast, entry.g), last);
      ++shadows_;
    }
    const std::vector<Bucket>& buckets = rebuilt_ ? *plan_.rebuilt : plan_.initial;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      last = e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kAllReduce, buckets[b].bytes},
                                  label(DdpTag::kShadowAllReduce, entry.g, static_cast<int>(b)), last);
      ++shadows_;
    }
    progress_.ranks[static_cast<std::size_t>(rank_)].shadow_collectives = shadows_;
    return last;
  }

  double slowdown(int g, bool data) {
    double factor = 1;
    for (const Fault& f : job_.faults) {
      if (f.type == FaultType::kSlowdown && f.data == data && f.applies(rank_, g)) {
        status().faults.insert(FaultType::kSlowdown);
        factor *= f.factor;
      }
    }
    return factor;
  }

  static sim::Time scaled(sim::Time t, double factor) {
    return factor == 1 ? t : sim::Time::ns(std::llround(static_cast<double>(t.count_ns()) * factor));
  }

  // This rank's straggler delay in iteration g (on its first backward
  // segment); a recording marks that op as per-rank instead.
  sim::Time straggle(sim::Engine&, int g) const { return straggler_delay(job_.straggler, rank_, g, world_size_, seed_); }
  static sim::Time straggle(Recorder& r, int) {
    r.next_per_rank();
    return {};
  }

  // Issues iteration g; returns its last operation.
  template <class E>
  sim::OpRef run_iteration(E& e, int g) {
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
        // sync_bucket_indices: the rebuilt index list, then the bucket sizes, from rank 0.
        rebuilt_ = true;
        const std::int64_t sizes[2] = {4 * (static_cast<std::int64_t>(m.parameters.size()) + 1),
                                       4 * (static_cast<std::int64_t>(plan_.rebuilt->size()) + 1)};
        for (int k = 0; k < 2; ++k) {
          before_forward = e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kBroadcast, sizes[k]},
                                                label(DdpTag::kRebuildBroadcast, g, k), before_forward);
        }
      }
      // The forward after a no_sync() forward skips the buffer broadcast.
      if (micro == 0 && ddp.broadcast_buffers && plan_.buffer_bytes > 0) {
        before_forward = e.enqueue_collective(rank_, sim::Engine::kWorld,
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
        last_comm = e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kAllReduce, 4},
                                         label(DdpTag::kSkipFlag, g), last_compute);
        for (const Fault& f : job_.faults) skip = skip || (f.type == FaultType::kSkipBackward && f.iteration == g);
      }
      if (skip) continue;  // no backward, no hooks, no all-reduce
      if (ddp.find_unused_parameters && !ddp.static_graph) {
        const auto tensors = static_cast<std::int64_t>(m.parameters.size());
        e.enqueue(rank_, StreamKind::kCompute, sim::Time::ns(tensors * ddp.traversal_per_tensor.count_ns()),
                  label(DdpTag::kTraversal, g));
      }
      std::vector<int> unused = ddp.unused_parameters;
      for (const Fault& f : job_.faults) {
        if (f.type == FaultType::kUnusedParameters && f.applies(rank_, g)) {
          status().faults.insert(FaultType::kUnusedParameters);
          unused.insert(unused.end(), f.parameters.begin(), f.parameters.end());
        }
      }
      std::sort(unused.begin(), unused.end());
      unused.erase(std::unique(unused.begin(), unused.end()), unused.end());
      const bool use_rebuilt = rebuilt_;
      const BackwardPlan& bp = plan_.backward_with_unused(use_rebuilt, unused);
      const std::vector<Bucket>& buckets = use_rebuilt ? *plan_.rebuilt : plan_.initial;
      const sim::Time slow = straggle(e, g);
      std::vector<sim::OpRef>& segment = segment_;
      segment.clear();
      for (std::size_t s = 0; s < bp.segments.size(); ++s) {
        segment.push_back(e.enqueue(rank_, StreamKind::kCompute,
                                    scaled(bp.segments[s], compute_factor) + (s == 0 ? slow : sim::Time{}),
                                    label(DdpTag::kBackward, g, static_cast<int>(s))));
      }
      last_compute = segment.back();
      // Buckets launch strictly in index order: the comm stream is FIFO.
      for (int b = 0; b < bp.launchable; ++b) {
        const auto ub = static_cast<std::size_t>(b);
        last_comm = e.enqueue_collective(rank_, sim::Engine::kWorld,
                                         {sim::CollectiveKind::kAllReduce, buckets[ub].bytes},
                                         label(DdpTag::kAllReduce, g, b),
                                         segment[static_cast<std::size_t>(bp.bucket_ready_segment[ub])]);
      }
      if (ddp.find_unused_parameters && !ddp.static_graph) {
        last_comm = e.enqueue_collective(rank_, sim::Engine::kWorld,
                                         {sim::CollectiveKind::kAllReduce, 4 * static_cast<std::int64_t>(m.parameters.size())},
                                         label(DdpTag::kUsedMap, g), segment.back());
      }
      ++syncing_backwards_;
      if (!unused.empty() && !ddp.find_unused_parameters && !ddp.static_graph) pending_unused_ = unused;
    }
    // finalize_backward waits for every launched bucket; the step follows.
    sim::OpRef last = e.enqueue(rank_, StreamKind::kCompute, scaled(m.optimizer, compute_factor),
                                label(DdpTag::kOptimizer, g), last_comm ? last_comm : last_compute);
    for (const Fault& f : job_.faults) {
      if (f.type == FaultType::kRank0Artifact && f.applies(rank_, g)) {
        status().faults.insert(FaultType::kRank0Artifact);
        last = e.enqueue(rank_, StreamKind::kHost, f.duration, label(DdpTag::kArtifact, g), last);
      }
      if (f.type == FaultType::kExtraCollective && f.applies(rank_, g)) {
        status().faults.insert(FaultType::kExtraCollective);
        // e.g. dist.all_reduce(loss) then loss.item() for a log line: the host waits for it.
        last = e.enqueue_collective(rank_, sim::Engine::kWorld, f.collective, label(DdpTag::kExtraCollective, g), last);
      }
    }
    return last;
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
};

// Turns op records into per-rank means and iteration end times.
class Accounting final : public sim::Observer {
 public:
  Accounting(int world_size, int warmup, int micro_steps)
      : warmup_(warmup),
        sync_micro_(static_cast<std::uint32_t>(micro_steps - 1)),
        ranks_(static_cast<std::size_t>(world_size)),
        prefetch_(ranks_.size() * sizeof(Rank) > kPrefetchAbove) {}

  void on_op(const sim::OpRecord& r) override {
    if (const std::size_t ahead = static_cast<std::size_t>(r.rank) + kPrefetchDistance; prefetch_ && ahead < ranks_.size()) {
      // Inline: GCC drops a call to a function that only prefetches (it has no effect).
      const char* p = reinterpret_cast<const char*>(&ranks_[ahead]);
      for (std::size_t line = 0; line < sizeof(Rank); line += 64) __builtin_prefetch(p + line, 1);
    }
    const auto it = static_cast<std::size_t>(r.label.iteration);
    Rank& acc = ranks_[static_cast<std::size_t>(r.rank)];
    const bool measured = static_cast<int>(it) >= warmup_;
    const sim::Time busy = r.end - r.start;
    const auto tag = static_cast<DdpTag>(r.label.tag);
    if (r.is_collective) {
      if (tag == DdpTag::kInitBroadcast || tag == DdpTag::kFinalBarrier) return;  // outside the loop
      acc.collectives.push_back({r.arrival, r.start, r.end});
      if (measured) acc.collective += busy;
      if (tag == DdpTag::kAllReduce || tag == DdpTag::kUsedMap) {
        if (!acc.first_launch || r.arrival < *acc.first_launch) acc.first_launch = r.arrival;
        acc.comm_end = sim::max(acc.comm_end, r.end);
      }
      return;
    }
    if (tag == DdpTag::kData) {
      if (measured) acc.data += busy;
      if (r.label.index == 0) {  // a new iteration
        acc.collectives.clear();
        acc.first_launch.reset();
        acc.comm_end = sim::Time{};
      }
      return;
    }
    if (measured) {
      acc.compute += busy;
      // While this op sat waiting for a collective: the time a collective was
      // executing is exposed communication; the time one waited for other
      // ranks to arrive is wait. Both on the critical path only: what
      // backward hid costs nothing. Waiting for data is neither.
      if (r.after && r.after->stream % sim::kStreamsPerRank == static_cast<std::uint32_t>(sim::StreamKind::kComm)) {
        const auto overlap = [&](sim::Time from, sim::Time to) {
          const sim::Time lo = sim::max(from, r.ready), hi = sim::min(to, r.start);
          return lo < hi ? hi - lo : sim::Time{};
        };
        for (std::size_t i = 0; i < acc.collectives.size(); ++i) {
          const Span& c = acc.collectives[i];
          acc.exposed += overlap(c.start, c.end);
          acc.wait += overlap(c.arrival, c.start);
        }
      }
    }
    switch (tag) {
      case DdpTag::kForward:
        if (r.label.index == sync_micro_) acc.forward_start = r.start;
        break;
      case DdpTag::kBackward:
        if (r.label.index == 0) acc.backward_start = r.start;
        acc.backward_end = r.end;
        break;
      case DdpTag::kOptimizer: {
        if (measured) {
          acc.forward_compute += acc.backward_start - acc.forward_start;
          acc.backward_compute += acc.backward_end - acc.backward_start;
          if (acc.first_launch) {
            acc.backward_comm += acc.comm_end - *acc.first_launch;
            if (*acc.first_launch < acc.backward_end) acc.overlap += acc.backward_end - *acc.first_launch;
          }
        }
        break;
      }
      default:
        break;
    }
  }

  RunResult result(int world_size, int iterations, const Progress& progress) const {
    RunResult out;
    out.world_size = world_size;
    out.iterations = iterations;
    // Iterations every rank finished; with a synchronous loop these form a prefix.
    int complete = 0;
    while (complete < iterations && progress.all.finished_ranks[static_cast<std::size_t>(complete)] == world_size) ++complete;
    out.measured_iterations = std::max(0, complete - warmup_);
    if (out.measured_iterations > 0) {
      const auto& end = progress.all.iteration_end;
      const sim::Time from = warmup_ == 0 ? sim::Time::zero() : end[static_cast<std::size_t>(warmup_ - 1)];
      const sim::Time to = end[static_cast<std::size_t>(complete - 1)];
      out.step_ms = (to - from).ms() / out.measured_iterations;
    }
    const double n = std::max(1, out.measured_iterations);
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const Rank& a = ranks_[r];
      RankStats s;
      s.rank = static_cast<int>(r);
      s.data_ms = a.data.ms() / n;
      s.compute_ms = a.compute.ms() / n;
      s.collective_ms = a.collective.ms() / n;
      s.exposed_comm_ms = a.exposed.ms() / n;
      s.wait_ms = a.wait.ms() / n;
      s.forward_compute_ms = a.forward_compute.ms() / n;
      s.backward_compute_ms = a.backward_compute.ms() / n;
      s.backward_comm_ms = a.backward_comm.ms() / n;
      s.backward_overlap_ms = a.overlap.ms() / n;
      out.ranks.push_back(s);
    }
    return out;
  }

 private:
  struct Span {
    sim::Time arrival, start, end;
  };
  // One rank's sums and this iteration's marks. Every op reads and writes
  // a rank's record, a sweep over every rank apart once the ranks outnumber
  // the cache: what most ops touch is its first line, and the iteration's
  // collectives live in it rather than behind a pointer.
  struct alignas(64) Rank {
    sim::Time data, compute, forward_start, backward_start, backward_end, comm_end;
    std::optional<sim::Time> first_launch;
    sim::Time collective, exposed, wait;
    sim::Time forward_compute, backward_compute, backward_comm, overlap;
    // This iteration's collectives (waited from arrival to start, ran to end):
    // ResNet-50 has six.
    sim::SmallList<Span, 6> collectives;
  };
  // Records mostly come rank after rank in memory order (levelized, and
  // lockstep ranks in time order). Once the ranks' records outgrow the
  // cache, each op would wait for its rank's lines: fetching those of the
  // rank a few places on meanwhile hides some of it (16 % off ResNet-50 at
  // 65,536 ranks levelized, bench/README.md); in cache it only costs.
  static constexpr std::size_t kPrefetchAbove = std::size_t{2} << 20;
  static constexpr std::size_t kPrefetchDistance = 6;
  int warmup_;
  std::uint32_t sync_micro_;
  std::vector<Rank> ranks_;
  bool prefetch_;
};

}  // namespace

namespace {

// Engine threads for a rank-major run: what the job allows, each with at
// least kRanksPerEngineThread ranks (a sweep's threads meet once per collective).
int engine_threads(const DdpJob& job, int ranks) { return std::clamp(ranks / kRanksPerEngineThread, 1, std::max(1, job.threads)); }

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

// What a collective costs: the job's timer, or the analytic formulas
// (models/cluster.hpp). Every collective is over the world group; the fast
// path simulates one member of it.
class Pricing {
 public:
  Pricing(const DdpJob& job, int simulated, int world_size)
      : timer_(job.timer), slow_(slow_links(job)), simulated_(simulated), world_size_(world_size) {
    if (timer_ == nullptr) {
      own_timer_ = analytic_timer(job, world_size);
      timer_ = own_timer_.get();
    }
  }
  sim::CollectiveCostFn cost() const {
    return [this](const sim::Collective& c, int n) { return timer_->time(c, n == simulated_ ? world_size_ : n, slow_); };
  }
  // The ranks whose slow link slows collectives down say so in their status.
  void mark_slow_links(const DdpJob& job, std::vector<RankStatus>& ranks) const {
    bool slowed = false;
    for (const SlowLink& s : slow_) slowed = slowed || (s.rank < world_size_ && world_size_ > 1 && s.factor > 1);
    if (!slowed) return;
    for (const Fault& f : job.faults) {
      for (int r : f.ranks) {
        if (f.type == FaultType::kSlowLink && r < simulated_) ranks[static_cast<std::size_t>(r)].faults.insert(FaultType::kSlowLink);
      }
    }
  }

 private:
  std::unique_ptr<CollectiveTimer> own_timer_;
  CollectiveTimer* timer_;
  std::vector<SlowLink> slow_;
  int simulated_, world_size_;
};

RunResult assemble(const DdpJob& job, const Plan& plan, const Accounting& accounting, Progress& progress,
                   const sim::RunSummary& summary, int simulated, int world_size);

// Simulates `simulated` ranks of a job whose collectives run over
// `world_size` ranks: all of them, or (the symmetric fast path) rank 0
// alone standing for every rank.
RunResult simulate_ranks(const DdpJob& job, int simulated, int world_size, std::uint64_t seed, sim::Observer* trace,
                         sim::Schedule schedule) {
  check_job(job);
  const Plan plan(job, simulated);
  const Pricing pricing(job, simulated, world_size);
  sim::Engine engine(simulated, pricing.cost(),
                     sim::EngineOptions{job.backend, job.watchdog_timeout, job.fingerprint ? kFingerprintBytes : 0, schedule,
                                        schedule == sim::Schedule::kRankMajor ? engine_threads(job, simulated) : 1});
  Accounting accounting(simulated, job.warmup_iterations, job.ddp.gradient_accumulation);
  engine.add_observer(accounting);
  if (trace != nullptr) engine.add_observer(*trace);

  const int total = job.total_iterations();
  Progress progress(simulated, total, engine.workers());
  pricing.mark_slow_links(job, progress.ranks);
  std::vector<std::unique_ptr<RankProgram>> programs;
  programs.reserve(static_cast<std::size_t>(simulated));
  for (int r = 0; r < simulated; ++r) {
    programs.push_back(std::make_unique<RankProgram>(plan, r, world_size, seed, progress));
    programs.back()->construct(engine);
  }
  for (auto& p : programs) p->start(engine);
  const sim::RunSummary summary = engine.run();
  progress.gather();
  return assemble(job, plan, accounting, progress, summary, simulated, world_size);
}

// A job with a uniform program, evaluated op by op across ranks
// (sim::run_levelized); nothing if a collective's members arrive further
// apart than the watchdog allows.
std::optional<RunResult> simulate_levelized(const DdpJob& job, int simulated, int world_size, std::uint64_t seed) {
  check_job(job);
  const Plan plan(job, simulated);
  const Pricing pricing(job, simulated, world_size);
  const int total = job.total_iterations();
  // One rank's program is every rank's; its status too.
  Progress recording(1, total, 1);
  RankProgram program(plan, 0, world_size, seed, recording);
  const sim::UniformProgram ops = program.record();
  Accounting accounting(simulated, job.warmup_iterations, job.ddp.gradient_accumulation);
  const sim::LevelizedOptions options{job.backend, job.watchdog_timeout, job.fingerprint ? kFingerprintBytes : 0,
                                      [&job, world_size, seed](int rank, const sim::ProgramOp& op) {
                                        return straggler_delay(job.straggler, rank, static_cast<int>(op.label.iteration),
                                                               world_size, seed);
                                      }};
  const std::optional<sim::LevelizedRun> run = sim::run_levelized(ops, simulated, pricing.cost(), options, accounting);
  if (!run) return std::nullopt;

  Progress progress(simulated, total, 1);
  RankStatus status = program.recorded_status();
  status.finished = true;
  progress.ranks.assign(static_cast<std::size_t>(simulated), status);
  pricing.mark_slow_links(job, progress.ranks);
  // Step 0 is construction; step k + 1 is the loop's k-th.
  for (std::size_t k = 0; k < program.loop_size(); ++k) {
    if (const std::optional<int> g = program.tallied(k)) {
      const auto ug = static_cast<std::size_t>(*g);
      progress.all.iteration_end[ug] = sim::max(progress.all.iteration_end[ug], run->step_end[k + 1]);
      progress.all.finished_ranks[ug] += simulated;
    }
  }
  RunResult out = assemble(job, plan, accounting, progress, run->summary, simulated, world_size);
  out.levelized = true;
  return out;
}

RunResult assemble(const DdpJob& job, const Plan& plan, const Accounting& accounting, Progress& progress,
                   const sim::RunSummary& summary, int simulated, int world_size) {
  const int total = job.total_iterations();
  RunResult out = accounting.result(simulated, total, progress);
  out.world_size = world_size;
  out.outcome = !summary.crashes.empty() ? Outcome::kCrash : summary.hung() ? Outcome::kHang : Outcome::kCompleted;
  for (const sim::Crash& c : summary.crashes) out.errors.push_back(RankError{c.rank, c.at.ms(), c.message});
  out.blocked = summary.blocked;
  out.misalignments = misaligned_pairs(summary);
  // Buckets carry their dtype; DDP's own small collectives are int32 or float32 tensors.
  const auto dtype_of = [&plan](const sim::OpLabel& l) -> std::string {
    switch (static_cast<DdpTag>(l.tag)) {
      case DdpTag::kAllReduce:
      case DdpTag::kShadowAllReduce: {
        const bool rebuilt = plan.rebuild_at && static_cast<int>(l.iteration) >= *plan.rebuild_at;
        const std::vector<Bucket>& table = rebuilt ? *plan.rebuilt : plan.initial;
        return l.index < table.size() ? std::string(to_string(table[l.index].dtype)) : "";
      }
      case DdpTag::kUsedMap:
      case DdpTag::kJoinCount:
      case DdpTag::kRebuildBroadcast: return "int32";
      case DdpTag::kSkipFlag:
      case DdpTag::kExtraCollective: return "float32";
      default: return "";
    }
  };
  out.failure = analyse_failure(summary, progress.ranks, FailureContext{job.backend, job.watchdog_timeout, dtype_of});
  for (const RankStatus& s : progress.ranks) {
    out.iterations_run.push_back(s.iterations_run);
    out.shadow_collectives.push_back(s.shadow_collectives);
  }
  out.global_batch = static_cast<std::int64_t>(job.local_batch_size) * world_size * job.ddp.gradient_accumulation;
  out.events = summary.events;
  out.rank_ops = summary.rank_ops;
  out.end = summary.end;
  return out;
}

// Faults that only slow a rank or a link down: the ranks still meet in
// every collective, as the rank-major schedule needs.
bool keeps_lockstep(const Fault& f) {
  return f.type == FaultType::kSlowdown || f.type == FaultType::kSlowLink || f.type == FaultType::kRank0Artifact;
}

}  // namespace

// Time order sweeps the ranks that share an instant in memory order, which
// is fast on one thread while ranks move in lockstep (no straggler, one
// slow rank); ranks with independent random delays never share one, and
// rank-major order is then 1.7 to 1.9 times faster. Rank-major's sweeps
// also spread over threads: with two, lockstep ResNet-50 takes 6 to 24 %
// less time than time order on one at 16,384 ranks, 17 to 22 % at 65,536
// (bench/README.md#schedules).
sim::Schedule choose_schedule(const DdpJob& job, int ranks) {
  if (job.schedule) return *job.schedule;
  if (!std::all_of(job.faults.begin(), job.faults.end(), keeps_lockstep)) return sim::Schedule::kTimeOrder;
  const bool jitter = std::holds_alternative<JitterStraggler>(job.straggler);
  return jitter || engine_threads(job, ranks) > 1 ? sim::Schedule::kRankMajor : sim::Schedule::kTimeOrder;
}

namespace {

// A rank-major run that reaches what only time order simulates (a crash,
// ranks that disagree, the watchdog) is run again in time order.
RunResult simulate_ranks(const DdpJob& job, int simulated, int world_size, std::uint64_t seed, sim::Observer* trace) {
  if (trace == nullptr && !job.schedule && uniform_program(job)) {
    if (std::optional<RunResult> r = simulate_levelized(job, simulated, world_size, seed)) return *std::move(r);
  }
  if (trace == nullptr && choose_schedule(job, simulated) == sim::Schedule::kRankMajor) {
    try {
      return simulate_ranks(job, simulated, world_size, seed, nullptr, sim::Schedule::kRankMajor);
    } catch (const sim::NeedsTimeOrder&) {
      // below
    }
  }
  return simulate_ranks(job, simulated, world_size, seed, trace, sim::Schedule::kTimeOrder);
}

}  // namespace

bool uniform_program(const DdpJob& job) {
  // A slow link only prices collectives, which every member shares. Without
  // find_unused_parameters, an unused parameter stops its rank at the next
  // forward (PyTorch's error).
  return std::all_of(job.faults.begin(), job.faults.end(), [](const Fault& f) { return f.type == FaultType::kSlowLink; }) &&
         (job.ddp.unused_parameters.empty() || job.ddp.find_unused_parameters || job.ddp.static_graph);
}

bool symmetric(const DdpJob& job) {
  // The debug fingerprint's all-gather is sized by the ranks simulated: not for the fast path.
  return job.faults.empty() && std::holds_alternative<NoStraggler>(job.straggler) && !job.fingerprint;
}

RunResult simulate_ddp(const DdpJob& job, int world_size, std::uint64_t seed, sim::Observer* trace) {
  if (world_size > 1 && trace == nullptr && job.fast_path && symmetric(job)) {
    // Every rank runs the same program with the same times, so every
    // collective finds all ranks arriving together: rank 0 alone, its
    // collectives priced over W, is every rank. Anything that did not
    // complete (a crash every rank has) is simulated rank by rank instead.
    RunResult one = simulate_ranks(job, 1, world_size, seed, nullptr);
    if (one.outcome == Outcome::kCompleted && one.errors.empty() && one.misalignments.empty()) {
      const auto w = static_cast<std::size_t>(world_size);
      const RankStats stats = one.ranks.front();
      one.ranks.assign(w, stats);
      for (std::size_t r = 0; r < w; ++r) one.ranks[r].rank = static_cast<int>(r);
      one.iterations_run.assign(w, one.iterations_run.front());
      one.shadow_collectives.assign(w, one.shadow_collectives.front());
      one.rank_ops *= static_cast<std::uint64_t>(world_size);
      one.fast_path = true;
      return one;
    }
  }
  return simulate_ranks(job, world_size, world_size, seed, trace);
}

std::unique_ptr<CollectiveTimer> analytic_timer(const DdpJob& job, int world_size) {
  return std::make_unique<AnalyticTimer>(job.cluster ? *job.cluster : single_switch(world_size, job.network),
                                         job.network.launch_overhead, job.algorithm);
}

std::vector<SlowLink> slow_links(const DdpJob& job) {
  std::vector<SlowLink> out;
  for (const Fault& f : job.faults) {
    if (f.type != FaultType::kSlowLink) continue;
    for (int r : f.ranks) out.push_back({r, f.factor});
  }
  return out;
}

Overhead costliest_overhead(double exposed_comm_ms, double wait_ms, double data_ms) {
  Overhead o{"exposed communication", exposed_comm_ms};
  if (wait_ms > o.ms) o = {"straggler wait", wait_ms};
  if (data_ms > o.ms) o = {"data loading", data_ms};
  return o;
}

std::string low_efficiency_flag(double efficiency, double exposed_comm_ms, double wait_ms, double data_ms) {
  if (efficiency >= kLowEfficiency) return "";
  const Overhead o = costliest_overhead(exposed_comm_ms, wait_ms, data_ms);
  return fmt::format("  below {:.0f}%: {} costs most ({:.3g} ms per step)", 100 * kLowEfficiency, o.name, o.ms);
}

}  // namespace ddpsim::models
