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
  total_ = params_.size();
}

std::size_t Mlp::numel(int tensor) const {
  const auto t = static_cast<std::size_t>(tensor);
  return (t + 1 < offsets_.size() ? offsets_[t + 1] : total_) - offsets_[t];
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

float Mlp::forward(const Matrix& x, const Matrix& y, const LayerAccess& access) {
  const int n = layers();
  if (x.cols() != widths_.front() || y.cols() != widths_.back() || x.rows() != y.rows()) {
    throw std::invalid_argument("batch shape does not match the model");
  }
  inputs_.clear();
  layer_forward_ms_.assign(static_cast<std::size_t>(n), 0.0);
  Matrix a = x;
  for (int l = 0; l < n; ++l) {
    if (access.before) access.before(l);
    const auto t0 = std::chrono::steady_clock::now();
    const float* p = layer_parameters(l, access);
    inputs_.push_back(a);
    Matrix z = a * weight(l, p).transpose();
    z.rowwise() += bias(l, p);
    a = l + 1 < n ? Matrix(z.array().tanh()) : z;
    layer_forward_ms_[static_cast<std::size_t>(l)] = elapsed_ms(t0);
    if (access.after) access.after(l);
  }
  diff_ = a - y;
  const auto count = static_cast<float>(diff_.size());
  return count > 0 ? diff_.squaredNorm() / count : 0.0f;
}

void Mlp::backward(const std::function<void(int)>& on_ready, const LayerAccess& access) {
  const int n = layers();
  if (inputs_.size() != static_cast<std::size_t>(n)) throw std::logic_error("backward without forward");
  const auto count = static_cast<float>(diff_.size());
  // An empty batch contributes a zero gradient (its rows are zero).
  Matrix delta = count > 0 ? Matrix((2.0f / count) * diff_) : diff_;
  layer_backward_ms_.assign(static_cast<std::size_t>(n), 0.0);
  for (int l = n - 1; l >= 0; --l) {
    if (access.before) access.before(l);
    const auto t0 = std::chrono::steady_clock::now();
    const auto u = static_cast<std::size_t>(l);
    float* g = layer_gradients(l, access);
    bias(l, g) = delta.colwise().sum();
    if (on_ready) on_ready(2 * l + 1);
    weight(l, g) = delta.transpose() * inputs_[u];
    if (on_ready) on_ready(2 * l);
    if (l > 0) {
      const Matrix& h = inputs_[u];  // tanh output of layer l - 1
      delta = ((delta * weight(l, layer_parameters(l, access))).array() * (1.0f - h.array().square())).matrix();
    }
    inputs_[u] = Matrix();  // its saved input is freed once the layer's backward ran, as autograd frees it
    // Includes the on_ready callbacks (copying into buckets, launching all-reduces), as DDP's hooks do.
    layer_backward_ms_[u] = elapsed_ms(t0);
    if (access.after) access.after(l);
  }
  inputs_.clear();
}

float Mlp::forward_backward(const Matrix& x, const Matrix& y, const std::function<void(int)>& on_ready) {
  const float loss = forward(x, y);
  backward(on_ready);
  return loss;
}

std::size_t Mlp::activation_bytes() const {
  std::size_t floats = static_cast<std::size_t>(diff_.size());
  for (const Matrix& m : inputs_) floats += static_cast<std::size_t>(m.size());
  return floats * sizeof(float);
}

void Mlp::release_storage() {
  std::vector<float>().swap(params_);
  std::vector<float>().swap(grads_);
}

const float* Mlp::layer_parameters(int l, const LayerAccess& access) const {
  if (access.parameters) return access.parameters(l);
  if (params_.empty()) throw std::logic_error("the model's storage was released: a pass needs LayerAccess::parameters");
  return params_.data() + layer_offset(l);
}

float* Mlp::layer_gradients(int l, const LayerAccess& access) {
  if (access.gradients) return access.gradients(l);
  if (grads_.empty()) throw std::logic_error("the model's storage was released: a pass needs LayerAccess::gradients");
  return grads_.data() + layer_offset(l);
}

Eigen::Map<const Mlp::Matrix> Mlp::weight(int l, const float* base) const {
  const auto u = static_cast<std::size_t>(l);
  return {base, widths_[u + 1], widths_[u]};
}

Eigen::Map<const Eigen::RowVectorXf> Mlp::bias(int l, const float* base) const {
  const auto u = static_cast<std::size_t>(l);
  return {base + numel(2 * l), widths_[u + 1]};
}

Eigen::Map<Mlp::Matrix> Mlp::weight(int l, float* base) const {
  const auto u = static_cast<std::size_t>(l);
  return {base, widths_[u + 1], widths_[u]};
}

Eigen::Map<Eigen::RowVectorXf> Mlp::bias(int l, float* base) const {
  const auto u = static_cast<std::size_t>(l);
  return {base + numel(2 * l), widths_[u + 1]};
}

void SgdMomentum::step(std::vector<float>& params, const std::vector<float>& grads) {
  if (params.size() != velocity_.size() || grads.size() != velocity_.size()) throw std::invalid_argument("size mismatch");
  for (std::size_t i = 0; i < params.size(); ++i) {
    velocity_[i] = momentum_ * velocity_[i] + grads[i];
    params[i] -= lr_ * velocity_[i];
  }
}

}  // namespace ddpsim::real
