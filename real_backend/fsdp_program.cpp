// FSDP1 on the CPU as the training loop drives it (trainer.hpp): each of the
// MLP's layers is a unit (as `module_classes: [layers.*]` wraps it; the root
// keeps no parameter), sharded over the W ranks (fsdp_checkpoint.hpp).
//
// Per step, on every rank, in one order (the transport numbers collectives
// by issue, as NCCL matches them):
// - Forward, per unit: its all-gather is issued one unit ahead (the CPU runs
//   ahead of the GPU in PyTorch, bounded by the rate limiter); the layer
//   waits for its own. FULL_SHARD frees the unit after its forward,
//   SHARD_GRAD_OP keeps it.
// - Backward, last unit first: the unit is all-gathered again where it was
//   freed, and the next unit's all-gather issued before the compute
//   (BACKWARD_PRE). After the unit's backward it is freed, and its gradient
//   (padded, divided by W) is reduce-scattered into a shard-sized output.
// - The optimizer waits for every reduce-scatter (each output then goes to
//   the sharded gradient, the unsharded gradient and the output are freed),
//   then steps on the shards.
// On one rank it is NO_SHARD, as PyTorch switches: compute reads and writes
// the shards, which are the whole units; no copy, no collective.
// The memory counter adds every buffer's bytes when it is allocated and
// takes them off when it is freed (the shards of parameters, gradients and
// momentum; the unsharded units; the unsharded gradients and reduce-scatter
// outputs) plus the activations the model holds, sampled at each unit's
// start and end: the tensors torch.cuda.max_memory_allocated counts.

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "real_backend/fsdp_checkpoint.hpp"
#include "real_backend/trainer.hpp"

namespace ddpsim::real {
namespace {

using Label = CollectiveLabel;

class FsdpProgram final : public Program {
 public:
  FsdpProgram(const TrainerOptions& o, int world)
      : model_(o.shape, o.seed),
        input_(o.shape.input),
        output_(o.shape.output),
        full_shard_(o.parallelism != Parallelism::kShardGradOp),
        world_(world),
        lr_(o.lr),
        momentum_(o.momentum) {
    for (int l = 0; l < model_.layers(); ++l) units_.push_back({model_.layer_offset(l), model_.layer_numel(l)});
    const auto n = units_.size();
    gathered_.resize(n);
    gather_ticket_.resize(n);
    grad_full_.resize(n);
    grad_out_.resize(n);
    reduce_ticket_.resize(n);
    replica_ticket_.resize(n);
  }

  std::string device() const override { return "cpu"; }

  // Every rank built the same parameters from the seed; rank 0's are
  // broadcast anyway (sync_module_states), then each keeps its shards of
  // its shard group's layout.
  void start(Transport& t) override {
    rank_ = t.rank();
    group_ = t.shard_group_size();
    index_ = t.shard_group_rank();
    replicas_ = world_ / group_;
    sharded_ = group_ > 1;
    std::size_t at = 0;
    for (const UnitLayout& u : units_) {
      shard_offset_.push_back(at);
      at += shard_size(u.numel, group_);
    }
    std::vector<float> full = model_.parameters();
    t.broadcast(full.data(), full.size() * sizeof(float), 0);
    model_.release_storage();
    set_shards(shard_of(full, units_, group_, index_), std::vector<float>(shards_size(units_, group_), 0.0f));
  }

  void forward(Transport& t, const float* x, const float* y, int rows, StepTiming& timing) override {
    iteration_ = timing.iteration;
    step_collective_ms_ = 0;
    const int n = model_.layers();
    LayerAccess access;
    access.parameters = [&](int l) { return unit_parameters(l); };
    access.before = [&](int l) {
      issue_gather_if_freed(t, l);
      if (l + 1 < n) issue_gather_if_freed(t, l + 1);
      wait_gather(t, l);
      sample_memory();
    };
    access.after = [&](int l) {
      sample_memory();
      if (full_shard_) free_unit(l);
    };
    x_ = Eigen::Map<const Mlp::Matrix>(x, rows, input_);
    y_ = Eigen::Map<const Mlp::Matrix>(y, rows, output_);
    waited_ms_ = 0;
    const double start = steady_ms();
    model_.forward(x_, y_, access);
    timing.forward_compute_ms = steady_ms() - start - waited_ms_;
    timing.exposed_comm_ms = waited_ms_;
    timing.layer_forward_ms = model_.layer_forward_ms();
  }

  void backward_and_step(Transport& t, StepTiming& timing) override {
    first_launch_ = -1;
    LayerAccess access;
    access.parameters = [&](int l) { return unit_parameters(l); };
    access.gradients = [&](int l) { return allocate_gradient(l); };
    access.before = [&](int l) {
      issue_gather_if_freed(t, l);
      if (l > 0) issue_gather_if_freed(t, l - 1);  // BACKWARD_PRE
      wait_gather(t, l);
      sample_memory();
    };
    access.after = [&](int l) {
      sample_memory();
      free_unit(l);
      reduce_scatter(t, l);
    };
    waited_ms_ = 0;
    const double backward_start = steady_ms();
    model_.backward({}, access);
    const double backward_end = steady_ms();
    const double backward_waits = waited_ms_;
    timing.backward_end_clock_ms = backward_end;
    double last_done = backward_end;
    for (int l = model_.layers() - 1; l >= 0; --l) last_done = std::max(last_done, finish_reduce_scatter(t, l));
    const double t3 = steady_ms();
    timing.backward_compute_ms = backward_end - backward_start - backward_waits;
    timing.backward_comm_ms = first_launch_ < 0 ? 0 : last_done - first_launch_;
    timing.backward_overlap_ms = first_launch_ < 0 ? 0 : backward_end - first_launch_;
    timing.exposed_comm_ms += backward_waits + (t3 - backward_end);
    optimizer_->step(param_shard_, grad_shard_);
    timing.optimizer_ms = steady_ms() - t3;
    timing.compute_ms = timing.forward_compute_ms + timing.backward_compute_ms + timing.optimizer_ms;
    timing.collective_ms = step_collective_ms_;
    timing.layer_backward_ms = model_.layer_backward_ms();
  }

  std::string checkpoint(Transport& t, const TrainState& position, const TrainerOptions& o) override {
    TrainState shard = position;
    shard.parameters = param_shard_;
    shard.momentum = optimizer_->velocity();
    if (rank_ < group_) write_shard(o.checkpoint_dir, shard, index_);  // one replica's shards (node groups are rank blocks)
    t.barrier();  // every shard is on disk before the manifest names it
    std::string where;
    if (rank_ == 0) where = write_manifest(o.checkpoint_dir, position, group_, o.keep_checkpoints);
    t.barrier();
    return where;
  }

  // Rank 0 picks the newest complete checkpoint; every rank reads it and reshards it to this world size.
  std::optional<TrainState> resume(Transport& t, const TrainerOptions& o) override {
    std::string path;
    if (rank_ == 0) {
      const LoadedSharded loaded = load_newest_sharded(o.checkpoint_dir);
      if (o.log) {
        for (const std::string& m : loaded.messages) o.log(m);
      }
      if (loaded.checkpoint) path = loaded.checkpoint->path;
    }
    broadcast_bytes(t, path);
    if (path.empty()) return std::nullopt;
    ShardedCheckpoint c = read_sharded(path);
    std::vector<std::vector<float>> params, momentum;
    for (TrainState& s : c.shards) {
      params.push_back(std::move(s.parameters));
      momentum.push_back(std::move(s.momentum));
    }
    const std::size_t total = model_.parameter_count();
    set_shards(shard_of(unshard(params, units_, total), units_, group_, index_),
               shard_of(unshard(momentum, units_, total), units_, group_, index_));
    c.manifest.shards.clear();
    return c.manifest;
  }

  // The shard group's shards gathered in one all-gather, then unsharded.
  std::vector<float> parameters(Transport& t) override {
    const std::size_t s = param_shard_.size();
    std::vector<float> all(s * static_cast<std::size_t>(group_));
    std::copy(param_shard_.begin(), param_shard_.end(), all.begin() + static_cast<std::ptrdiff_t>(s * static_cast<std::size_t>(index_)));
    t.wait(t.all_gather_async(all.data(), all.size(), {Label::Kind::kAllGather, -1, -1}));
    std::vector<std::vector<float>> shards;
    for (int r = 0; r < group_; ++r) {
      const auto begin = all.begin() + static_cast<std::ptrdiff_t>(s * static_cast<std::size_t>(r));
      shards.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(s));
    }
    return unshard(shards, units_, model_.parameter_count());
  }

  void describe(TrainResult& out) const override {
    out.unit_bytes.clear();
    for (const UnitLayout& u : units_) {
      out.unit_bytes.push_back(static_cast<std::int64_t>(padded(u) * sizeof(float)));
    }
    out.peak_memory_bytes = peak_bytes_;
  }

 private:
  Mlp model_;
  int input_, output_;
  bool full_shard_;     // FULL_SHARD or HYBRID_SHARD: units freed after forward
  bool sharded_ = true;  // false in a shard group of one rank: NO_SHARD, as PyTorch switches (no copy)
  int world_, rank_ = 0;
  int group_ = 1, index_ = 0, replicas_ = 1;  // the shard group's size, this rank's index in it, the groups
  float lr_, momentum_;
  std::vector<UnitLayout> units_;
  std::vector<std::size_t> shard_offset_;          // per unit, in the concatenated shards
  std::vector<float> param_shard_, grad_shard_;    // this rank's shards, concatenated
  std::optional<SgdMomentum> optimizer_;           // its velocity: the momentum shards
  std::vector<std::vector<float>> gathered_;       // per unit: the unsharded parameters (empty: freed)
  std::vector<std::optional<std::uint64_t>> gather_ticket_;
  std::vector<std::vector<float>> grad_full_;      // per unit: the unsharded gradient until reduce-scattered
  std::vector<std::vector<float>> grad_out_;       // per unit: the reduce-scatter's output, until accumulated
  std::vector<std::optional<std::uint64_t>> reduce_ticket_;
  std::vector<std::optional<std::uint64_t>> replica_ticket_;  // hybrid: the shard's all-reduce across replicas
  Mlp::Matrix x_, y_;
  int iteration_ = 0;
  double step_collective_ms_ = 0, first_launch_ = -1, waited_ms_ = 0;
  std::int64_t held_bytes_ = 0, peak_bytes_ = 0;

  const float* unit_parameters(int l) const {
    const auto u = static_cast<std::size_t>(l);
    return sharded_ ? gathered_[u].data() : param_shard_.data() + shard_offset_[u];
  }
  std::size_t padded(const UnitLayout& u) const { return shard_size(u.numel, group_) * static_cast<std::size_t>(group_); }
  std::size_t shard(int l) const { return shard_size(units_[static_cast<std::size_t>(l)].numel, group_); }

  void hold(std::int64_t bytes) {
    held_bytes_ += bytes;
    sample_memory();
  }
  void sample_memory() {
    peak_bytes_ = std::max(peak_bytes_, held_bytes_ + static_cast<std::int64_t>(model_.activation_bytes()));
  }
  static std::int64_t bytes_of(const std::vector<float>& v) { return static_cast<std::int64_t>(v.size() * sizeof(float)); }

  void set_shards(std::vector<float> params, std::vector<float> momentum) {
    held_bytes_ -= 3 * bytes_of(param_shard_);
    param_shard_ = std::move(params);
    grad_shard_.assign(param_shard_.size(), 0.0f);
    optimizer_.emplace(lr_, momentum_, param_shard_.size());
    optimizer_->velocity() = std::move(momentum);
    hold(3 * bytes_of(param_shard_));  // parameters, gradients and momentum, sharded
  }

  void issue_gather_if_freed(Transport& t, int l) {
    if (!sharded_) return;  // one rank: compute reads the shard, the whole unit
    auto& buffer = gathered_[static_cast<std::size_t>(l)];
    if (!buffer.empty()) return;
    const std::size_t s = shard(l);
    buffer.assign(s * static_cast<std::size_t>(group_), 0.0f);
    const auto mine = param_shard_.begin() + static_cast<std::ptrdiff_t>(shard_offset_[static_cast<std::size_t>(l)]);
    std::copy(mine, mine + static_cast<std::ptrdiff_t>(s), buffer.begin() + static_cast<std::ptrdiff_t>(s * static_cast<std::size_t>(index_)));
    hold(bytes_of(buffer));
    if (first_launch_ < 0 && iteration_ >= 0) first_launch_ = steady_ms();
    gather_ticket_[static_cast<std::size_t>(l)] = t.all_gather_async(buffer.data(), buffer.size(), {Label::Kind::kAllGather, iteration_, l});
  }

  // Waits for unit l's all-gather; the time blocked is exposed communication.
  void wait_gather(Transport& t, int l) {
    auto& ticket = gather_ticket_[static_cast<std::size_t>(l)];
    if (!ticket) return;
    const double start = steady_ms();
    const CollectiveTimes c = t.wait(*ticket);
    waited_ms_ += steady_ms() - start;
    step_collective_ms_ += c.finished_ms - c.started_ms;
    ticket.reset();
  }

  void free_unit(int l) {
    if (!sharded_) return;
    auto& buffer = gathered_[static_cast<std::size_t>(l)];
    held_bytes_ -= bytes_of(buffer);
    std::vector<float>().swap(buffer);
  }

  float* allocate_gradient(int l) {
    if (!sharded_) return grad_shard_.data() + shard_offset_[static_cast<std::size_t>(l)];
    auto& g = grad_full_[static_cast<std::size_t>(l)];
    g.assign(padded(units_[static_cast<std::size_t>(l)]), 0.0f);  // the padding stays zero
    hold(bytes_of(g));
    return g.data();
  }

  // Unit l's gradient divided by W, reduce-scattered over the shard group
  // into a new shard; under hybrid sharding that shard is then all-reduced
  // across the replicas (queued behind it: the transport runs them in order).
  void reduce_scatter(Transport& t, int l) {
    const auto u = static_cast<std::size_t>(l);
    const float scale = 1.0f / static_cast<float>(world_);
    float* reduced = grad_shard_.data() + shard_offset_[u];  // a shard group of one: computed into its shard
    if (sharded_) {
      auto& g = grad_full_[u];
      for (float& v : g) v *= scale;
      auto& out = grad_out_[u];
      out.assign(shard(l), 0.0f);
      hold(bytes_of(out));
      if (first_launch_ < 0) first_launch_ = steady_ms();
      reduce_ticket_[u] = t.reduce_scatter_async(g.data(), g.size(), out.data(), {Label::Kind::kReduceScatter, iteration_, l});
      reduced = out.data();
    } else if (replicas_ > 1) {
      for (std::size_t i = 0; i < shard(l); ++i) reduced[i] *= scale;
    }
    if (replicas_ > 1) {
      if (first_launch_ < 0) first_launch_ = steady_ms();
      replica_ticket_[u] = t.all_reduce_async(reduced, shard(l), {Label::Kind::kReplicaAllReduce, iteration_, l});
    }
  }

  double finish(Transport& t, std::optional<std::uint64_t>& ticket) {
    if (!ticket) return 0;
    const CollectiveTimes c = t.wait(*ticket);
    ticket.reset();
    step_collective_ms_ += c.finished_ms - c.started_ms;
    return c.finished_ms;
  }

  // Waits for unit l's reduce-scatter (and replica all-reduce), keeps its
  // shard of the sum, frees the unsharded gradient. Returns when it finished.
  double finish_reduce_scatter(Transport& t, int l) {
    const double scattered = finish(t, reduce_ticket_[static_cast<std::size_t>(l)]);
    const double replicated = finish(t, replica_ticket_[static_cast<std::size_t>(l)]);
    if (!sharded_) return std::max(scattered, replicated);
    auto& g = grad_full_[static_cast<std::size_t>(l)];
    held_bytes_ -= bytes_of(g);
    std::vector<float>().swap(g);
    // The sharded gradient kept between steps takes the output (zero_grad(set_to_none=False)'s _saved_grad_shard).
    auto& out = grad_out_[static_cast<std::size_t>(l)];
    std::copy(out.begin(), out.end(), grad_shard_.begin() + static_cast<std::ptrdiff_t>(shard_offset_[static_cast<std::size_t>(l)]));
    held_bytes_ -= bytes_of(out);
    std::vector<float>().swap(out);
    return std::max(scattered, replicated);
  }
};

}  // namespace

std::unique_ptr<Program> make_fsdp_program(const TrainerOptions& options, int world_size) {
  if (options.parallelism == Parallelism::kDdp) throw std::invalid_argument("make_fsdp_program needs a sharding strategy");
  return std::make_unique<FsdpProgram>(options, world_size);
}

}  // namespace ddpsim::real
