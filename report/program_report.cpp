#include "report/program_report.hpp"

#include <fmt/ostream.h>

#include "models/fsdp_program.hpp"
#include "models/reducer.hpp"

#include <cmath>
#include <tuple>

namespace ddpsim::report {

using namespace ddpsim::scenarios;  // the scenario and the sweep it renders

namespace {

int gpus_per_node(const models::DdpJob& job, int world_size) {
  return job.cluster ? job.cluster->gpus_per_node : world_size;
}

// (W-1)/W x bytes, in whole bytes.
std::int64_t ring_share(std::int64_t bytes, int w) { return bytes * (w - 1) / w; }

struct Volume {
  std::int64_t sent = 0;
  int collectives = 0;
};

std::vector<models::Bucket> step_buckets(const models::DdpJob& job) { return models::steady_buckets(job.model, job.ddp); }

// The measured steps a comm hook compresses, of how many.
std::pair<int, int> compressed_steps(const models::DdpJob& job) {
  return {job.ddp.comm_hook.compressed_steps(job.warmup_iterations, job.total_iterations()),
          job.total_iterations() - job.warmup_iterations};
}

Volume volume(const Scenario& s, const models::DdpJob& job, int w) {
  Volume v;
  if (s.parallelism == Parallelism::kDdp) {
    // A mean over the measured steps: a comm hook's all-reduces in those it compresses.
    const auto [compressed, measured] = compressed_steps(job);
    for (const models::Bucket& b : step_buckets(job)) {
      std::int64_t hooked = 0;
      int calls = 0;
      if (compressed > 0) {
        for (const models::HookStage& st : models::plan_bucket_hook(job.ddp.comm_hook, job.model, b, true, false).chain) {
          if (st.collective) hooked += 2 * ring_share(st.bytes, w), ++calls;
        }
      }
      v.sent += (2 * ring_share(b.bytes, w) * (measured - compressed) + hooked * compressed) / measured;
      v.collectives += (measured - compressed + calls * compressed + measured - 1) / measured;
    }
    return v;
  }
  const models::FsdpPlan plan = models::plan_fsdp(job, *s.fsdp, w, gpus_per_node(job, w));
  const bool sharded = plan.strategy != models::ShardingStrategy::kNoShard;
  for (const models::FsdpUnitPlan& u : plan.unit_plans) {
    const int gathers = models::gathers_per_step(plan, u, s.fsdp->gradient_accumulation);
    v.sent += gathers * ring_share(u.gather_bytes, plan.shard_group);
    v.collectives += gathers;
    v.sent += sharded ? ring_share(u.reduce_bytes, plan.shard_group) : 2 * ring_share(u.reduce_bytes, w);
    ++v.collectives;
    if (u.replica_bytes > 0) {
      v.sent += 2 * ring_share(u.replica_bytes, plan.replicas);
      ++v.collectives;
    }
  }
  return v;
}

}  // namespace

std::int64_t sent_bytes_per_step(const Scenario& s, const models::DdpJob& job, int world_size) {
  return volume(s, job, world_size).sent;
}

nlohmann::ordered_json comm_json(const Scenario& s, const models::DdpJob& job, int world_size) {
  const Volume v = volume(s, job, world_size);
  return {{"sent_bytes_per_step", v.sent}, {"collectives_per_step", v.collectives}};
}

std::string comm_hook_warning(const models::DdpJob& job) {
  const std::size_t buckets = step_buckets(job).size();
  if (!job.ddp.comm_hook.powersgd_family() || job.backend != models::Backend::kGloo || buckets < 2) return {};
  return fmt::format("{} on gloo with {} buckets: in PyTorch a bucket's P and Q all-reduces, launched from gloo's "
                     "worker thread, race the next bucket's for gloo's collective order, and a rank can abort "
                     "(op.preamble.length <= op.nbytes); one bucket avoids it (bucket_cap_mb and first_bucket_mb "
                     "past the gradient). The prediction assumes the order DDP issues",
                     models::to_string(job.ddp.comm_hook.kind), buckets);
}

HookSummary comm_hook_summary(const models::DdpJob& job) {
  const models::CommHook& hook = job.ddp.comm_hook;
  HookSummary out;
  std::tie(out.compressed_steps, out.measured_steps) = compressed_steps(job);
  for (const models::Bucket& b : step_buckets(job)) {
    const models::BucketHookPlan p = models::plan_bucket_hook(hook, job.model, b, true, false);
    out.input_bytes += p.input_bytes;
    out.wire_bytes += p.wire_bytes;
    out.compute_ms += p.compute().ms();
    for (const models::HookStage& st : p.chain) out.collectives += st.collective ? 1 : 0;
  }
  return out;
}

nlohmann::ordered_json comm_hook_json(const models::DdpJob& job) {
  const models::CommHook& hook = job.ddp.comm_hook;
  const HookSummary h = comm_hook_summary(job);
  nlohmann::ordered_json out{{"name", models::to_string(hook.kind)}};
  if (hook.powersgd_family()) {
    const models::PowerSgdOptions& o = hook.powersgd;
    out["options"] = {{"matrix_approximation_rank", o.matrix_approximation_rank},
                      {"start_powerSGD_iter", o.start_powerSGD_iter},
                      {"min_compression_rate", o.min_compression_rate},
                      {"use_error_feedback", o.use_error_feedback},
                      {"warm_start", o.warm_start},
                      {"orthogonalization_epsilon", o.orthogonalization_epsilon}};
  }
  const models::HookCost& c = hook.cost;
  out["compressed_steps"] = h.compressed_steps;
  out["measured_steps"] = h.measured_steps;
  out["input_bytes_per_step"] = h.input_bytes;
  out["wire_bytes_per_step"] = h.wire_bytes;
  out["compression_ratio"] = h.wire_bytes > 0 ? std::round(1e6 * static_cast<double>(h.input_bytes) / static_cast<double>(h.wire_bytes)) / 1e6 : 0.0;
  out["all_reduces_per_step"] = h.collectives;
  out["hook_compute_ms_per_step"] = std::round(h.compute_ms * 1e6) / 1e6;
  const std::string warning = comm_hook_warning(job);
  out["warning"] = warning.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(warning);
  out["rates"] = {{"cast_GBps", c.cast_bytes_per_s / 1e9}, {"pass_GBps", c.pass_bytes_per_s / 1e9},
                  {"matmul_GFLOPs", c.matmul_flops_per_s / 1e9}, {"alloc_GBps", c.alloc_bytes_per_s / 1e9}, {"op_us", static_cast<double>(c.per_op.count_ns()) / 1e3},
                  {"measured", c.measured}};
  return out;
}

// The comm hook's line: bytes handed over and all-reduced, its compute, which steps it compresses.
void write_comm_hook(std::ostream& out, const models::DdpJob& job) {
  const models::CommHook& hook = job.ddp.comm_hook;
  const HookSummary h = comm_hook_summary(job);
  const double ratio = h.wire_bytes > 0 ? static_cast<double>(h.input_bytes) / static_cast<double>(h.wire_bytes) : 0;
  fmt::print(out, "\ncomm hook {}: a step it compresses all-reduces {:.3f} MB of the {:.3f} MB DDP hands it ({:.1f}x less, "
                  "{} all-reduces) and computes {:.3f} ms (rates: {})",
             models::to_string(hook.kind), static_cast<double>(h.wire_bytes) / 1e6, static_cast<double>(h.input_bytes) / 1e6,
             ratio, h.collectives, h.compute_ms, hook.cost.measured ? "from the scenario" : "stated defaults, not measured");
  if (hook.powersgd_family()) {
    fmt::print(out, "; rank {}, from step {}: {} of the {} measured steps", hook.powersgd.matrix_approximation_rank,
               hook.powersgd.start_powerSGD_iter, h.compressed_steps, h.measured_steps);
  }
  fmt::print(out, "\n");
  if (const std::string w = comm_hook_warning(job); !w.empty()) fmt::print(out, "warning: {}\n", w);
}

nlohmann::ordered_json fsdp_layout_json(const Scenario& s, const models::DdpJob& job, int world_size) {
  const models::FsdpPlan plan = models::plan_fsdp(job, *s.fsdp, world_size, gpus_per_node(job, world_size));
  nlohmann::ordered_json units = nlohmann::ordered_json::array();
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    const models::FsdpUnit& unit = plan.units[u];
    units.push_back({{"index", u},
                     {"module", unit.root ? "<root>" : unit.module},
                     {"numel", unit.numel},
                     {"padded_numel", models::padded_numel(unit.numel, plan.shard_group)},
                     {"all_gather_bytes", plan.unit_plans[u].gather_bytes},
                     {"gathered_in_backward", plan.unit_plans[u].freed_after_forward},
                     {"reduce_bytes", plan.unit_plans[u].reduce_bytes}});
  }
  return {{"sharding_strategy", models::to_string(plan.strategy)},
          {"shard_group", plan.shard_group},
          {"units", std::move(units)}};
}

}  // namespace ddpsim::report
