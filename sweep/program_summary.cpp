#include "sweep/program_summary.hpp"

#include <fmt/format.h>

#include <tuple>

#include "models/comm_hook.hpp"
#include "models/fsdp_program.hpp"

namespace ddpsim::scenarios {
namespace {

int gpus_per_node(const models::DdpJob& job, int world_size) {
  return job.cluster ? job.cluster->gpus_per_node : world_size;
}

// (W-1)/W x bytes, in whole bytes.
std::int64_t ring_share(std::int64_t bytes, int w) { return bytes * (w - 1) / w; }

// The measured steps a comm hook compresses, of how many.
std::pair<int, int> compressed_steps(const models::DdpJob& job) {
  return {job.ddp.comm_hook.compressed_steps(job.warmup_iterations, job.total_iterations()),
          job.total_iterations() - job.warmup_iterations};
}

// DDP's volume: a mean over the measured steps, a comm hook's all-reduces in those it compresses.
void ddp_volume(const models::DdpJob& job, const std::vector<models::Bucket>& buckets, int w, ProgramSummary& out) {
  const auto [compressed, measured] = compressed_steps(job);
  for (const models::Bucket& b : buckets) {
    std::int64_t hooked = 0;
    int calls = 0;
    if (compressed > 0) {
      for (const models::HookStage& st : models::plan_bucket_hook(job.ddp.comm_hook, job.model, b, true, false).chain) {
        if (st.collective) hooked += 2 * ring_share(st.bytes, w), ++calls;
      }
    }
    out.sent_bytes_per_step += (2 * ring_share(b.bytes, w) * (measured - compressed) + hooked * compressed) / measured;
    out.collectives_per_step += (measured - compressed + calls * compressed + measured - 1) / measured;
  }
}

HookSummary hook_summary(const models::DdpJob& job, const std::vector<models::Bucket>& buckets) {
  HookSummary out;
  std::tie(out.compressed_steps, out.measured_steps) = compressed_steps(job);
  for (const models::Bucket& b : buckets) {
    const models::BucketHookPlan p = models::plan_bucket_hook(job.ddp.comm_hook, job.model, b, true, false);
    out.input_bytes += p.input_bytes;
    out.wire_bytes += p.wire_bytes;
    out.compute_ms += p.compute().ms();
    for (const models::HookStage& st : p.chain) out.collectives += st.collective ? 1 : 0;
  }
  return out;
}

std::string hook_warning(const models::DdpJob& job, std::size_t buckets) {
  if (!job.ddp.comm_hook.powersgd_family() || job.backend != models::Backend::kGloo || buckets < 2) return {};
  return fmt::format("{} on gloo with {} buckets: in PyTorch a bucket's P and Q all-reduces, launched from gloo's "
                     "worker thread, race the next bucket's for gloo's collective order, and a rank can abort "
                     "(op.preamble.length <= op.nbytes); one bucket avoids it (bucket_cap_mb and first_bucket_mb "
                     "past the gradient). The prediction assumes the order DDP issues",
                     models::to_string(job.ddp.comm_hook.kind), buckets);
}

void summarize_fsdp(const Scenario& s, const models::DdpJob& job, int w, ProgramSummary& out) {
  const models::FsdpPlan plan = models::plan_fsdp(job, *s.fsdp, w, gpus_per_node(job, w));
  const bool sharded = plan.strategy != models::ShardingStrategy::kNoShard;
  for (std::size_t i = 0; i < plan.unit_plans.size(); ++i) {
    const models::FsdpUnitPlan& u = plan.unit_plans[i];
    const int gathers = models::gathers_per_step(plan, u, s.fsdp->gradient_accumulation);
    out.sent_bytes_per_step += gathers * ring_share(u.gather_bytes, plan.shard_group);
    out.collectives_per_step += gathers;
    out.sent_bytes_per_step += sharded ? ring_share(u.reduce_bytes, plan.shard_group) : 2 * ring_share(u.reduce_bytes, w);
    ++out.collectives_per_step;
    if (u.replica_bytes > 0) {
      out.sent_bytes_per_step += 2 * ring_share(u.replica_bytes, plan.replicas);
      ++out.collectives_per_step;
    }
    const models::FsdpUnit& unit = plan.units[i];
    out.units.push_back({unit.root ? "<root>" : unit.module, unit.numel,
                         models::padded_numel(unit.numel, plan.shard_group), u.gather_bytes, u.freed_after_forward,
                         u.reduce_bytes});
  }
  out.sharding_strategy = std::string(models::to_string(plan.strategy));
  out.shard_group = plan.shard_group;
}

}  // namespace

ProgramSummary summarize_program(const Scenario& s, const models::DdpJob& job, int world_size) {
  ProgramSummary out;
  if (s.parallelism == Parallelism::kFsdp) {
    summarize_fsdp(s, job, world_size, out);
    return out;
  }
  const std::vector<models::Bucket> steady = models::steady_buckets(job.model, job.ddp);
  ddp_volume(job, steady, world_size, out);
  if (job.ddp.comm_hook.kind != models::CommHookKind::kAllReduce) {
    out.hook = hook_summary(job, steady);
    out.hook_warning = hook_warning(job, steady.size());
  }
  out.initial_buckets = models::initial_buckets(job.model, job.ddp);
  out.rebuilt_buckets = models::rebuilt_buckets(job.model, job.ddp);
  out.rebuild_iteration = models::rebuild_iteration(job.ddp);
  return out;
}

}  // namespace ddpsim::scenarios
