#pragma once
// The model the real trainer trains: a multi-layer perceptron in fp32 on
// Eigen, with tanh hidden layers and a mean-squared-error loss. Parameters
// live in one flat array in registration order (layers.i.weight,
// layers.i.bias); gradients are produced last layer first, bias before
// weight (PyTorch's AccumulateGrad order for nn.Linear), so the simulator's
// reducer buckets them exactly as DDP would.

#include <Eigen/Dense>

#include <cstdint>
#include <functional>
#include <vector>

#include "models/parameters.hpp"

namespace ddpsim::real {

struct MlpShape {
  int input = 8;
  std::vector<int> hidden;
  int output = 1;
};

/// The parameters and gradient-ready order of an MLP of this shape, without
/// building one (no parameter initialisation): what the reducer needs.
models::ModelSpec mlp_spec(const MlpShape& shape);

/// Where a pass reads each layer's parameters and writes its gradients, and
/// what runs around each layer's compute: FSDP's hooks (fsdp_program.cpp).
/// Layer l's parameters are its weight then its bias, Mlp::layer_numel(l)
/// floats; an empty function means the model's own flat arrays.
struct LayerAccess {
  std::function<const float*(int)> parameters;
  std::function<float*(int)> gradients;
  std::function<void(int)> before;  ///< before layer l's forward, or its backward (not timed)
  std::function<void(int)> after;   ///< after layer l's forward, or its backward (not timed)
};

class Mlp {
 public:
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  /// Deterministic initialisation from `seed` (uniform +-1/sqrt(fan_in), as nn.Linear).
  Mlp(MlpShape shape, std::uint64_t seed);

  /// Parameters (registration order) and gradient-ready order, for the reducer.
  models::ModelSpec spec() const;
  std::size_t parameter_count() const { return total_; }

  /// Forward of the mean-squared error over the batch (rows of x and y; zero
  /// rows allowed: loss 0, and a zero gradient from the backward). Returns the loss.
  float forward(const Matrix& x, const Matrix& y, const LayerAccess& access = {});
  /// Backward of the last forward. Overwrites the gradients; calls
  /// `on_ready(tensor)` as each parameter tensor's gradient is complete, in ready order.
  void backward(const std::function<void(int)>& on_ready = {}, const LayerAccess& access = {});
  /// forward() then backward().
  float forward_backward(const Matrix& x, const Matrix& y, const std::function<void(int)>& on_ready = {});

  std::vector<float>& parameters() { return params_; }
  const std::vector<float>& parameters() const { return params_; }
  std::vector<float>& gradients() { return grads_; }
  const std::vector<float>& gradients() const { return grads_; }
  /// Wall-clock time of each layer (index l = layers.l) in the last forward and backward, ms.
  const std::vector<double>& layer_forward_ms() const { return layer_forward_ms_; }
  const std::vector<double>& layer_backward_ms() const { return layer_backward_ms_; }
  /// Offset and element count of parameter tensor i in the flat arrays.
  std::size_t offset(int tensor) const { return offsets_[static_cast<std::size_t>(tensor)]; }
  std::size_t numel(int tensor) const;
  int layers() const { return static_cast<int>(widths_.size()) - 1; }
  /// Layer l's weight and bias, contiguous in the flat arrays: offset and elements.
  std::size_t layer_offset(int layer) const { return offset(2 * layer); }
  std::size_t layer_numel(int layer) const { return numel(2 * layer) + numel(2 * layer + 1); }
  /// Frees the model's own parameter and gradient arrays (FSDP keeps them
  /// sharded elsewhere); from then on a pass needs both LayerAccess functions.
  /// parameters() is left empty; offsets and numels stay.
  void release_storage();
  /// Bytes the last forward keeps for backward (each layer's input and the
  /// output's difference): the activations.
  std::size_t activation_bytes() const;

 private:
  std::vector<int> widths_;  // input, hidden..., output
  std::vector<float> params_;
  std::vector<float> grads_;
  std::size_t total_ = 0;             // parameter count (params_ may be released)
  std::vector<std::size_t> offsets_;  // per tensor: weight of layer l is 2l, bias 2l + 1
  std::vector<Matrix> inputs_;        // forward -> backward: each layer's input
  Matrix diff_;                       // forward -> backward: output - target
  std::vector<double> layer_forward_ms_, layer_backward_ms_;

  // Layer l's weight and bias in the floats at `base` (the layer's start).
  Eigen::Map<const Matrix> weight(int layer, const float* base) const;
  Eigen::Map<const Eigen::RowVectorXf> bias(int layer, const float* base) const;
  Eigen::Map<Matrix> weight(int layer, float* base) const;
  Eigen::Map<Eigen::RowVectorXf> bias(int layer, float* base) const;
  const float* layer_parameters(int layer, const LayerAccess& access) const;
  float* layer_gradients(int layer, const LayerAccess& access);
};

/// SGD with momentum, as torch.optim.SGD(momentum=mu): v = mu v + g; p -= lr v.
class SgdMomentum {
 public:
  SgdMomentum(float lr, float momentum, std::size_t n) : lr_(lr), momentum_(momentum), velocity_(n, 0.0f) {}
  void step(std::vector<float>& params, const std::vector<float>& grads);
  std::vector<float>& velocity() { return velocity_; }
  const std::vector<float>& velocity() const { return velocity_; }

 private:
  float lr_;
  float momentum_;
  std::vector<float> velocity_;
};

}  // namespace ddpsim::real
