// The DDP program's accounting: op records to per-rank means (models/ddp_run.hpp).

#include <algorithm>

#include "models/ddp_run.hpp"

namespace ddpsim::models::ddp {

void Accounting::on_op(const sim::OpRecord& r) {
  if (const std::size_t ahead = static_cast<std::size_t>(r.rank) + kPrefetchDistance; prefetch_ && ahead < ranks_.size()) {
    // Inline: GCC drops a call to a function that only prefetches (it has no effect).
    const char* p = reinterpret_cast<const char*>(&ranks_[ahead]);
    for (std::size_t line = 0; line < sizeof(Rank); line += 64) __builtin_prefetch(p + line, 1);
  }
  const auto it = static_cast<std::size_t>(r.label.iteration);
  Rank& acc = ranks_[static_cast<std::size_t>(r.rank)];
  const bool measured = static_cast<int>(it) >= warmup_;
  const sim::Time busy = r.end - r.start;
  const auto tag = static_cast<DdpTag>(r.label.tag);
  // A comm hook's callback runs between its all-reduces, on the
  // communication side: what the step waits for there is communication.
  if (r.is_collective || tag == DdpTag::kHookCallback) {
    if (tag == DdpTag::kInitBroadcast || tag == DdpTag::kVerifyParams || tag == DdpTag::kFinalBarrier) {
      return;  // outside the loop
    }
    acc.collectives.push_back({r.is_collective ? r.arrival : r.start, r.start, r.end});
    if (measured && r.is_collective) acc.collective += busy;
    if (tag == DdpTag::kAllReduce || tag == DdpTag::kUsedMap || tag == DdpTag::kHookAllReduce ||
        tag == DdpTag::kHookCallback) {
      if (!acc.first_launch || r.arrival < *acc.first_launch) acc.first_launch = r.arrival;
      acc.comm_end = sim::max(acc.comm_end, r.end);
    }
    return;
  }
  if (tag == DdpTag::kData) {
    if (measured) acc.data += busy;
    if (r.label.index == 0) {  // a new iteration
      acc.collectives.clear();
      acc.first_launch.reset();
      acc.comm_end = sim::Time{};
    }
    return;
  }
  if (measured) {
    acc.compute += busy;
    // While this op sat waiting for a collective: the time a collective was
    // executing is exposed communication; the time one waited for other
    // ranks to arrive is wait. Both on the critical path only: what
    // backward hid costs nothing. Waiting for data is neither.
    if (r.after && r.after->stream % sim::kStreamsPerRank == static_cast<std::uint32_t>(sim::StreamKind::kComm)) {
      const auto overlap = [&](sim::Time from, sim::Time to) {
        const sim::Time lo = sim::max(from, r.ready), hi = sim::min(to, r.start);
        return lo < hi ? hi - lo : sim::Time{};
      };
      for (std::size_t i = 0; i < acc.collectives.size(); ++i) {
        const Span& c = acc.collectives[i];
        acc.exposed += overlap(c.start, c.end);
        acc.wait += overlap(c.arrival, c.start);
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
      break;
    }
    default:
      break;
  }
}

RunResult Accounting::result(int world_size, int iterations, const Progress& progress) const {
  RunResult out;
  out.world_size = world_size;
  out.iterations = iterations;
  measure_steps(out, progress.all.iteration_end, progress.all.finished_ranks, world_size, warmup_);
  const double n = std::max(1, out.measured_iterations);
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& a = ranks_[r];
    RankStats s = mean_stats(a, static_cast<int>(r), n);
    s.backward_comm_ms = a.backward_comm.ms() / n;
    s.backward_overlap_ms = a.overlap.ms() / n;
    out.ranks.push_back(s);
  }
  return out;
}

RunResult assemble(const DdpJob& job, const Plan& plan, const Accounting& accounting, Progress& progress,
                   const sim::RunSummary& summary, int simulated, int world_size) {
  const int total = job.total_iterations();
  RunResult out = accounting.result(simulated, total, progress);
  out.world_size = world_size;
  out.outcome = !summary.crashes.empty() ? Outcome::kCrash : summary.hung() ? Outcome::kHang : Outcome::kCompleted;
  for (const sim::Crash& c : summary.crashes) out.errors.push_back(RankError{c.rank, c.at.ms(), c.message});
  out.blocked = summary.blocked;
  out.misalignments = misaligned_pairs(summary);
  // Buckets carry their dtype; DDP's own small collectives are int32 or float32 tensors.
  const auto dtype_of = [&plan, &job](const sim::OpLabel& l) -> std::string {
    switch (static_cast<DdpTag>(l.tag)) {
      case DdpTag::kHookAllReduce:
        if (job.ddp.comm_hook.kind == CommHookKind::kFp16Compress) return "float16";
        if (job.ddp.comm_hook.kind == CommHookKind::kBf16Compress) return "bfloat16";
        [[fallthrough]];
      case DdpTag::kAllReduce:
      case DdpTag::kShadowAllReduce: {
        const bool rebuilt = plan.rebuild_at && static_cast<int>(l.iteration) >= *plan.rebuild_at;
        const std::vector<Bucket>& table = rebuilt ? *plan.rebuilt : plan.initial;
        const std::uint32_t b = static_cast<DdpTag>(l.tag) == DdpTag::kHookAllReduce ? l.index / kHookStages : l.index;
        return b < table.size() ? std::string(to_string(table[b].dtype)) : "";
      }
      case DdpTag::kUsedMap:
      case DdpTag::kJoinCount:
      case DdpTag::kRebuildBroadcast: return "int32";
      case DdpTag::kVerifyParams: return "int64";
      case DdpTag::kSkipFlag:
      case DdpTag::kExtraCollective: return "float32";
      default: return "";
    }
  };
  out.failure = analyse_failure(summary, progress.ranks, FailureContext{job.backend, job.watchdog_timeout, dtype_of, {}});
  for (const RankStatus& s : progress.ranks) {
    out.iterations_run.push_back(s.iterations_run);
    out.shadow_collectives.push_back(s.shadow_collectives);
  }
  out.global_batch = static_cast<std::int64_t>(job.local_batch_size) * world_size * job.ddp.gradient_accumulation;
  out.events = summary.events;
  out.rank_ops = summary.rank_ops;
  out.end = summary.end;
  return out;
}

}  // namespace ddpsim::models::ddp
