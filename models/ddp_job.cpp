#include "models/ddp_job.hpp"

#include "models/fsdp_program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "models/nccl_model.hpp"

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
  if (label.tag >= static_cast<std::uint32_t>(FsdpTag::kData)) return fsdp_op_name(label);
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
    case DdpTag::kBucketCopyOut: return fmt::format("copy out bucket {}", label.index);
    case DdpTag::kHookCompute: return fmt::format("comm hook bucket {}", label.index);
    case DdpTag::kHookAllReduce:
      return fmt::format("all_reduce bucket {} (comm hook, {})", label.index / kHookStages, label.index % kHookStages);
    case DdpTag::kHookCallback:
      return fmt::format("comm hook callback bucket {} ({})", label.index / kHookStages, label.index % kHookStages);
    case DdpTag::kVerifyParams:
      return label.index == 0 ? "all_gather parameter count" : "broadcast parameter shapes";
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

bool uniform_program(const DdpJob& job) {
  // Without find_unused_parameters, an unused parameter stops its rank at
  // the next forward (PyTorch's error).
  return std::all_of(job.faults.begin(), job.faults.end(), [](const Fault& f) { return f.keeps_program_uniform(); }) &&
         (job.ddp.unused_parameters.empty() || job.ddp.find_unused_parameters || job.ddp.static_graph);
}

bool symmetric(const DdpJob& job) {
  // The debug fingerprint's all-gather is sized by the ranks simulated: not for the fast path.
  return job.faults.empty() && std::holds_alternative<NoStraggler>(job.straggler) && !job.fingerprint;
}

bool keeps_lockstep(const DdpJob& job) {
  return std::all_of(job.faults.begin(), job.faults.end(), [](const Fault& f) { return f.keeps_lockstep(); });
}

std::unique_ptr<CollectiveTimer> analytic_timer(const DdpJob& job, int world_size) {
  if (job.collective_model == CollectiveModel::kNccl) {
    if (!job.cluster) throw std::invalid_argument("NCCL's model needs a cluster");
    return std::make_unique<NcclTimer>(*job.cluster, job.network.launch_overhead, job.nccl_bandwidth_scale);
  }
  return std::make_unique<AnalyticTimer>(cluster_of(job, world_size), job.network.launch_overhead, job.algorithm,
                                         broadcast_of(job.backend));
}

Broadcast broadcast_of(Backend backend) {
  return backend == Backend::kGloo ? Broadcast::kBinomialTree : Broadcast::kPipelined;
}

ClusterSpec cluster_of(const DdpJob& job, int world_size) {
  return job.cluster ? *job.cluster : single_switch(world_size, job.network);
}

std::vector<SlowLink> slow_links(const DdpJob& job) {
  std::vector<SlowLink> out;
  for (const Fault& f : job.faults) {
    const auto* link = f.as<fault::SlowLink>();
    if (link == nullptr || link->at) continue;
    for (int r : f.ranks) out.push_back({r, link->factor});
  }
  return out;
}

std::vector<LinkSlowdown> link_slowdowns(const DdpJob& job) {
  std::vector<LinkSlowdown> out;
  for (const Fault& f : job.faults) {
    const auto* link = f.as<fault::SlowLink>();
    if (link == nullptr || !link->at) continue;
    for (int r : f.ranks) out.push_back({{r, link->factor}, *link->at});
  }
  std::stable_sort(out.begin(), out.end(), [](const LinkSlowdown& a, const LinkSlowdown& b) { return a.at < b.at; });
  return out;
}

}  // namespace ddpsim::models
