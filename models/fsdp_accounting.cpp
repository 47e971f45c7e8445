// The FSDP program's plan, closed form and accounting (models/fsdp_run.hpp).

#include <algorithm>
#include <stdexcept>

#include "models/fsdp_run.hpp"

namespace ddpsim::models {
namespace {

// Consecutive parameters (in `order`) of one unit as one segment of `times`.
std::vector<FsdpSegment> segments(const std::vector<int>& order, const std::vector<int>& unit_of,
                                  const std::vector<sim::Time>& times) {
  std::vector<FsdpSegment> out;
  for (int p : order) {
    const auto up = static_cast<std::size_t>(p);
    if (out.empty() || out.back().unit != unit_of[up]) out.push_back({unit_of[up], sim::Time{}});
    out.back().time += times[up];
  }
  return out;
}

}  // namespace

FsdpPlan plan_fsdp(const DdpJob& job, const FsdpConfig& cfg, int world_size, int gpus_per_node) {
  FsdpPlan plan;
  plan.shard_group = world_size == 1 ? 1 : shard_group_size(cfg.sharding, world_size, gpus_per_node);
  plan.strategy = plan.shard_group == 1 ? ShardingStrategy::kNoShard : cfg.sharding;
  plan.units = build_units(job.model, cfg.wrap);
  if (is_hybrid(cfg.sharding) && plan.shard_group > 1) {
    if (world_size % plan.shard_group != 0) throw std::invalid_argument("hybrid sharding needs whole nodes");
    plan.replicas = world_size / plan.shard_group;
  }
  const ModelSpec& model = job.model;
  std::vector<int> unit_of(model.parameters.size(), 0);
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    const FsdpUnit& unit = plan.units[u];
    for (int p : unit.params) unit_of[static_cast<std::size_t>(p)] = static_cast<int>(u);
    if (unit.params.empty()) {  // a root whose parameters its children took: no FlatParameter, no collective
      plan.unit_plans.push_back({});
      continue;
    }
    const std::int64_t e_param = element_size(model.parameters[static_cast<std::size_t>(unit.params.front())].dtype);
    const std::int64_t e_compute = cfg.param_dtype ? element_size(*cfg.param_dtype) : e_param;
    const std::int64_t e_reduce = cfg.reduce_dtype ? element_size(*cfg.reduce_dtype) : e_compute;
    const bool sharded = plan.shard_group > 1;
    const std::int64_t padded = padded_numel(unit.numel, plan.shard_group);
    plan.unit_plans.push_back({sharded ? padded * e_compute : 0, (sharded ? padded : unit.numel) * e_reduce,
                               sharded && reshards_after_forward(plan.strategy) && !unit.root,
                               plan.replicas > 1 ? padded / plan.shard_group * e_reduce : 0});
  }
  std::vector<int> registration(model.parameters.size());
  for (std::size_t p = 0; p < registration.size(); ++p) registration[p] = static_cast<int>(p);
  plan.forward = segments(registration, unit_of, model.forward);
  plan.backward = segments(model.ready_order, unit_of, model.backward);
  return plan;
}

int gathers_per_step(const FsdpPlan& plan, const FsdpUnitPlan& u, int accumulation) {
  if (u.gather_bytes == 0) return 0;
  if (u.freed_after_forward) return 2 * accumulation;
  return reshards_after_forward(plan.strategy) ? accumulation : 1;
}

std::unique_ptr<CollectiveTimer> replica_timer(const DdpJob& job, int replicas, int in_flight) {
  if (!job.cluster) throw std::invalid_argument("hybrid sharding needs a cluster");
  if (in_flight < 1) throw std::invalid_argument("replica groups in flight: at least the one priced");
  DdpJob across = job;
  ClusterSpec& c = *across.cluster;
  c.inter.bandwidth_GBps *= std::min(1.0, static_cast<double>(c.nics_per_node) / in_flight);
  c.nodes = replicas;
  c.gpus_per_node = 1;
  c.nics_per_node = 1;
  c.gpus_per_switch = 0;  // one GPU a node: no PCIe tree
  return analytic_timer(across, replicas);
}

std::unique_ptr<CollectiveTimer> replica_timer(const DdpJob& job, int replicas) {
  if (!job.cluster) throw std::invalid_argument("hybrid sharding needs a cluster");
  return replica_timer(job, replicas, job.cluster->gpus_per_node);
}

double fsdp_closed_form_ms(const DdpJob& job, const FsdpConfig& cfg, int world_size, int gpus_per_node,
                           CollectiveTimer& timer) {
  const FsdpPlan plan = plan_fsdp(job, cfg, world_size, gpus_per_node);
  const int k = cfg.gradient_accumulation;
  sim::Time total = (job.data_load + job.model.forward_total() + job.model.backward_total()) * k + job.model.optimizer;
  const bool sharded = plan.strategy != ShardingStrategy::kNoShard;
  const int group = plan.replicas > 1 ? plan.shard_group : world_size;
  const std::unique_ptr<CollectiveTimer> across = plan.replicas > 1 ? replica_timer(job, plan.replicas) : nullptr;
  for (const FsdpUnitPlan& u : plan.unit_plans) {
    if (u.gather_bytes > 0) {
      total += timer.time({sim::CollectiveKind::kAllGather, u.gather_bytes}, group, {}) * gathers_per_step(plan, u, k);
    }
    total += timer.time({sharded ? sim::CollectiveKind::kReduceScatter : sim::CollectiveKind::kAllReduce, u.reduce_bytes},
                        group, {});
    if (u.replica_bytes > 0) total += across->time({sim::CollectiveKind::kAllReduce, u.replica_bytes}, plan.replicas, {});
  }
  return total.ms();
}

namespace fsdp {

OpNamer fsdp_namer(const FsdpPlan& plan) {
  std::vector<std::string> modules;
  for (const FsdpUnit& u : plan.units) modules.push_back(unit_name(u));
  return [modules = std::move(modules)](const sim::OpLabel& label) {
    std::string name = fsdp_op_name(label);
    if (name.find(" unit ") != std::string::npos && label.index < modules.size()) name += " (" + modules[label.index] + ")";
    return name;
  };
}

Progress::Progress(int ranks_simulated, int iterations, int workers)
    : ranks(static_cast<std::size_t>(ranks_simulated)),
      by_worker(static_cast<std::size_t>(workers), Tally{std::vector<sim::Time>(static_cast<std::size_t>(iterations)),
                                                         std::vector<int>(static_cast<std::size_t>(iterations), 0)}),
      all(by_worker.front()) {}

void Progress::tally(int worker, int iteration, sim::Time at) {
  Tally& t = by_worker[static_cast<std::size_t>(worker)];
  const auto g = static_cast<std::size_t>(iteration);
  t.iteration_end[g] = sim::max(t.iteration_end[g], at);
  ++t.finished_ranks[g];
}

void Progress::gather() {
  for (const Tally& t : by_worker) {
    for (std::size_t g = 0; g < all.iteration_end.size(); ++g) {
      all.iteration_end[g] = sim::max(all.iteration_end[g], t.iteration_end[g]);
      all.finished_ranks[g] += t.finished_ranks[g];
    }
  }
}

void Accounting::on_op(const sim::OpRecord& r) {
  Rank& acc = ranks_[static_cast<std::size_t>(r.rank)];
  const bool measured = static_cast<int>(r.label.iteration) >= warmup_;
  const sim::Time busy = r.end - r.start;
  const auto tag = static_cast<FsdpTag>(r.label.tag);
  if (r.is_collective) {
    if (tag == FsdpTag::kFinalBarrier) return;
    acc.collectives.push_back({r.arrival, r.start, r.end});
    if (measured) acc.collective += busy;
    return;
  }
  if (tag == FsdpTag::kData) {
    if (measured) acc.data += busy;
    if (r.label.index == 0) acc.collectives.clear();  // a new optimizer step
    acc.in_backward = false;
    acc.forward_pending = true;
    return;
  }
  if (!measured || tag == FsdpTag::kArtifact) return;  // host work, not compute
  acc.compute += busy;
  // The compute stream idle while it waited for a collective: exposed while
  // a collective ran, wait while one waited for other ranks (as DDP's).
  // (Hybrid sharding's replica all-reduces run on the host stream.)
  const std::uint32_t after_kind = r.after ? r.after->stream % sim::kStreamsPerRank : 0;
  if (r.after && (after_kind == static_cast<std::uint32_t>(sim::StreamKind::kComm) ||
                  after_kind == static_cast<std::uint32_t>(sim::StreamKind::kHost))) {
    for (const Span& c : acc.collectives) {
      const auto overlap = [&](sim::Time from, sim::Time to) {
        const sim::Time lo = sim::max(from, r.ready), hi = sim::min(to, r.start);
        return lo < hi ? hi - lo : sim::Time{};
      };
      acc.exposed += overlap(c.start, c.end);
      acc.wait += overlap(c.arrival, c.start);
    }
  }
  if (tag == FsdpTag::kForward && acc.forward_pending) acc.forward_start = r.start, acc.forward_pending = false;
  if (tag == FsdpTag::kBackward) {  // the last micro-step's, DDP's timers' syncing one
    if (!acc.in_backward) acc.backward_start = r.start, acc.in_backward = true;
    acc.backward_end = r.end;
  }
  if (tag == FsdpTag::kOptimizer) {
    acc.forward_compute += acc.backward_start - acc.forward_start;
    acc.backward_compute += acc.backward_end - acc.backward_start;
  }
}

RunResult Accounting::result(const DdpJob& job, Progress& progress, const sim::RunSummary& summary, int simulated,
                             int world_size) const {
  RunResult out;
  const int iterations = job.total_iterations();
  out.world_size = world_size;
  out.iterations = iterations;
  measure_steps(out, progress.all.iteration_end, progress.all.finished_ranks, simulated, warmup_);
  const double n = std::max(1, out.measured_iterations);
  for (std::size_t r = 0; r < ranks_.size(); ++r) out.ranks.push_back(mean_stats(ranks_[r], static_cast<int>(r), n));
  out.outcome = !summary.crashes.empty() ? Outcome::kCrash : summary.hung() ? Outcome::kHang : Outcome::kCompleted;
  for (const sim::Crash& c : summary.crashes) out.errors.push_back(RankError{c.rank, c.at.ms(), c.message});
  out.blocked = summary.blocked;
  out.misalignments = misaligned_pairs(summary, name_of_);
  out.failure = analyse_failure(
      summary, progress.ranks,
      FailureContext{job.backend, job.watchdog_timeout, [](const sim::OpLabel&) { return std::string(); }, name_of_});
  for (const RankStatus& s : progress.ranks) {
    out.iterations_run.push_back(s.iterations_run);
    out.shadow_collectives.push_back(s.shadow_collectives);
  }
  for (std::size_t r = 0; r < progress.ranks.size(); ++r) {
    const RankStatus& s = progress.ranks[r];
    if (s.warning_iteration >= 0) out.warnings.push_back({static_cast<int>(r), s.warning_iteration, s.warning});
  }
  out.global_batch = static_cast<std::int64_t>(job.local_batch_size) * world_size * accumulation_;
  out.events = summary.events;
  out.rank_ops = summary.rank_ops;
  out.end = summary.end;
  return out;
}

}  // namespace fsdp
}  // namespace ddpsim::models
