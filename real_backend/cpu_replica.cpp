// The CPU replica: the Eigen MLP, DDP's gradient buckets, SGD with momentum.

#include <stdexcept>

#include "real_backend/grad_buckets.hpp"
#include "real_backend/replica.hpp"

namespace ddpsim::real {
namespace {

class CpuReplica final : public Replica {
 public:
  explicit CpuReplica(const ReplicaConfig& c)
      : input_(c.shape.input),
        output_(c.shape.output),
        model_(c.shape, c.seed),
        buckets_(model_, c.buckets, c.world_size),
        optimizer_(c.lr, c.momentum, model_.parameter_count()) {}

  std::string device() const override { return "cpu"; }
  std::size_t parameter_count() const override { return model_.parameter_count(); }

  float forward(const float* x, const float* y, int rows) override {
    x_ = Eigen::Map<const Mlp::Matrix>(x, rows, input_);
    y_ = Eigen::Map<const Mlp::Matrix>(y, rows, output_);
    return model_.forward(x_, y_);
  }

  void backward(const LaunchBucket& launch) override {
    buckets_.reset();
    model_.backward([&](int tensor) {
      for (int b : buckets_.mark_ready(tensor, model_.gradients())) {
        launch(b, buckets_.buffer(b).data(), buckets_.buffer(b).size());
      }
    });
  }

  std::vector<double> layer_forward_ms() const override { return model_.layer_forward_ms(); }
  std::vector<double> layer_backward_ms() const override { return model_.layer_backward_ms(); }

  void unpack(int b) override { buckets_.unpack(b, model_.gradients()); }
  void optimizer_step() override { optimizer_.step(model_.parameters(), model_.gradients()); }

  void get_state(std::vector<float>& parameters, std::vector<float>& momentum) const override {
    parameters = model_.parameters();
    momentum = optimizer_.velocity();
  }

  void set_state(const std::vector<float>& parameters, const std::vector<float>& momentum) override {
    if (parameters.size() != model_.parameter_count() || momentum.size() != model_.parameter_count()) {
      throw std::invalid_argument("state does not match the model's parameter count");
    }
    model_.parameters() = parameters;
    optimizer_.velocity() = momentum;
  }

 private:
  int input_, output_;
  Mlp model_;
  GradBuckets buckets_;
  SgdMomentum optimizer_;
  Mlp::Matrix x_, y_;
};

}  // namespace

std::unique_ptr<Replica> make_cpu_replica(const ReplicaConfig& config) { return std::make_unique<CpuReplica>(config); }

}  // namespace ddpsim::real
