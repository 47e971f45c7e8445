#include "sweep/work_estimate.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/ddp_job.hpp"
#include "models/reducer.hpp"

namespace ddpsim::scenarios {
namespace {

// Bytes a simulation holds per simulated rank and per iteration, and the
// trace's bytes per event: measured with /usr/bin/time on jitter-straggler
// runs (65,536 ranks x 100 and 1,000 iterations; 1,024 ranks x 100,000),
// rounded up (docs/scenario-format.md, "Work and memory budget").
constexpr double kBytesPerRank = 1024;
constexpr double kBytesPerIteration = 1024;
constexpr double kFixedBytes = 16e6;
constexpr double kTraceBytesPerOp = 160;
// Every rank's record in the result, simulated or not (the fast path copies
// its one rank's), and in the JSON: a 2^20-rank row measured 101 MB without
// --json, 4.4 GB and an 815 MB file with it (12 s).
constexpr double kResultBytesPerRank = 128;
constexpr double kJsonMemoryPerRank = 4400;
constexpr double kJsonFileBytesPerRank = 800;

// Operations one rank completes in one iteration: data, forward, the
// backward pieces and each bucket's all-reduce (DDP), or each unit's
// all-gathers and reduce-scatter (FSDP), and the optimizer.
double ops_per_iteration(const Scenario& s, const models::DdpJob& job) {
  if (s.fsdp) {
    const auto units = models::build_units(job.model, s.fsdp->wrap).size();
    return 4.0 + 5.0 * static_cast<double>(units);
  }
  const auto buckets = models::steady_buckets(job.model, job.ddp).size();
  return 4.0 + 2.0 * static_cast<double>(buckets);
}

}  // namespace

WorkEstimate estimate_work(const Scenario& s, int traced_ranks, bool json) {
  WorkEstimate out;
  const bool one_for_all = models::symmetric(s.job);
  const double iterations = static_cast<double>(s.job.total_iterations()) * s.fsdp.value_or(models::FsdpConfig{}).gradient_accumulation;
  std::vector<int> worlds = s.sweep.world_sizes;
  if (std::find(worlds.begin(), worlds.end(), 1) == worlds.end()) worlds.push_back(1);  // the baseline row
  for (const double cap : s.sweep.bucket_caps_mb) {
    const models::DdpJob job = with_cap(s.job, cap);
    const double ops = ops_per_iteration(s, job);
    for (const int w : worlds) {
      const double simulated = one_for_all ? 1.0 : static_cast<double>(w);
      out.rank_ops += simulated * iterations * ops + w;  // and each rank's record assembled
      const double results = w * (kResultBytesPerRank + (json ? kJsonMemoryPerRank : 0));
      out.memory_bytes =
          std::max(out.memory_bytes, kFixedBytes + simulated * kBytesPerRank + iterations * kBytesPerIteration + results);
      if (json) out.json_bytes += w * kJsonFileBytesPerRank;
      if (traced_ranks > 0) out.trace_bytes += std::min<double>(w, traced_ranks) * iterations * ops * kTraceBytesPerOp;
      ++out.rows;
    }
  }
  return out;
}

std::string describe(const WorkEstimate& e) {
  std::string out = fmt::format("{:.3g} rank-operations ({} simulations), about {:.0f} MB of state", e.rank_ops, e.rows,
                                e.memory_bytes / 1e6);
  if (e.trace_bytes > 0) out += fmt::format(" and a {:.0f} MB trace", e.trace_bytes / 1e6);
  if (e.json_bytes > 0) out += fmt::format(", a {:.0f} MB JSON", e.json_bytes / 1e6);
  return out;
}

void check_budget(const Scenario& s, const WorkEstimate& e, const WorkBudget& b) {
  const Location at{s.source, 0, 0};
  if (e.rank_ops > b.max_rank_ops) {
    throw InputError(at, "", "",
                     fmt::format("the run is estimated at {}: past the budget of {:.3g} rank-operations (about 30 minutes); "
                                 "expected fewer ranks x iterations, or --max-rank-ops to raise the budget",
                                 describe(e), b.max_rank_ops));
  }
  if ((e.memory_bytes + e.trace_bytes + e.json_bytes) / 1e9 > b.max_memory_gb) {
    throw InputError(at, "", "",
                     fmt::format("the run is estimated at {}: past the budget of {:g} GB; expected fewer iterations, "
                                 "ranks or traced ranks (--trace-ranks), no --json or --html at this many ranks, or "
                                 "--max-memory-gb to raise the budget",
                                 describe(e), b.max_memory_gb));
  }
}

}  // namespace ddpsim::scenarios
