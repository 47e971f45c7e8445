#include "models/ddp_job.hpp"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

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
  BackwardPlan initial_backward;
  std::optional<BackwardPlan> rebuilt_backward;
  bool crashes_on_unused;  // unused parameters without find_unused_parameters

  explicit Plan(const DdpJob& j)
      : job(j),
        initial(initial_buckets(j.model, j.ddp)),
        rebuilt(rebuilt_buckets(j.model, j.ddp)),
        rebuild_at(rebuild_iteration(j.ddp)),
        initial_backward(plan_backward(j.model, j.ddp, initial)),
        crashes_on_unused(!j.ddp.unused_parameters.empty() && !j.ddp.find_unused_parameters && !j.ddp.static_graph) {
    if (rebuilt) rebuilt_backward = plan_backward(j.model, j.ddp, *rebuilt);
  }
  bool uses_rebuilt(int it) const { return rebuild_at && it >= *rebuild_at; }
};

// The training loop of one rank. Iteration i+1 is issued when iteration i's
// optimizer step ends: a synchronous loop, as a script that reads the loss
// every step runs.
class RankProgram final : public sim::Process {
 public:
  RankProgram(const Plan& plan, int rank, int world_size, std::uint64_t seed, std::vector<RankError>& errors)
      : plan_(plan), job_(plan.job), rank_(rank), world_size_(world_size), seed_(seed), errors_(errors) {}

  // DistributedDataParallel's constructor: parameters and buffers from rank 0.
  // Training starts once it returns.
  void construct(sim::Engine& e) {
    std::int64_t bytes = job_.model.parameter_bytes() + job_.model.buffer_bytes();
    for (int chunk = 0; bytes > 0; ++chunk, bytes -= kInitBroadcastChunk) {
      constructed_ = e.enqueue_collective(rank_, sim::Engine::kWorld,
                                          {sim::CollectiveKind::kBroadcast, std::min(bytes, kInitBroadcastChunk)},
                                          label(DdpTag::kInitBroadcast, 0, chunk));
    }
  }

  void issue(sim::Engine& e, int it) {
    using sim::StreamKind;
    if (it >= 1 && plan_.crashes_on_unused) {
      crash(it);
      return;
    }
    const ModelSpec& m = job_.model;
    const DdpConfig& ddp = job_.ddp;
    const int steps = ddp.gradient_accumulation;
    std::optional<sim::OpRef> last_comm;
    std::optional<sim::OpRef> last_compute;
    for (int micro = 0; micro < steps; ++micro) {
      const bool sync = micro == steps - 1;
      sim::OpRef before_forward = e.enqueue(rank_, StreamKind::kHost, job_.data_load, label(DdpTag::kData, it, micro),
                                            it == 0 && micro == 0 ? constructed_ : std::nullopt);
      if (micro == 0 && plan_.rebuild_at == it) {
        // sync_bucket_indices: the rebuilt index list, then the bucket sizes, from rank 0.
        const auto& rebuilt = *plan_.rebuilt;
        const std::int64_t sizes[2] = {4 * (static_cast<std::int64_t>(m.parameters.size()) + 1),
                                       4 * (static_cast<std::int64_t>(rebuilt.size()) + 1)};
        for (int k = 0; k < 2; ++k) {
          before_forward = e.enqueue_collective(rank_, sim::Engine::kWorld, {sim::CollectiveKind::kBroadcast, sizes[k]},
                                                label(DdpTag::kRebuildBroadcast, it, k), before_forward);
        }
      }
      // The forward after a no_sync() forward skips the buffer broadcast.
      if (micro == 0 && ddp.broadcast_buffers && m.buffer_bytes() > 0) {
        before_forward = e.enqueue_collective(rank_, sim::Engine::kWorld,
                                              {sim::CollectiveKind::kBroadcast, m.buffer_bytes()},
                                              label(DdpTag::kBufferBroadcast, it), before_forward);
      }
      e.enqueue(rank_, StreamKind::kCompute, m.forward_total(), label(DdpTag::kForward, it, micro), before_forward);
      const sim::Time slow = sync ? straggler_delay(job_.straggler, rank_, it, world_size_, seed_) : sim::Time{};
      if (!sync) {
        last_compute = e.enqueue(rank_, StreamKind::kCompute, m.backward_total(), label(DdpTag::kLocalBackward, it, micro));
        continue;
      }
      if (ddp.find_unused_parameters && !ddp.static_graph) {
        const auto tensors = static_cast<std::int64_t>(m.parameters.size());
        e.enqueue(rank_, StreamKind::kCompute, sim::Time::ns(tensors * ddp.traversal_per_tensor.count_ns()),
                  label(DdpTag::kTraversal, it));
      }
      const bool rebuilt = plan_.uses_rebuilt(it);
      const BackwardPlan& bp = rebuilt ? *plan_.rebuilt_backward : plan_.initial_backward;
      const std::vector<Bucket>& buckets = rebuilt ? *plan_.rebuilt : plan_.initial;
      std::vector<sim::OpRef> segment;
      for (std::size_t s = 0; s < bp.segments.size(); ++s) {
        segment.push_back(e.enqueue(rank_, StreamKind::kCompute, bp.segments[s] + (s == 0 ? slow : sim::Time{}),
                                    label(DdpTag::kBackward, it, static_cast<int>(s))));
      }
      last_compute = segment.back();
      // Buckets launch strictly in index order: the comm stream is FIFO.
      for (int b = 0; b < bp.launchable; ++b) {
        const auto ub = static_cast<std::size_t>(b);
        last_comm = e.enqueue_collective(rank_, sim::Engine::kWorld,
                                         {sim::CollectiveKind::kAllReduce, buckets[ub].bytes},
                                         label(DdpTag::kAllReduce, it, b),
                                         segment[static_cast<std::size_t>(bp.bucket_ready_segment[ub])]);
      }
      if (ddp.find_unused_parameters && !ddp.static_graph) {
        last_comm = e.enqueue_collective(rank_, sim::Engine::kWorld,
                                         {sim::CollectiveKind::kAllReduce, 4 * static_cast<std::int64_t>(m.parameters.size())},
                                         label(DdpTag::kUsedMap, it), segment.back());
      }
    }
    // finalize_backward waits for every launched bucket; the step follows.
    const sim::OpRef opt = e.enqueue(rank_, StreamKind::kCompute, m.optimizer, label(DdpTag::kOptimizer, it),
                                     last_comm ? last_comm : last_compute);
    e.wake_when_done(opt, *this, static_cast<std::uint64_t>(it));
  }

  void on_wake(sim::Engine& e, std::uint64_t token) override {
    const int next = static_cast<int>(token) + 1;
    if (next < job_.iterations) issue(e, next);
  }

 private:
  void crash(int it) {
    std::string indices;
    for (int p : job_.ddp.unused_parameters) indices += (indices.empty() ? "" : " ") + std::to_string(p);
    errors_.push_back(RankError{
        rank_, it,
        fmt::format("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new "
                    "one. This error indicates that your module has parameters that were not used in producing loss. "
                    "You can enable unused parameter detection by passing the keyword argument "
                    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`. Parameter indices "
                    "which did not receive grad for rank {}: {}",
                    rank_, indices)});
  }

  const Plan& plan_;
  const DdpJob& job_;
  int rank_;
  int world_size_;
  std::uint64_t seed_;
  std::vector<RankError>& errors_;
  std::optional<sim::OpRef> constructed_;
};

// Turns op records into per-rank means and iteration end times.
class Accounting final : public sim::Observer {
 public:
  Accounting(int world_size, int iterations, int warmup, int micro_steps)
      : warmup_(warmup),
        sync_micro_(static_cast<std::uint32_t>(micro_steps - 1)),
        ranks_(static_cast<std::size_t>(world_size)),
        iteration_end_(static_cast<std::size_t>(iterations)),
        finished_ranks_(static_cast<std::size_t>(iterations), 0) {}

  void on_op(const sim::OpRecord& r) override {
    const auto it = static_cast<std::size_t>(r.label.iteration);
    Rank& acc = ranks_[static_cast<std::size_t>(r.rank)];
    const bool measured = static_cast<int>(it) >= warmup_;
    const sim::Time busy = r.end - r.start;
    const auto tag = static_cast<DdpTag>(r.label.tag);
    if (r.is_collective) {
      if (tag == DdpTag::kInitBroadcast) return;  // construction, before iteration 0
      acc.busy.push_back({r.start, r.end});
      if (measured) {
        acc.collective += busy;
        acc.wait += r.start - r.arrival;
      }
      if (tag == DdpTag::kAllReduce || tag == DdpTag::kUsedMap) {
        if (!acc.first_launch || r.arrival < *acc.first_launch) acc.first_launch = r.arrival;
        acc.comm_end = sim::max(acc.comm_end, r.end);
      }
      return;
    }
    if (tag == DdpTag::kData) {
      if (measured) acc.data += busy;
      return;
    }
    if (measured) {
      acc.compute += busy;
      // Exposed communication: while this op waited for a collective, the
      // time that collective (or an earlier one) was executing. Waiting for
      // other ranks to arrive, or for data, is not communication.
      if (r.after && r.after->stream % sim::kStreamsPerRank == static_cast<std::uint32_t>(sim::StreamKind::kComm)) {
        for (const auto& [from, to] : acc.busy) {
          const sim::Time lo = sim::max(from, r.ready), hi = sim::min(to, r.start);
          if (lo < hi) acc.exposed += hi - lo;
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
        acc.busy.clear();
        acc.first_launch.reset();
        acc.comm_end = sim::Time{};
        iteration_end_[it] = sim::max(iteration_end_[it], r.end);
        ++finished_ranks_[it];
        break;
      }
      default:
        break;
    }
  }

  RunResult result(int world_size, int iterations) const {
    RunResult out;
    out.world_size = world_size;
    out.iterations = iterations;
    // Iterations every rank finished; with a synchronous loop these form a prefix.
    int complete = 0;
    while (complete < iterations && finished_ranks_[static_cast<std::size_t>(complete)] == world_size) ++complete;
    out.measured_iterations = std::max(0, complete - warmup_);
    if (out.measured_iterations > 0) {
      const sim::Time from = warmup_ == 0 ? sim::Time::zero() : iteration_end_[static_cast<std::size_t>(warmup_ - 1)];
      const sim::Time to = iteration_end_[static_cast<std::size_t>(complete - 1)];
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
  struct Rank {
    sim::Time data, compute, collective, exposed, wait;
    sim::Time forward_compute, backward_compute, backward_comm, overlap;
    // This iteration so far:
    std::vector<std::pair<sim::Time, sim::Time>> busy;  // collectives' (start, end)
    sim::Time forward_start, backward_start, backward_end, comm_end;
    std::optional<sim::Time> first_launch;
  };
  int warmup_;
  std::uint32_t sync_micro_;
  std::vector<Rank> ranks_;
  std::vector<sim::Time> iteration_end_;  // max over ranks
  std::vector<int> finished_ranks_;
};

}  // namespace

RunResult simulate_ddp(const DdpJob& job, int world_size, std::uint64_t seed, sim::Observer* trace) {
  if (job.iterations < 1) throw std::invalid_argument("at least one iteration is needed");
  if (job.warmup_iterations < 0 || job.warmup_iterations >= job.iterations) {
    throw std::invalid_argument("warm-up must leave at least one measured iteration");
  }
  if (job.ddp.gradient_accumulation < 1) throw std::invalid_argument("gradient accumulation must be at least 1");
  if (job.model.parameters.empty() || job.model.ready_order.size() != job.model.parameters.size() ||
      job.model.forward.size() != job.model.parameters.size() ||
      job.model.backward.size() != job.model.parameters.size()) {
    throw std::invalid_argument("model: parameters, ready order and per-parameter times disagree in length");
  }
  const Plan plan(job);
  const NetworkParams net = job.network;
  sim::Engine engine(world_size, [net](const sim::Collective& c, int n) { return collective_time(net, c, n); });
  Accounting accounting(world_size, job.iterations, job.warmup_iterations, job.ddp.gradient_accumulation);
  engine.add_observer(accounting);
  if (trace != nullptr) engine.add_observer(*trace);

  std::vector<RankError> errors;
  std::vector<std::unique_ptr<RankProgram>> programs;
  programs.reserve(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    programs.push_back(std::make_unique<RankProgram>(plan, r, world_size, seed, errors));
    programs.back()->construct(engine);
    programs.back()->issue(engine, 0);
  }
  const sim::RunSummary summary = engine.run();

  RunResult out = accounting.result(world_size, job.iterations);
  out.outcome = !errors.empty() ? Outcome::kCrash : summary.hung() ? Outcome::kHang : Outcome::kCompleted;
  out.blocked = summary.blocked;
  out.errors = std::move(errors);
  out.global_batch = static_cast<std::int64_t>(job.local_batch_size) * world_size * job.ddp.gradient_accumulation;
  out.events = summary.events;
  out.rank_ops = summary.rank_ops;
  out.end = summary.end;
  return out;
}

}  // namespace ddpsim::models
