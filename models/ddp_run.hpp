#pragma once
// Internal to models/: the DDP program's evaluation state. What every rank
// shares (Plan), where each rank is (Progress), op records turned into
// per-rank means (Accounting), and the result assembled from them.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "models/ddp_job.hpp"
#include "sim/small_list.hpp"

namespace ddpsim::models::ddp {  // DDP's own: a second program may have a Plan of its own

// TORCH_DISTRIBUTED_DEBUG=DETAIL's per-rank fingerprint: op type, sequence
// number, and the shapes and dtypes of a few tensors, serialised as int64s.
inline constexpr std::int64_t kFingerprintBytes = 64;

// Construction broadcasts parameters and buffers in chunks of this size.
inline constexpr std::int64_t kInitBroadcastChunk = 250 * kMiB;

inline sim::OpLabel label(DdpTag tag, int iteration, int index = 0) {
  return {static_cast<std::uint32_t>(tag), static_cast<std::uint32_t>(iteration), static_cast<std::uint32_t>(index)};
}

// Everything every rank shares: bucket tables and backward cuts, computed once.
struct Plan {
  const DdpJob& job;
  std::vector<Bucket> initial;
  std::optional<std::vector<Bucket>> rebuilt;
  std::optional<int> rebuild_at;
  int fewest_missing = 0;  // the smallest uneven_batches shortfall over ranks
  // The model's totals, summed once here rather than by every rank every iteration.
  std::int64_t buffer_bytes = 0;
  std::int64_t parameter_bytes = 0;
  sim::Time forward_total, backward_total;

  Plan(const DdpJob& j, int world_size)
      : job(j),
        initial(initial_buckets(j.model, j.ddp)),
        rebuilt(rebuilt_buckets(j.model, j.ddp)),
        rebuild_at(rebuild_iteration(j.ddp)),
        buffer_bytes(j.model.buffer_bytes()),
        parameter_bytes(j.model.parameter_bytes()),
        forward_total(j.model.forward_total()),
        backward_total(j.model.backward_total()) {
    fewest_missing = j.iterations;
    for (int r = 0; r < world_size; ++r) {
      fewest_missing = std::min(fewest_missing, fewer_batches(j.faults, r));
    }
    std::sort(config_unused.begin(), config_unused.end());
    config_unused.erase(std::unique(config_unused.begin(), config_unused.end()), config_unused.end());
    for (int t = 0; t < 2; ++t) {
      if (t == 0 || rebuilt) common[t] = plan_for(t == 1, config_unused);
    }
    if (j.ddp.comm_hook.kind == CommHookKind::kAllReduce) return;
    for (int t = 0; t < 2; ++t) {
      if (t == 1 && !rebuilt) break;
      for (const Bucket& b : t == 0 ? initial : *rebuilt) {
        for (int first = 0; first < 2; ++first) {
          hooks[t][first].push_back(plan_bucket_hook(j.ddp.comm_hook, j.model, b, true, first == 1));
        }
      }
    }
  }

  // What a bucket's comm hook does in a step that compresses (models/comm_hook.hpp):
  // by bucket table, then whether PowerSGD has no warm-started P, Q yet.
  const BucketHookPlan& hook(bool rebuilt_table, bool first_compressed, std::size_t bucket) const {
    return hooks[rebuilt_table ? 1 : 0][first_compressed ? 1 : 0][bucket];
  }

  // Backward cuts when some parameters get no gradient on a rank, by bucket
  // table. Ranks may ask from several engine threads at once: the job's own
  // unused set (every rank's, without faults) is planned up front and read
  // freely; other sets are planned once, under a lock.
  const BackwardPlan& backward_with_unused(bool rebuilt_table, const std::vector<int>& unused) const {
    const int t = rebuilt_table ? 1 : 0;
    if (common[t] && unused == config_unused) return *common[t];
    const std::lock_guard lock(cache_mutex);
    auto& cache = backward_cache[t];
    auto it = cache.find(unused);
    if (it == cache.end()) it = cache.emplace(unused, plan_for(rebuilt_table, unused)).first;
    return it->second;
  }

 private:
  BackwardPlan plan_for(bool rebuilt_table, const std::vector<int>& unused) const {
    DdpConfig d = job.ddp;
    d.unused_parameters = unused;
    return plan_backward(job.model, d, rebuilt_table ? *rebuilt : initial);
  }
  std::vector<int> config_unused = job.ddp.unused_parameters;
  std::vector<BucketHookPlan> hooks[2][2];
  std::optional<BackwardPlan> common[2];
  mutable std::mutex cache_mutex;
  mutable std::map<std::vector<int>, BackwardPlan> backward_cache[2];
};

// Where each rank is; filled by the programs, read by the analysis.
struct Progress {
  // Per iteration, over the ranks one engine thread ran (sim::Engine::worker()).
  struct Tally {
    std::vector<sim::Time> iteration_end;  // max over ranks
    std::vector<int> finished_ranks;
  };
  std::vector<RankStatus> ranks;
  std::vector<Tally> by_worker;
  Tally all;  // the workers' tallies together, once the run ends

  Progress(int ranks_simulated, int iterations, int workers)
      : ranks(static_cast<std::size_t>(ranks_simulated)),
        by_worker(static_cast<std::size_t>(workers), Tally{std::vector<sim::Time>(static_cast<std::size_t>(iterations)),
                                                           std::vector<int>(static_cast<std::size_t>(iterations), 0)}),
        all(by_worker.front()) {}
  void gather() {
    for (const Tally& t : by_worker) {
      for (std::size_t g = 0; g < all.iteration_end.size(); ++g) {
        all.iteration_end[g] = sim::max(all.iteration_end[g], t.iteration_end[g]);
        all.finished_ranks[g] += t.finished_ranks[g];
      }
    }
  }
};

// Turns op records into per-rank means and iteration end times.
class Accounting final : public sim::Observer {
 public:
  Accounting(int world_size, int warmup, int micro_steps)
      : warmup_(warmup),
        sync_micro_(static_cast<std::uint32_t>(micro_steps - 1)),
        ranks_(static_cast<std::size_t>(world_size)),
        prefetch_(ranks_.size() * sizeof(Rank) > kPrefetchAbove) {}

  void on_op(const sim::OpRecord& r) override;

  RunResult result(int world_size, int iterations, const Progress& progress) const;

 private:
  struct Span {
    sim::Time arrival, start, end;
  };
  // One rank's sums and this iteration's marks. Every op reads and writes
  // a rank's record, a sweep over every rank apart once the ranks outnumber
  // the cache: what most ops touch is its first line, and the iteration's
  // collectives live in it rather than behind a pointer.
  struct alignas(64) Rank {
    sim::Time data, compute, forward_start, backward_start, backward_end, comm_end;
    std::optional<sim::Time> first_launch;
    sim::Time collective, exposed, wait;
    sim::Time forward_compute, backward_compute, backward_comm, overlap;
    // This iteration's collectives (waited from arrival to start, ran to end):
    // ResNet-50 has six.
    sim::SmallList<Span, 6> collectives;
  };
  // Records mostly come rank after rank in memory order (levelized, and
  // lockstep ranks in time order). Once the ranks' records outgrow the
  // cache, each op would wait for its rank's lines: fetching those of the
  // rank a few places on meanwhile hides some of it (16 % off ResNet-50 at
  // 65,536 ranks levelized, bench/README.md); in cache it only costs.
  static constexpr std::size_t kPrefetchAbove = std::size_t{2} << 20;
  static constexpr std::size_t kPrefetchDistance = 6;
  int warmup_;
  std::uint32_t sync_micro_;
  std::vector<Rank> ranks_;
  bool prefetch_;
};

/// The result of a run from its accounting and progress; `simulated` ranks
/// of `world_size`.
RunResult assemble(const DdpJob& job, const Plan& plan, const Accounting& accounting, Progress& progress,
                   const sim::RunSummary& summary, int simulated, int world_size);

}  // namespace ddpsim::models::ddp
