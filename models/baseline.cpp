#include "models/baseline.hpp"

#include "models/collective_cost.hpp"
#include "models/reducer.hpp"
#include "models/straggler.hpp"

namespace ddpsim::models {

double closed_form_step_ms(const DdpJob& job, int world_size) {
  double ms = job.data_load.ms() + job.model.forward_total().ms() + job.model.backward_total().ms() + job.model.optimizer.ms();
  // At W = 1 the ring formula leaves the launch overhead: DDP still calls the collective.
  const std::unique_ptr<CollectiveTimer> timer = analytic_timer(job, world_size);
  const auto all_reduce_ms = [&](std::int64_t bytes) {
    return timer->time({sim::CollectiveKind::kAllReduce, bytes}, world_size, {}).ms();
  };
  // DDP's gradient copies into the buckets and back (ddp.bucket_copy_GBps).
  ms += 2 * job.ddp.bucket_copy(job.model.parameter_bytes()).ms();
  std::vector<Bucket> buckets;
  if (auto rebuilt = rebuilt_buckets(job.model, job.ddp)) {
    buckets = std::move(*rebuilt);
  } else {
    buckets.push_back(Bucket{{}, job.model.parameter_bytes(), DType::kFloat32});
  }
  double plain = 0, hooked = 0;
  for (const Bucket& b : buckets) plain += all_reduce_ms(b.bytes);
  // A comm hook: its all-reduces and its compute, none overlapped, in the
  // measured steps it compresses (PowerSGD's from start_powerSGD_iter on).
  const CommHook& hook = job.ddp.comm_hook;
  const int compressed = hook.compressed_steps(job.warmup_iterations, job.total_iterations());
  if (compressed > 0) {
    for (const Bucket& b : buckets) {
      const BucketHookPlan p = plan_bucket_hook(hook, job.model, b, true, false);
      hooked += p.compute().ms();
      for (const HookStage& s : p.chain) hooked += s.collective ? all_reduce_ms(s.bytes) : 0;
    }
  }
  const double f = static_cast<double>(compressed) / (job.total_iterations() - job.warmup_iterations);
  ms += (1 - f) * plain + f * hooked;
  return ms + expected_slowest_delay_ms(job.straggler, world_size);
}

}  // namespace ddpsim::models
