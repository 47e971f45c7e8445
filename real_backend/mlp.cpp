#include "real_backend/mlp.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/random.hpp"

namespace ddpsim::real {
namespace {
constexpr std::uint64_t kInitStream = 0x4d4c50494e495453ULL;  // "MLPINITS"

// Wall-clock time is the measurement here, never a simulation input.
double elapsed_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}

Mlp::Mlp(MlpShape shape, std::uint64_t seed) {
  if (shape.input < 1 || shape.output < 1) throw std::invalid_argument("layer widths must be positive");
  widths_.push_back(shape.input);
  for (int h : shape.hidden) {
    if (h < 1) throw std::invalid_argument("layer widths must be positive");
    widths_.push_back(h);
  }
  widths_.push_back(shape.output);
  sim::Rng rng = sim::Rng::for_stream(seed, {kInitStream});
  for (std::size_t l = 0; l + 1 < widths_.size(); ++l) {
    const auto in = static_cast<std::size_t>(widths_[l]), out = static_cast<std::size_t>(widths_[l + 1]);
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    offsets_.push_back(params_.size());
    for (std::size_t i = 0; i < out * in; ++i) params_.push_back(static_cast<float>(sim::draw_uniform(rng, -bound, bound)));
    offsets_.push_back(params_.size());
    for (std::size_t i = 0; i < out; ++i) params_.push_back(static_cast<float>(sim::draw_uniform(rng, -bound, bound)));
  }
  grads_.assign(params_.size(), 0.0f);
}

std::size_t Mlp::numel(int tensor) const {
  const auto t = static_cast<std::size_t>(tensor);
  return (t + 1 < offsets_.size() ? offsets_[t + 1] : params_.size()) - offsets_[t];
}

namespace {

models::ModelSpec spec_of_widths(const std::vector<int>& widths) {
  models::ModelSpec m;
  const int layers = static_cast<int>(widths.size()) - 1;
  for (int l = 0; l < layers; ++l) {
    const auto u = static_cast<std::size_t>(l);
    m.parameters.push_back({"layers." + std::to_string(l) + ".weight", {widths[u + 1], widths[u]}, models::DType::kFloat32});
    m.parameters.push_back({"layers." + std::to_string(l) + ".bias", {widths[u + 1]}, models::DType::kFloat32});
  }
  for (int l = layers - 1; l >= 0; --l) {
    m.ready_order.push_back(2 * l + 1);  // bias first
    m.ready_order.push_back(2 * l);
  }
  m.forward.assign(m.parameters.size(), sim::Time{});
  m.backward.assign(m.parameters.size(), sim::Time{});
  return m;
}

}  // namespace

models::ModelSpec mlp_spec(const MlpShape& shape) {
  std::vector<int> widths = {shape.input};
  widths.insert(widths.end(), shape.hidden.begin(), shape.hidden.end());
  widths.push_back(shape.output);
  return spec_of_widths(widths);
}

models::ModelSpec Mlp::spec() const { return spec_of_widths(widths_); }

float Mlp::forward(const Matrix& x, const Matrix& y) {
  const int layers = static_cast<int>(widths_.size()) - 1;
  if (x.cols() != widths_.front() || y.cols() != widths_.back() || x.rows() != y.rows()) {
    throw std::invalid_argument("batch shape does not match the model");
  }
  inputs_.clear();
  layer_forward_ms_.assign(static_cast<std::size_t>(layers), 0.0);
  Matrix a = x;
  for (int l = 0; l < layers; ++l) {
    const auto t0 = std::chrono::steady_clock::now();
    inputs_.push_back(a);
    Matrix z = a * weight(l, params_).transpose();
    z.rowwise() += bias(l, params_);
    a = l + 1 < layers ? Matrix(z.array().tanh()) : z;
    layer_forward_ms_[static_cast<std::size_t>(l)] = elapsed_ms(t0);
  }
  diff_ = a - y;
  const auto count = static_cast<float>(diff_.size());
  return count > 0 ? diff_.squaredNorm() / count : 0.0f;
}

void Mlp::backward(const std::function<void(int)>& on_ready) {
  const int layers = static_cast<int>(widths_.size()) - 1;
  if (inputs_.size() != static_cast<std::size_t>(layers)) throw std::logic_error("backward without forward");
  const auto count = static_cast<float>(diff_.size());
  // An empty batch contributes a zero gradient (its rows are zero).
  Matrix delta = count > 0 ? Matrix((2.0f / count) * diff_) : diff_;
  layer_backward_ms_.assign(static_cast<std::size_t>(layers), 0.0);
  for (int l = layers - 1; l >= 0; --l) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto u = static_cast<std::size_t>(l);
    bias(l, grads_) = delta.colwise().sum();
    if (on_ready) on_ready(2 * l + 1);
    weight(l, grads_) = delta.transpose() * inputs_[u];
    if (on_ready) on_ready(2 * l);
    if (l > 0) {
      const Matrix& h = inputs_[u];  // tanh output of layer l - 1
      delta = ((delta * weight(l, params_)).array() * (1.0f - h.array().square())).matrix();
    }
    // Includes the on_ready callbacks (copying into buckets, launching all-reduces), as DDP's hooks do.
    layer_backward_ms_[u] = elapsed_ms(t0);
  }
  inputs_.clear();
}

float Mlp::forward_backward(const Matrix& x, const Matrix& y, const std::function<void(int)>& on_ready) {
  const float loss = forward(x, y);
  backward(on_ready);
  return loss;
}

Eigen::Map<Mlp::Matrix> Mlp::weight(int l, std::vector<float>& store) const {
  const auto u = static_cast<std::size_t>(l);
  return {store.data() + offsets_[2 * u], widths_[u + 1], widths_[u]};
}

Eigen::Map<Eigen::RowVectorXf> Mlp::bias(int l, std::vector<float>& store) const {
  const auto u = static_cast<std::size_t>(l);
  return {store.data() + offsets_[2 * u + 1], widths_[u + 1]};
}

void SgdMomentum::step(std::vector<float>& params, const std::vector<float>& grads) {
  if (params.size() != velocity_.size() || grads.size() != velocity_.size()) throw std::invalid_argument("size mismatch");
  for (std::size_t i = 0; i < params.size(); ++i) {
    velocity_[i] = momentum_ * velocity_[i] + grads[i];
    params[i] -= lr_ * velocity_[i];
  }
}

}  // namespace ddpsim::real
