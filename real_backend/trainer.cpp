#include "real_backend/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <regex>
#include <stdexcept>

#include "models/reducer.hpp"
#include "models/restart.hpp"
#include "models/sampler.hpp"
#include "real_backend/checkpoint.hpp"
#include "sim/random.hpp"

namespace ddpsim::real {
namespace {

constexpr std::uint64_t kDataStream = 0x53594e5448444154ULL;  // "SYNTHDAT"
using Label = CollectiveLabel;

// Where training stands: what a checkpoint holds besides the tensors.
struct Position {
  std::int64_t step = 0;
  int epoch = 0;
  int steps_in_epoch = 0;
  bool elastic_epoch = false;
  int world_size = 1;
  std::vector<std::int64_t> epoch_consumed;
};

// One epoch's work: every rank's example IDs (each rank computes all of them,
// so rank 0 knows what the whole job consumed), the steps, the first to run.
struct EpochPlan {
  std::vector<std::vector<std::int64_t>> ranks;
  std::vector<std::int64_t> consumed_before;  // elastic: IDs taken before the plan started
  int steps = 0;
  int first_step = 0;
  bool elastic = false;

  std::vector<std::int64_t> consumed_after(int steps_done, int batch) const {
    std::vector<std::int64_t> ids = consumed_before;
    for (const auto& r : ranks) {
      const auto n = std::min(r.size(), static_cast<std::size_t>(steps_done) * static_cast<std::size_t>(batch));
      ids.insert(ids.end(), r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n));
    }
    return ids;
  }
};

EpochPlan plan_epoch(const TrainerOptions& o, int world, int epoch, const Position& at) {
  const models::SamplerConfig sampler{o.dataset_size, world, o.shuffle, o.seed, false};
  EpochPlan plan;
  const bool resuming_here = epoch == at.epoch && !at.epoch_consumed.empty();
  if (resuming_here && (at.elastic_epoch || at.world_size != world)) {
    // The simulator's elastic rule: the epoch's order without what was consumed, rank-strided, no padding.
    std::vector<std::int64_t> order = at.epoch_consumed;
    const auto rest = models::epoch_order(sampler, epoch);
    order.insert(order.end(), rest.begin(), rest.end());
    auto resumed = models::resume_epoch(order, o.dataset_size, static_cast<std::int64_t>(at.epoch_consumed.size()), world);
    plan.ranks = std::move(resumed.ranks);
    plan.consumed_before = at.epoch_consumed;
    std::size_t longest = 0;
    for (const auto& r : plan.ranks) longest = std::max(longest, r.size());
    // Every rank runs the same number of steps; the last batches may be short (or empty).
    plan.steps = static_cast<int>((longest + static_cast<std::size_t>(o.batch_size) - 1) / static_cast<std::size_t>(o.batch_size));
    plan.elastic = true;
    return plan;
  }
  for (int r = 0; r < world; ++r) plan.ranks.push_back(models::rank_indices(sampler, epoch, r));  // set_epoch(epoch)
  plan.steps = static_cast<int>(plan.ranks.front().size() / static_cast<std::size_t>(o.batch_size));  // drop the ragged tail
  plan.first_step = epoch == at.epoch ? at.steps_in_epoch : 0;
  return plan;
}

bool has_fault(const TrainerOptions& o, Fault::Kind kind, int rank, std::int64_t iteration) {
  return std::any_of(o.faults.begin(), o.faults.end(),
                     [&](const Fault& f) { return f.kind == kind && f.rank == rank && f.iteration == iteration; });
}

void log(const TrainerOptions& o, int rank, const std::string& message) {
  if (rank == 0 && o.log) o.log(message);
}

}  // namespace

Fault parse_fault(const std::string& text) {
  static const std::regex kSyntax(R"((skip-backward|kill):rank=(\d{1,6}),(iter|step)=(\d{1,9}))");
  std::smatch m;
  if (!std::regex_match(text, m, kSyntax)) {
    throw std::invalid_argument(fmt::format(
        "--fault '{}': expected skip-backward:rank=R,iter=I or kill:rank=R,step=S (R, I, S non-negative integers)", text));
  }
  return {m[1] == "kill" ? Fault::Kind::kKill : Fault::Kind::kSkipBackward, std::stoi(m[2]), std::stoi(m[4])};
}

void synthetic_example(std::uint64_t seed, std::int64_t id, int input, int output, float* x, float* y) {
  sim::Rng rng = sim::Rng::for_stream(seed, {kDataStream, static_cast<std::uint64_t>(id)});
  double s = 0;
  for (int i = 0; i < input; ++i) {
    x[i] = static_cast<float>(sim::draw_uniform(rng, -1, 1));
    s += x[i] * (i % 2 == 0 ? 1.0 : -0.5);
  }
  for (int o = 0; o < output; ++o) y[o] = static_cast<float>(std::tanh(s + 0.1 * o));
}

std::string parallelism_name(Parallelism p) {
  switch (p) {
    case Parallelism::kDdp:
      return "ddp";
    case Parallelism::kFullShard:
      return "full_shard";
    case Parallelism::kShardGradOp:
      return "shard_grad_op";
    case Parallelism::kHybridShard:
      return "hybrid_shard";
  }
  return "ddp";
}

namespace {

// Batch `b` of this rank's partition `mine` into x and y; its IDs appended to `ids`.
void load_batch(const TrainerOptions& o, const std::vector<std::int64_t>& mine, int b, StepTiming& timing,
                std::vector<float>& x, std::vector<float>& y, std::vector<std::int64_t>& ids) {
  const auto begin = std::min(mine.size(), static_cast<std::size_t>(b) * static_cast<std::size_t>(o.batch_size));
  const auto end = std::min(mine.size(), begin + static_cast<std::size_t>(o.batch_size));
  timing.examples = static_cast<int>(end - begin);
  x.assign(static_cast<std::size_t>(timing.examples * o.shape.input), 0.0f);
  y.assign(static_cast<std::size_t>(timing.examples * o.shape.output), 0.0f);
  for (std::size_t i = begin; i < end; ++i) {
    const std::size_t row = i - begin;
    ids.push_back(mine[i]);
    synthetic_example(o.seed, mine[i], o.shape.input, o.shape.output, x.data() + row * static_cast<std::size_t>(o.shape.input),
                      y.data() + row * static_cast<std::size_t>(o.shape.output));
  }
}

// One training step: data, forward, backward (or the fault's skip), all-reduces, optimizer.
// x and y: the batch's buffers, reused from step to step.
StepTiming train_step(Transport& t, Program& program, const TrainerOptions& o, const std::vector<std::int64_t>& mine, int b,
                      std::int64_t step, int epoch, std::vector<float>& x, std::vector<float>& y, TrainResult& out) {
  const int rank = t.rank();
  StepTiming timing;
  timing.iteration = static_cast<int>(step);
  timing.epoch = epoch;
  const double t0 = steady_ms();
  load_batch(o, mine, b, timing, x, y, out.epochs.back().ids);
  const double t1 = steady_ms();
  timing.data_ms = t1 - t0;
  program.forward(t, x.data(), y.data(), timing.examples, timing);
  bool skip = has_fault(o, Fault::Kind::kSkipBackward, rank, step);
  if (o.symmetric_skip) skip = t.all_reduce_scalar(skip ? 1.0f : 0.0f, {Label::Kind::kSkipVote, timing.iteration, -1}) > 0;
  timing.skipped = skip;
  if (skip) {
    log(o, rank, fmt::format("iteration {}: backward skipped{}", step, o.symmetric_skip ? " by every rank (vote)" : ""));
    timing.compute_ms = timing.forward_compute_ms;
  } else {
    program.backward_and_step(t, timing);
  }
  timing.step_ms = steady_ms() - t0;
  return timing;
}

// After step `step` (batch `b` of `plan`), on every rank: the program's checkpoint, when one is due.
void checkpoint_if_due(Transport& t, Program& program, const TrainerOptions& o, const EpochPlan& plan, int epoch, int b,
                       std::int64_t step) {
  if (o.checkpoint_dir.empty() || o.checkpoint_every <= 0 || step % o.checkpoint_every != 0) return;
  TrainState s;
  s.step = step;
  s.world_size = t.world_size();
  s.seed = o.seed;
  if (b + 1 == plan.steps) {
    s.epoch = epoch + 1;  // the epoch is done: the next starts from its beginning
  } else {
    s.epoch = epoch;
    s.steps_in_epoch = b + 1;
    s.elastic_epoch = plan.elastic;
    s.epoch_consumed = plan.consumed_after(b + 1, o.batch_size);
  }
  const std::string message = program.checkpoint(t, s, o);
  log(o, t.rank(), fmt::format("step {}: checkpoint {}", step, message));
}

// Where the newest valid checkpoint says training stands (the start, if there is none).
Position resume_position(Transport& t, Program& program, const TrainerOptions& o, TrainResult& out) {
  const int world = t.world_size();
  const std::optional<TrainState> s = program.resume(t, o);
  if (!s) return Position{0, 0, 0, false, world, {}};
  if (s->seed != o.seed) throw std::runtime_error(fmt::format("checkpoint seed {} differs from --seed {}", s->seed, o.seed));
  out.resumed_from_step = s->step;
  if (s->world_size != world) {
    log(o, t.rank(), fmt::format("elastic resume: written by {} rank(s), resuming on {}; the rest of epoch {} is "
                                 "spread over the new ranks",
                                 s->world_size, world, s->epoch));
  }
  return Position{s->step, s->epoch, s->steps_in_epoch, s->elastic_epoch, s->world_size, s->epoch_consumed};
}

}  // namespace

TrainResult train(Transport& t, Program& program, const TrainerOptions& o) {
  const int rank = t.rank(), world = t.world_size();
  TrainResult out;
  program.start(t);
  Position at = o.resume ? resume_position(t, program, o, out) : Position{0, 0, 0, false, world, {}};
  std::vector<float> x, y;
  std::int64_t step = at.step;
  bool stop = false;
  for (int epoch = at.epoch; epoch < o.epochs && !stop; ++epoch) {
    const EpochPlan plan = plan_epoch(o, world, epoch, at);
    const std::vector<std::int64_t>& mine = plan.ranks[static_cast<std::size_t>(rank)];
    out.epochs.push_back({epoch, {}});
    for (int b = plan.first_step; b < plan.steps; ++b) {
      if (o.max_steps >= 0 && step >= o.max_steps) {
        stop = true;
        break;
      }
      if (has_fault(o, Fault::Kind::kKill, rank, step)) {
        std::fprintf(stderr, "rank %d: fault kill: SIGKILL at step %lld\n", rank, static_cast<long long>(step));
        std::fflush(stderr);
        std::raise(SIGKILL);
      }
      out.steps.push_back(train_step(t, program, o, mine, b, step, epoch, x, y, out));
      ++step;
      checkpoint_if_due(t, program, o, plan, epoch, b, step);
    }
    at = Position{step, epoch + 1, 0, false, world, {}};
  }
  t.barrier();  // on its own communicator: never paired with a training collective
  out.parameters = program.parameters(t);
  program.describe(out);
  return out;
}

namespace {

// The slowest rank's time: a collective is done when every rank holds its
// result. (A rank's own clock can stop early: Open MPI's binomial all-reduce
// ends on rank 0 with sends that complete once buffered, while the bytes are
// still on the wire to the others.)
double slowest_ms(Transport& t, double mine) {
  double slowest = mine;
  for (int root = 0; root < t.world_size(); ++root) {
    double theirs = mine;
    t.broadcast(&theirs, sizeof theirs, root);
    slowest = std::max(slowest, theirs);
  }
  return slowest;
}

}  // namespace

std::vector<SweepRow> collective_sweep(Transport& t, sim::CollectiveKind kind, float* buffer, std::int64_t min_bytes,
                                       std::int64_t max_bytes, int iters) {
  if (kind == sim::CollectiveKind::kAllReduce) return allreduce_sweep(t, buffer, min_bytes, max_bytes, iters);
  std::vector<SweepRow> rows;
  const auto w = static_cast<std::size_t>(t.world_size());
  const bool split = kind != sim::CollectiveKind::kBroadcast;  // n / W floats a rank
  for (std::int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    std::size_t n = std::max<std::size_t>(1, static_cast<std::size_t>(bytes / 4));
    if (split) n = std::max(w, n - n % w);
    if (static_cast<std::int64_t>(n * 4) > max_bytes + 4) break;
    t.sweep_collective(kind, buffer, n);  // warm-up
    t.barrier();
    const double t0 = steady_ms();
    for (int i = 0; i < iters; ++i) t.sweep_collective(kind, buffer, n);
    SweepRow r;
    r.bytes = static_cast<std::int64_t>(n * 4);
    r.time_us = slowest_ms(t, steady_ms() - t0) * 1000 / iters;
    r.algbw_GBps = static_cast<double>(r.bytes) / (r.time_us * 1e3);
    r.busbw_GBps = split ? r.algbw_GBps * static_cast<double>(w - 1) / static_cast<double>(w) : r.algbw_GBps;
    rows.push_back(r);
  }
  return rows;
}

std::vector<SweepRow> allreduce_sweep(Transport& t, float* buffer, std::int64_t min_bytes, std::int64_t max_bytes, int iters) {
  std::vector<SweepRow> rows;
  const int w = t.world_size();
  int iteration = 0;
  for (std::int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2, ++iteration) {
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, bytes / 4));
    const Label label{Label::Kind::kBucketAllReduce, iteration, 0};
    t.wait(t.all_reduce_async(buffer, n, label));  // warm-up
    t.barrier();
    const double t0 = steady_ms();
    for (int i = 0; i < iters; ++i) t.wait(t.all_reduce_async(buffer, n, label));
    SweepRow r;
    r.bytes = static_cast<std::int64_t>(n * 4);
    r.time_us = slowest_ms(t, steady_ms() - t0) * 1000 / iters;
    r.algbw_GBps = static_cast<double>(r.bytes) / (r.time_us * 1e3);
    r.busbw_GBps = r.algbw_GBps * 2.0 * (w - 1) / w;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ddpsim::real
