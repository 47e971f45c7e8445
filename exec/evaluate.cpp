#include "exec/evaluate.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "models/collective_library.hpp"
#include "sim/levelized.hpp"

namespace ddpsim::exec {

namespace {

// What a collective costs: the policy's timer, or the program's analytic
// engine. Every collective is over the world group; the fast path
// simulates one member of it, priced over all. With the policy's timer it
// counts the collectives it priced, for the timer's link loads.
class Pricing {
 public:
  Pricing(const models::TrainingProgram& program, models::CollectiveTimer* timer, int simulated, int world_size)
      : timer_(timer), slow_(program.slow_links()), simulated_(simulated), world_size_(world_size) {
    if (timer_ == nullptr) {
      own_timer_ = program.analytic_timer(world_size);
      timer_ = own_timer_.get();
    }
  }
  /// The timer every collective is priced by: the policy's, or the program's analytic one.
  models::CollectiveTimer* timer() const { return timer_; }
  /// The program's links that slow mid-run, each a price change on `engine`
  /// (time order only: the engine runs the changes on its one thread). A
  /// collective in flight at a change is priced again, so the link loads,
  /// which count pricings, are not reported for such a run.
  void schedule_slowdowns(const models::TrainingProgram& program, sim::Engine& engine) {
    for (const models::LinkSlowdown& s : program.link_slowdowns()) {
      changes_ = true;
      engine.schedule_price_change(s.at, [this, link = s.link] { slow_ = models::after_change(slow_, link); });
    }
  }
  sim::CollectiveCostFn cost() const {
    return [this](const sim::Collective& c, int n) {
      const int group = n == simulated_ ? world_size_ : n;
      if (own_timer_ == nullptr && !changes_) {
        const std::lock_guard<std::mutex> lock(counted_mutex_);
        ++counted_[{static_cast<int>(c.kind), c.bytes, group}];
      }
      return timer_->time(c, group, slow_);
    };
  }
  /// What each link carried over the run (`run`'s iterations and end give
  /// the means): the timer's link loads of the collectives priced, by name.
  std::vector<models::LinkLoad> link_loads(const models::RunResult& run) const {
    std::vector<models::TimedCall> calls;
    for (const auto& [key, count] : counted_) {
      const auto& [kind, bytes, group] = key;
      calls.push_back({{static_cast<sim::CollectiveKind>(kind), bytes}, group, slow_, count});
    }
    std::vector<models::LinkLoad> loads = calls.empty() ? std::vector<models::LinkLoad>{} : timer_->link_loads(calls);
    const double seconds = run.end.ms() / 1e3;
    for (models::LinkLoad& l : loads) {
      l.bytes_per_step = l.bytes / std::max(1, run.iterations);
      l.busy_share = seconds > 0 ? std::min(1.0, l.busy_s / seconds) : 0;
    }
    return loads;
  }

 private:
  std::unique_ptr<models::CollectiveTimer> own_timer_;
  models::CollectiveTimer* timer_;
  std::vector<models::SlowLink> slow_;
  bool changes_ = false;  // a link slows mid-run (schedule_slowdowns)
  int simulated_, world_size_;
  mutable std::mutex counted_mutex_;
  mutable std::map<std::tuple<int, std::int64_t, int>, std::int64_t> counted_;  // (kind, bytes, group) -> calls
};

// Engine threads for a rank-major run: what the policy allows, each with at
// least kRanksPerEngineThread ranks (a sweep's threads meet once per collective).
int engine_threads(const ExecutionPolicy& policy, int ranks) {
  return std::clamp(ranks / kRanksPerEngineThread, 1, std::max(1, policy.threads));
}

// The program's `simulated` ranks on the engine; nothing if a rank-major
// run reached what only time order simulates.
std::optional<models::RunResult> on_engine(const models::TrainingProgram& program, int simulated, int world_size,
                                           std::uint64_t seed, const ExecutionPolicy& policy, sim::Schedule schedule,
                                           sim::Observer* trace) {
  const std::unique_ptr<models::Evaluation> evaluation = program.evaluation(simulated, world_size, seed);
  Pricing pricing(program, policy.timer, simulated, world_size);
  const models::CommSettings comm = program.comm();
  const std::unique_ptr<sim::CollectiveLibrary> library = models::collective_library(comm.backend, comm.fingerprint_bytes, comm.reads);
  const int threads = schedule == sim::Schedule::kRankMajor ? engine_threads(policy, simulated) : 1;
  sim::Engine engine(simulated, pricing.cost(),
                     sim::EngineOptions{library.get(), comm.watchdog_timeout, schedule, threads, comm.compute_slowdown,
                                        comm.comm_slowdown});
  engine.add_observer(evaluation->accounting());
  if (trace != nullptr) engine.add_observer(*trace);
  evaluation->price_groups_with(pricing.timer());
  pricing.schedule_slowdowns(program, engine);
  evaluation->start(engine);
  const sim::RunSummary summary = engine.run();
  if (summary.needs_time_order) return std::nullopt;
  models::RunResult out = evaluation->finish(summary);
  out.links = pricing.link_loads(out);
  return out;
}

// A uniform program evaluated op by op across ranks (sim::run_levelized);
// nothing if a collective's members arrive further apart than the watchdog allows.
std::optional<models::RunResult> levelized(const models::TrainingProgram& program, int simulated, int world_size,
                                           std::uint64_t seed, const ExecutionPolicy& policy) {
  const std::unique_ptr<models::Evaluation> evaluation = program.evaluation(simulated, world_size, seed);
  const Pricing pricing(program, policy.timer, simulated, world_size);
  const sim::UniformProgram ops = evaluation->record();
  const models::CommSettings comm = program.comm();
  const std::unique_ptr<sim::CollectiveLibrary> library = models::collective_library(comm.backend, comm.fingerprint_bytes, comm.reads);
  const models::Evaluation& ev = *evaluation;
  const sim::LevelizedOptions options{library.get(), comm.watchdog_timeout,
                                      [&ev](int rank, const sim::ProgramOp& op) { return ev.per_rank(rank, op); }};
  const std::optional<sim::LevelizedRun> run =
      sim::run_levelized(ops, simulated, pricing.cost(), options, evaluation->accounting());
  if (!run) return std::nullopt;
  models::RunResult out = evaluation->finish_levelized(*run);
  out.levelized = true;
  out.links = pricing.link_loads(out);
  return out;
}

// `simulated` ranks each simulated, of `world_size`: levelized, rank-major
// or time order, each falling back to the next.
models::RunResult every_rank(const models::TrainingProgram& program, int simulated, int world_size, std::uint64_t seed,
                             const ExecutionPolicy& policy, sim::Observer* trace) {
  const models::ProgramTraits traits = program.traits();
  if (trace == nullptr && !policy.schedule && traits.uniform) {
    if (std::optional<models::RunResult> r = levelized(program, simulated, world_size, seed, policy)) return *std::move(r);
  }
  if (trace == nullptr && choose_schedule(traits, simulated, policy) == sim::Schedule::kRankMajor) {
    if (std::optional<models::RunResult> r =
            on_engine(program, simulated, world_size, seed, policy, sim::Schedule::kRankMajor, nullptr)) {
      return *std::move(r);
    }
  }
  return *on_engine(program, simulated, world_size, seed, policy, sim::Schedule::kTimeOrder, trace);
}

// The fast path's one rank as every rank of `world_size`.
models::RunResult as_every_rank(models::RunResult one, int world_size) {
  const auto w = static_cast<std::size_t>(world_size);
  const models::RankStats stats = one.ranks.front();
  one.ranks.assign(w, stats);
  for (std::size_t r = 0; r < w; ++r) one.ranks[r].rank = static_cast<int>(r);
  one.iterations_run.assign(w, one.iterations_run.front());
  one.shadow_collectives.assign(w, one.shadow_collectives.front());
  one.rank_ops *= static_cast<std::uint64_t>(world_size);
  one.fast_path = true;
  return one;
}

}  // namespace

// Time order sweeps the ranks that share an instant in memory order, which
// is fast on one thread while ranks move in lockstep (no straggler, one
// slow rank); ranks with independent random delays never share one, and
// rank-major order is then 1.7 to 1.9 times faster. Rank-major's sweeps
// also spread over threads: with two, lockstep ResNet-50 takes 6 to 24 %
// less time than time order on one at 16,384 ranks, 17 to 22 % at 65,536
// (bench/README.md#schedules).
sim::Schedule choose_schedule(const models::ProgramTraits& traits, int ranks, const ExecutionPolicy& policy) {
  if (policy.schedule) return *policy.schedule;
  if (!traits.keeps_lockstep) return sim::Schedule::kTimeOrder;
  return traits.independent_delays || engine_threads(policy, ranks) > 1 ? sim::Schedule::kRankMajor
                                                                         : sim::Schedule::kTimeOrder;
}

models::RunResult evaluate(const models::TrainingProgram& program, int world_size, std::uint64_t seed,
                           const ExecutionPolicy& policy, sim::Observer* trace) {
  if (world_size > 1 && trace == nullptr && policy.fast_path && program.traits().symmetric) {
    // Every rank runs the same program with the same times, so every
    // collective finds all ranks arriving together: rank 0 alone, its
    // collectives priced over W, is every rank. Anything that did not
    // complete (a crash every rank has) is simulated rank by rank instead.
    models::RunResult one = every_rank(program, 1, world_size, seed, policy, nullptr);
    if (one.outcome == models::Outcome::kCompleted && one.errors.empty() && one.misalignments.empty()) {
      return as_every_rank(std::move(one), world_size);
    }
  }
  return every_rank(program, world_size, world_size, seed, policy, trace);
}

models::RunResult simulate_ddp(const models::DdpJob& job, int world_size, std::uint64_t seed,
                               const ExecutionPolicy& policy, sim::Observer* trace) {
  return evaluate(models::DdpProgram(job), world_size, seed, policy, trace);
}

}  // namespace ddpsim::exec
