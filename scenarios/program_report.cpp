#include "scenarios/program_report.hpp"

#include "models/fsdp_program.hpp"
#include "models/reducer.hpp"

namespace ddpsim::scenarios {
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

Volume volume(const Scenario& s, const models::DdpJob& job, int w) {
  Volume v;
  if (s.parallelism == Parallelism::kDdp) {
    const auto rebuilt = models::rebuilt_buckets(job.model, job.ddp);
    for (const models::Bucket& b : rebuilt ? *rebuilt : models::initial_buckets(job.model, job.ddp)) {
      v.sent += 2 * ring_share(b.bytes, w);
      ++v.collectives;
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

}  // namespace ddpsim::scenarios
