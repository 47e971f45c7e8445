// The GPU replica: the same MLP as the CPU one (same initial parameters, same
// flat layout, same ready order), with cuBLAS matrix products and the kernels
// of gpu_kernels.cu, on the legacy default stream. The NCCL transport orders
// each all-reduce after the work queued there (nccl_transport.cpp).
//
// Row-major matrices are column-major transposes to cuBLAS: a layer's
// Z (rows x out) = A (rows x in) W^T is computed as Z^T = W A^T.

#include <cstring>
#include <utility>
#include <stdexcept>

#include "real_backend/gpu_check.hpp"
#include "real_backend/gpu_kernels.hpp"
#include "real_backend/grad_buckets.hpp"
#include "real_backend/nccl_transport.hpp"
#include "real_backend/replica.hpp"

namespace ddpsim::real {
namespace {

constexpr cudaStream_t kStream = nullptr;  // the legacy default stream

// Device memory that grows: reallocates (losing the contents) when asked for more.
class Scratch {
 public:
  Scratch() = default;
  Scratch(Scratch&& other) noexcept : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch& operator=(Scratch&&) = delete;
  ~Scratch() { cudaFree(data_); }
  float* data() const { return data_; }
  float* at_least(std::size_t floats) {
    if (floats > capacity_) {
      DDPSIM_CUDA_CHECK(cudaFree(data_));
      data_ = nullptr;
      DDPSIM_CUDA_CHECK(cudaMalloc(&data_, floats * sizeof(float)));
      capacity_ = floats;
    }
    return data_;
  }

 private:
  float* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class GpuReplica final : public Replica {
 public:
  explicit GpuReplica(const ReplicaConfig& c)
      : host_(c.shape, c.seed),
        tracker_(c.buckets, tensor_sizes(host_)),
        scale_(1.0f / static_cast<float>(c.world_size)),
        lr_(c.lr),
        momentum_(c.momentum),
        n_(host_.parameter_count()),
        params_(n_),
        grads_(n_),
        velocity_(n_),
        loss_(1) {
    widths_.push_back(c.shape.input);
    widths_.insert(widths_.end(), c.shape.hidden.begin(), c.shape.hidden.end());
    widths_.push_back(c.shape.output);
    activations_.resize(widths_.size());
    for (std::size_t b = 0; b < tracker_.size(); ++b) buckets_.emplace_back(tracker_.elements(static_cast<int>(b)));
    DDPSIM_CUBLAS_CHECK(cublasCreate(&cublas_));
    DDPSIM_CUBLAS_CHECK(cublasSetStream(cublas_, kStream));
    // Bit-reproducible runs: no atomics-based reductions inside cuBLAS.
    DDPSIM_CUBLAS_CHECK(cublasSetAtomicsMode(cublas_, CUBLAS_ATOMICS_NOT_ALLOWED));
    const std::vector<float> zeros(n_, 0.0f);
    set_state(host_.parameters(), zeros);
    int device = 0;
    DDPSIM_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    DDPSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    device_ = prop.name;
  }
  ~GpuReplica() override { cublasDestroy(cublas_); }
  GpuReplica(const GpuReplica&) = delete;
  GpuReplica& operator=(const GpuReplica&) = delete;

  std::string device() const override { return device_; }
  std::size_t parameter_count() const override { return n_; }

  float forward(const float* x, const float* y, int rows) override {
    rows_ = rows;
    const int layers = static_cast<int>(widths_.size()) - 1;
    const int out = widths_.back();
    if (rows == 0) return 0.0f;
    float* a0 = activations_[0].at_least(static_cast<std::size_t>(rows) * widths_[0]);
    float* target = target_.at_least(static_cast<std::size_t>(rows) * out);
    DDPSIM_CUDA_CHECK(cudaMemcpyAsync(a0, x, sizeof(float) * rows * widths_[0], cudaMemcpyHostToDevice, kStream));
    DDPSIM_CUDA_CHECK(cudaMemcpyAsync(target, y, sizeof(float) * rows * out, cudaMemcpyHostToDevice, kStream));
    const float one = 1.0f, zero = 0.0f;
    for (int l = 0; l < layers; ++l) {
      const int in = widths_[static_cast<std::size_t>(l)], width = widths_[static_cast<std::size_t>(l) + 1];
      float* z = activations_[static_cast<std::size_t>(l) + 1].at_least(static_cast<std::size_t>(rows) * width);
      DDPSIM_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, width, rows, in, &one, weight(l), in,
                                      activations_[static_cast<std::size_t>(l)].data(), in, &zero, z, width));
      gpu::bias_activation(z, params_.data() + host_.offset(2 * l + 1), rows, width, l + 1 < layers, kStream);
    }
    const int count = rows * out;
    DDPSIM_CUDA_CHECK(cudaMemsetAsync(loss_.data(), 0, sizeof(float), kStream));
    gpu::loss_delta(activations_.back().data(), target, delta_.at_least(static_cast<std::size_t>(count)), loss_.data(),
                    count, 2.0f / static_cast<float>(count), kStream);
    float loss = 0;
    DDPSIM_CUDA_CHECK(cudaMemcpy(&loss, loss_.data(), sizeof loss, cudaMemcpyDeviceToHost));  // also ends the forward
    return loss / static_cast<float>(count);
  }

  void backward(const LaunchBucket& launch) override {
    tracker_.reset();
    const auto ready = [&](int t) {
      const int b = tracker_.bucket_of(t);
      gpu::scale_copy(grads_.data() + host_.offset(t), buckets_[static_cast<std::size_t>(b)].data() + tracker_.position(t),
                      scale_, host_.numel(t), kStream);
      for (int l : tracker_.mark_ready(t)) launch(l, buckets_[static_cast<std::size_t>(l)].data(), tracker_.elements(l));
    };
    const int layers = static_cast<int>(widths_.size()) - 1;
    if (rows_ == 0) {  // an empty batch: a zero gradient
      DDPSIM_CUDA_CHECK(cudaMemsetAsync(grads_.data(), 0, n_ * sizeof(float), kStream));
      for (int l = layers - 1; l >= 0; --l) {
        ready(2 * l + 1);
        ready(2 * l);
      }
      DDPSIM_CUDA_CHECK(cudaStreamSynchronize(kStream));
      return;
    }
    const float one = 1.0f, zero = 0.0f;
    float* delta = delta_.data();
    for (int l = layers - 1; l >= 0; --l) {
      const int in = widths_[static_cast<std::size_t>(l)], width = widths_[static_cast<std::size_t>(l) + 1];
      const float* a = activations_[static_cast<std::size_t>(l)].data();
      gpu::column_sums(delta, grads_.data() + host_.offset(2 * l + 1), rows_, width, kStream);
      ready(2 * l + 1);  // bias before weight, as PyTorch's AccumulateGrad order
      // dW (width x in, row-major) = delta^T A: as cuBLAS's column-major (in x width) = A^T delta.
      DDPSIM_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_T, in, width, rows_, &one, a, in, delta, width, &zero,
                                      grads_.data() + host_.offset(2 * l), in));
      ready(2 * l);
      if (l > 0) {
        // delta' (rows x in) = (delta W) * (1 - a^2); column-major (in x rows) = W^T delta^T.
        float* previous = (delta == delta_.data() ? delta_other_ : delta_).at_least(static_cast<std::size_t>(rows_) * in);
        DDPSIM_CUBLAS_CHECK(cublasSgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, in, rows_, width, &one, weight(l), in, delta,
                                        width, &zero, previous, in));
        gpu::tanh_backward(previous, a, rows_ * in, kStream);
        delta = previous;
      }
    }
    DDPSIM_CUDA_CHECK(cudaStreamSynchronize(kStream));  // the end of backward compute, for the timings
  }

  // Per-layer times would need a synchronisation per layer, which would change what is measured.
  std::vector<double> layer_forward_ms() const override { return {}; }
  std::vector<double> layer_backward_ms() const override { return {}; }

  void unpack(int b) override {
    for (int t : tracker_.bucket(b).params) {
      DDPSIM_CUDA_CHECK(cudaMemcpyAsync(grads_.data() + host_.offset(t),
                                        buckets_[static_cast<std::size_t>(b)].data() + tracker_.position(t),
                                        host_.numel(t) * sizeof(float), cudaMemcpyDeviceToDevice, kStream));
    }
  }

  void optimizer_step() override {
    gpu::sgd_momentum(params_.data(), velocity_.data(), grads_.data(), lr_, momentum_, n_, kStream);
    DDPSIM_CUDA_CHECK(cudaStreamSynchronize(kStream));
  }

  void get_state(std::vector<float>& parameters, std::vector<float>& momentum) const override {
    parameters.resize(n_);
    momentum.resize(n_);
    DDPSIM_CUDA_CHECK(cudaMemcpy(parameters.data(), params_.data(), n_ * sizeof(float), cudaMemcpyDeviceToHost));
    DDPSIM_CUDA_CHECK(cudaMemcpy(momentum.data(), velocity_.data(), n_ * sizeof(float), cudaMemcpyDeviceToHost));
  }

  void set_state(const std::vector<float>& parameters, const std::vector<float>& momentum) override {
    if (parameters.size() != n_ || momentum.size() != n_) throw std::invalid_argument("state does not match the model");
    DDPSIM_CUDA_CHECK(cudaMemcpy(params_.data(), parameters.data(), n_ * sizeof(float), cudaMemcpyHostToDevice));
    DDPSIM_CUDA_CHECK(cudaMemcpy(velocity_.data(), momentum.data(), n_ * sizeof(float), cudaMemcpyHostToDevice));
  }

 private:
  float* weight(int l) { return params_.data() + host_.offset(2 * l); }

  Mlp host_;  // the initial parameters and the flat layout
  BucketTracker tracker_;
  float scale_, lr_, momentum_;
  std::size_t n_;
  std::vector<int> widths_;
  DeviceBuffer params_, grads_, velocity_, loss_;
  std::vector<DeviceBuffer> buckets_;
  std::vector<Scratch> activations_;  // [0] the input, [l + 1] layer l's output
  Scratch target_, delta_, delta_other_;
  int rows_ = 0;
  cublasHandle_t cublas_ = nullptr;
  std::string device_;
};

}  // namespace

std::unique_ptr<Replica> make_gpu_replica(const ReplicaConfig& config) { return std::make_unique<GpuReplica>(config); }

}  // namespace ddpsim::real
