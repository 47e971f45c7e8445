// DDP as the training loop drives it (trainer.hpp): a full replica per rank,
// rank 0's parameters broadcast at the start, each gradient bucket's
// all-reduce launched as soon as it is ready, rank 0 checkpointing the
// complete state.

#include <fmt/format.h>

#include <algorithm>

#include "models/reducer.hpp"
#include "real_backend/checkpoint.hpp"
#include "real_backend/half.hpp"
#include "real_backend/trainer.hpp"

namespace ddpsim::real {
namespace {

using Label = CollectiveLabel;

// fp16_compress_hook's buffers: each bucket cast to half at its hook, the
// half buffer all-reduced, cast back into the bucket (decompress).
struct HalfBuckets {
  std::vector<std::vector<Half>> buffers;
  std::vector<std::pair<float*, std::size_t>> buckets;  // this step's, by index

  Half* compress(int b, float* data, std::size_t n) {
    const auto ub = static_cast<std::size_t>(b);
    if (buffers.size() <= ub) buffers.resize(ub + 1), buckets.resize(ub + 1);
    buffers[ub].resize(n);
    buckets[ub] = {data, n};
    // The bucket already holds gradient / W (GradBuckets): one rounding, where
    // the hook's buffer().to(float16).div_(W) rounds at the cast and at the division.
    to_half(data, buffers[ub].data(), n);
    return buffers[ub].data();
  }
  void decompress(int b) {
    const auto ub = static_cast<std::size_t>(b);
    from_half(buffers[ub].data(), buckets[ub].first, buckets[ub].second);
  }
};

// Backward with each bucket's all-reduce launched as it becomes ready, the
// waits for them, then the optimizer step; timed into `timing`. With
// `half`, each bucket goes through fp16_compress_hook's cast and back.
void synced_backward(Transport& t, Replica& model, StepTiming& timing, HalfBuckets* half) {
  std::vector<std::uint64_t> tickets;
  double first_launch = -1;
  const double backward_start = steady_ms();
  model.backward([&](int bucket, float* data, std::size_t n) {
    if (first_launch < 0) first_launch = steady_ms();
    const Label label{Label::Kind::kBucketAllReduce, timing.iteration, bucket};
    tickets.push_back(half ? t.all_reduce_half_async(half->compress(bucket, data, n), n, label)
                           : t.all_reduce_async(data, n, label));
  });
  const double backward_end = steady_ms();
  timing.backward_end_clock_ms = backward_end;
  double last_done = backward_end;
  for (std::size_t bucket = 0; bucket < tickets.size(); ++bucket) {
    const CollectiveTimes c = t.wait(tickets[bucket]);
    if (half) half->decompress(static_cast<int>(bucket));
    model.unpack(static_cast<int>(bucket));
    timing.collective_ms += c.finished_ms - c.started_ms;
    last_done = std::max(last_done, c.finished_ms);
  }
  const double t3 = steady_ms();
  timing.backward_compute_ms = backward_end - backward_start;
  timing.backward_comm_ms = first_launch < 0 ? 0 : last_done - first_launch;
  timing.backward_overlap_ms = first_launch < 0 ? 0 : backward_end - first_launch;
  timing.exposed_comm_ms = t3 - backward_end;
  model.optimizer_step();
  timing.optimizer_ms = steady_ms() - t3;
  timing.compute_ms = timing.forward_compute_ms + timing.backward_compute_ms + timing.optimizer_ms;
  timing.layer_backward_ms = model.layer_backward_ms();
}

class DdpProgram final : public Program {
 public:
  DdpProgram(Replica& replica, const TrainerOptions& o, int world) : model_(replica), fp16_(o.comm_hook == "fp16_compress") {
    for (const auto& b : replica_config(o, world).buckets) buckets_.push_back(b.bytes);
  }

  std::string device() const override { return model_.device(); }

  void start(Transport& t) override {
    std::vector<float> params, momentum;
    model_.get_state(params, momentum);
    t.broadcast(params.data(), params.size() * sizeof(float), 0);  // rank 0's parameters, as DDP's constructor
    model_.set_state(params, momentum);
  }

  void forward(Transport&, const float* x, const float* y, int rows, StepTiming& timing) override {
    const double start = steady_ms();
    model_.forward(x, y, rows);
    timing.forward_compute_ms = steady_ms() - start;
    timing.layer_forward_ms = model_.layer_forward_ms();
  }

  void backward_and_step(Transport& t, StepTiming& timing) override {
    synced_backward(t, model_, timing, fp16_ ? &half_ : nullptr);
  }

  std::string checkpoint(Transport& t, const TrainState& position, const TrainerOptions& o) override {
    if (t.rank() != 0) return {};
    TrainState s = position;
    model_.get_state(s.parameters, s.momentum);
    return write_checkpoint(o.checkpoint_dir, s, o.keep_checkpoints);
  }

  // Rank 0's newest valid checkpoint, broadcast to every rank.
  std::optional<TrainState> resume(Transport& t, const TrainerOptions& o) override {
    std::string blob;
    if (t.rank() == 0) {
      const LoadedCheckpoint loaded = load_newest_valid(o.checkpoint_dir);
      if (o.log) {
        for (const std::string& m : loaded.messages) o.log(m);
      }
      if (loaded.state) blob = encode_checkpoint(*loaded.state);
    }
    broadcast_bytes(t, blob);
    if (blob.empty()) return std::nullopt;
    TrainState s = decode_checkpoint(blob, "the checkpoint broadcast by rank 0");
    model_.set_state(s.parameters, s.momentum);
    s.parameters.clear();
    s.momentum.clear();
    return s;
  }

  std::vector<float> parameters(Transport&) override {
    std::vector<float> params, momentum;
    model_.get_state(params, momentum);
    return params;
  }

  void describe(TrainResult& out) const override { out.bucket_bytes = buckets_; }

 private:
  Replica& model_;
  bool fp16_;
  HalfBuckets half_;
  std::vector<std::int64_t> buckets_;
};

}  // namespace

ReplicaConfig replica_config(const TrainerOptions& o, int world_size) {
  models::DdpConfig ddp;
  ddp.bucket_cap_bytes = models::bucket_bytes(o.bucket_cap_mb);
  ddp.first_bucket_bytes = models::bucket_bytes(o.first_bucket_mb);
  return {o.shape, o.seed, *models::rebuilt_buckets(mlp_spec(o.shape), ddp), world_size, o.lr, o.momentum};
}

std::unique_ptr<Program> make_ddp_program(Replica& replica, const TrainerOptions& options, int world_size) {
  return std::make_unique<DdpProgram>(replica, options, world_size);
}

}  // namespace ddpsim::real
