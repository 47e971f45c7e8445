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
  if (const auto buckets = rebuilt_buckets(job.model, job.ddp)) {
    for (const Bucket& b : *buckets) ms += all_reduce_ms(b.bytes);
  } else {
    ms += all_reduce_ms(job.model.parameter_bytes());
  }
  return ms + expected_slowest_delay_ms(job.straggler, world_size);
}

}  // namespace ddpsim::models
