#include "real_backend/trainer.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "models/reducer.hpp"
#include "models/sampler.hpp"
#include "real_backend/grad_buckets.hpp"
#include "sim/random.hpp"

namespace ddpsim::real {
namespace {

constexpr std::uint64_t kDataStream = 0x53594e5448444154ULL;  // "SYNTHDAT"

// Wall-clock time is the measurement here, never a simulation input.
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void synthetic_example(std::uint64_t seed, std::int64_t id, int input, int output, float* x, float* y) {
  sim::Rng rng = sim::Rng::for_stream(seed, {kDataStream, static_cast<std::uint64_t>(id)});
  double s = 0;
  for (int i = 0; i < input; ++i) {
    x[i] = static_cast<float>(sim::draw_uniform(rng, -1, 1));
    s += x[i] * (i % 2 == 0 ? 1.0 : -0.5);
  }
  for (int o = 0; o < output; ++o) y[o] = static_cast<float>(std::tanh(s + 0.1 * o));
}

TrainResult train(Transport& t, const TrainerOptions& o) {
  const int rank = t.rank(), world = t.world_size();
  Mlp model(o.shape, o.seed);
  // Every rank starts from rank 0's parameters, as DDP's constructor does.
  t.broadcast(model.parameters().data(), model.parameter_count(), 0);
  SgdMomentum optimizer(o.lr, o.momentum, model.parameter_count());

  models::DdpConfig ddp;
  ddp.bucket_cap_bytes = models::bucket_bytes(o.bucket_cap_mb);
  ddp.first_bucket_bytes = models::bucket_bytes(o.first_bucket_mb);
  const auto buckets = *models::rebuilt_buckets(model.spec(), ddp);
  GradBuckets reducer(model, buckets, world);
  TrainResult out;
  for (const auto& b : buckets) out.bucket_bytes.push_back(b.bytes);

  const models::SamplerConfig sampler{o.dataset_size, world, o.shuffle, o.seed, false};
  Mlp::Matrix x(o.batch_size, o.shape.input), y(o.batch_size, o.shape.output);
  int step = 0;
  for (int epoch = 0; epoch < o.epochs && (o.max_steps < 0 || step < o.max_steps); ++epoch) {
    const std::vector<std::int64_t> mine = models::rank_indices(sampler, epoch, rank);  // set_epoch(epoch)
    out.ids_per_epoch.emplace_back();
    const auto batches = static_cast<std::int64_t>(mine.size()) / o.batch_size;  // drop the ragged tail
    for (std::int64_t b = 0; b < batches && (o.max_steps < 0 || step < o.max_steps); ++b, ++step) {
      StepTiming timing;
      timing.iteration = step;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < o.batch_size; ++i) {
        const std::int64_t id = mine[static_cast<std::size_t>(b * o.batch_size + i)];
        out.ids_per_epoch.back().push_back(id);
        synthetic_example(o.seed, id, o.shape.input, o.shape.output, x.row(i).data(), y.row(i).data());
      }
      timing.data_ms = ms_since(t0);
      const auto t1 = std::chrono::steady_clock::now();
      reducer.reset();
      std::vector<std::uint64_t> tickets(buckets.size());
      model.forward_backward(x, y, [&](int tensor) {
        for (int bucket : reducer.mark_ready(tensor, model.gradients())) {
          tickets[static_cast<std::size_t>(bucket)] =
              t.all_reduce_async(reducer.buffer(bucket).data(), reducer.buffer(bucket).size());
        }
      });
      const double backward_done = ms_since(t1);
      const auto t2 = std::chrono::steady_clock::now();
      for (std::size_t bucket = 0; bucket < buckets.size(); ++bucket) {
        t.wait(tickets[bucket]);
        reducer.unpack(static_cast<int>(bucket), model.gradients());
      }
      timing.exposed_comm_ms = ms_since(t2);
      const auto t3 = std::chrono::steady_clock::now();
      optimizer.step(model.parameters(), model.gradients());
      timing.compute_ms = backward_done + ms_since(t3);
      timing.step_ms = ms_since(t0);
      out.steps.push_back(timing);
    }
  }
  out.parameters = model.parameters();
  return out;
}

std::vector<SweepRow> allreduce_sweep(Transport& t, std::int64_t min_bytes, std::int64_t max_bytes, int iters) {
  std::vector<SweepRow> rows;
  const int w = t.world_size();
  for (std::int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    std::vector<float> data(static_cast<std::size_t>(std::max<std::int64_t>(1, bytes / 4)), 1.0f);
    t.wait(t.all_reduce_async(data.data(), data.size()));  // warm-up
    t.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) t.wait(t.all_reduce_async(data.data(), data.size()));
    SweepRow r;
    r.bytes = static_cast<std::int64_t>(data.size() * 4);
    r.time_us = ms_since(t0) * 1000 / iters;
    r.algbw_GBps = static_cast<double>(r.bytes) / (r.time_us * 1e3);
    r.busbw_GBps = r.algbw_GBps * 2.0 * (w - 1) / w;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ddpsim::real
