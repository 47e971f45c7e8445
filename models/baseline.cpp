#include "models/baseline.hpp"

#include "models/collective_cost.hpp"
#include "models/reducer.hpp"
#include "models/straggler.hpp"

namespace ddpsim::models {

double closed_form_step_ms(const DdpJob& job, int world_size) {
  double ms = job.data_load.ms() + job.model.forward_total().ms() + job.model.backward_total().ms() + job.model.optimizer.ms();
  // At W = 1 the ring formula leaves the launch overhead: DDP still calls the collective.
  if (const auto buckets = rebuilt_buckets(job.model, job.ddp)) {
    for (const Bucket& b : *buckets) ms += ring_all_reduce_time(job.network, b.bytes, world_size).ms();
  } else {
    ms += ring_all_reduce_time(job.network, job.model.parameter_bytes(), world_size).ms();
  }
  return ms + expected_slowest_delay_ms(job.straggler, world_size);
}

}  // namespace ddpsim::models
