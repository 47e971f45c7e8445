#include "models/ddp_job.hpp"

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

std::string_view tag_name(sim::OpLabel label) {
  switch (static_cast<DdpTag>(label.tag)) {
    case DdpTag::kData: return "data";
    case DdpTag::kForward: return "forward";
    case DdpTag::kBackward: return "backward";
    case DdpTag::kAllReduce: return "all_reduce";
    case DdpTag::kOptimizer: return "optimizer";
  }
  return "?";
}

namespace {

sim::OpLabel label(DdpTag tag, int iteration) {
  return {static_cast<std::uint32_t>(tag), static_cast<std::uint32_t>(iteration)};
}

// The training loop of one rank. Iteration i+1 is issued when iteration i's
// optimizer step ends: a synchronous loop, as a script that reads the loss
// every step runs.
class RankProgram final : public sim::Process {
 public:
  RankProgram(const DdpJob& job, int rank, int world_size, std::uint64_t seed)
      : job_(job), rank_(rank), world_size_(world_size), seed_(seed) {}

  void issue(sim::Engine& e, int it) {
    using sim::StreamKind;
    const BlockModel& m = job_.model;
    const sim::Time slow = straggler_delay(job_.straggler, rank_, it, world_size_, seed_);
    const sim::OpRef data = e.enqueue(rank_, StreamKind::kHost, job_.data_load, label(DdpTag::kData, it));
    e.enqueue(rank_, StreamKind::kCompute, m.forward, label(DdpTag::kForward, it), data);
    const sim::OpRef bwd = e.enqueue(rank_, StreamKind::kCompute, m.backward + slow, label(DdpTag::kBackward, it));
    const sim::OpRef ar = e.enqueue_collective(
        rank_, sim::Engine::kWorld, {sim::CollectiveKind::kAllReduce, m.gradient_bytes},
        label(DdpTag::kAllReduce, it), bwd);
    const sim::OpRef opt = e.enqueue(rank_, StreamKind::kCompute, m.optimizer, label(DdpTag::kOptimizer, it), ar);
    e.wake_when_done(opt, *this, static_cast<std::uint64_t>(it));
  }

  void on_wake(sim::Engine& e, std::uint64_t token) override {
    const int next = static_cast<int>(token) + 1;
    if (next < job_.iterations) issue(e, next);
  }

 private:
  const DdpJob& job_;
  int rank_;
  int world_size_;
  std::uint64_t seed_;
};

// Turns op records into per-rank means and iteration end times.
class Accounting final : public sim::Observer {
 public:
  Accounting(int world_size, int iterations, int warmup)
      : warmup_(warmup),
        ranks_(static_cast<std::size_t>(world_size)),
        iteration_end_(static_cast<std::size_t>(iterations)),
        finished_ranks_(static_cast<std::size_t>(iterations), 0) {}

  void on_op(const sim::OpRecord& r) override {
    const auto it = static_cast<std::size_t>(r.label.iteration);
    Rank& acc = ranks_[static_cast<std::size_t>(r.rank)];
    const bool measured = static_cast<int>(it) >= warmup_;
    const sim::Time busy = r.end - r.start;
    switch (static_cast<DdpTag>(r.label.tag)) {
      case DdpTag::kData:
        if (measured) acc.data += busy;
        break;
      case DdpTag::kForward:
      case DdpTag::kBackward:
        if (measured) acc.compute += busy;
        break;
      case DdpTag::kAllReduce:
        if (measured) {
          acc.collective += busy;
          acc.wait += r.start - r.arrival;
        }
        acc.waits.push_back({r.arrival, r.start});
        break;
      case DdpTag::kOptimizer: {
        if (measured) {
          acc.compute += busy;
          // The compute stream sat idle from `ready` to `start` waiting for the
          // gradients; the part spent waiting for other ranks is wait, the rest
          // is communication that backward did not hide.
          sim::Time waiting;
          for (const auto& [from, to] : acc.waits) {
            const sim::Time lo = sim::max(from, r.ready), hi = sim::min(to, r.start);
            if (lo < hi) waiting += hi - lo;
          }
          acc.exposed += (r.start - r.ready) - waiting;
        }
        acc.waits.clear();
        iteration_end_[it] = sim::max(iteration_end_[it], r.end);
        ++finished_ranks_[it];
        break;
      }
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
      out.ranks.push_back(RankStats{static_cast<int>(r), a.data.ms() / n, a.compute.ms() / n,
                                    a.collective.ms() / n, a.exposed.ms() / n, a.wait.ms() / n});
    }
    return out;
  }

 private:
  struct Rank {
    sim::Time data, compute, collective, exposed, wait;
    std::vector<std::pair<sim::Time, sim::Time>> waits;  // this iteration's (arrival, start)
  };
  int warmup_;
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
  const NetworkParams net = job.network;
  sim::Engine engine(world_size,
                     [net](const sim::Collective& c, int n) { return collective_time(net, c, n); });
  Accounting accounting(world_size, job.iterations, job.warmup_iterations);
  engine.add_observer(accounting);
  if (trace != nullptr) engine.add_observer(*trace);

  std::vector<std::unique_ptr<RankProgram>> programs;
  programs.reserve(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    programs.push_back(std::make_unique<RankProgram>(job, r, world_size, seed));
    programs.back()->issue(engine, 0);
  }
  const sim::RunSummary summary = engine.run();

  RunResult out = accounting.result(world_size, job.iterations);
  out.outcome = summary.hung() ? Outcome::kHang : Outcome::kCompleted;
  out.blocked = summary.blocked;
  out.global_batch = static_cast<std::int64_t>(job.local_batch_size) * world_size;
  out.events = summary.events;
  out.rank_ops = summary.rank_ops;
  out.end = summary.end;
  return out;
}

}  // namespace ddpsim::models
