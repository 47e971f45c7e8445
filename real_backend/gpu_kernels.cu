#include "real_backend/gpu_kernels.hpp"

namespace ddpsim::real::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void bias_activation_kernel(float* z, const float* bias, int rows, int cols, bool activate) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<std::size_t>(rows) * cols) return;
  const float v = z[i] + bias[i % cols];
  z[i] = activate ? tanhf(v) : v;
}

__global__ void loss_delta_kernel(const float* out, const float* y, float* delta, float* loss_sum, int n, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float d = out[i] - y[i];
  delta[i] = scale * d;
  atomicAdd(loss_sum, d * d);
}

__global__ void column_sums_kernel(const float* m, float* sums, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float s = 0;
  for (int r = 0; r < rows; ++r) s += m[static_cast<std::size_t>(r) * cols + c];
  sums[c] = s;
}

__global__ void tanh_backward_kernel(float* delta, const float* h, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) delta[i] *= 1.0f - h[i] * h[i];
}

__global__ void scale_copy_kernel(const float* src, float* dst, float scale, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = scale * src[i];
}

__global__ void sgd_momentum_kernel(float* p, float* v, const float* g, float lr, float momentum, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  v[i] = momentum * v[i] + g[i];
  p[i] -= lr * v[i];
}

}  // namespace

void bias_activation(float* z, const float* bias, int rows, int cols, bool activate, cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  if (n > 0) bias_activation_kernel<<<blocks(n), kThreads, 0, stream>>>(z, bias, rows, cols, activate);
}

void loss_delta(const float* out, const float* y, float* delta, float* loss_sum, int n, float scale, cudaStream_t stream) {
  if (n > 0) loss_delta_kernel<<<blocks(n), kThreads, 0, stream>>>(out, y, delta, loss_sum, n, scale);
}

void column_sums(const float* m, float* sums, int rows, int cols, cudaStream_t stream) {
  column_sums_kernel<<<blocks(cols), kThreads, 0, stream>>>(m, sums, rows, cols);
}

void tanh_backward(float* delta, const float* h, int n, cudaStream_t stream) {
  if (n > 0) tanh_backward_kernel<<<blocks(n), kThreads, 0, stream>>>(delta, h, n);
}

void scale_copy(const float* src, float* dst, float scale, std::size_t n, cudaStream_t stream) {
  if (n > 0) scale_copy_kernel<<<blocks(n), kThreads, 0, stream>>>(src, dst, scale, n);
}

void sgd_momentum(float* p, float* v, const float* g, float lr, float momentum, std::size_t n, cudaStream_t stream) {
  if (n > 0) sgd_momentum_kernel<<<blocks(n), kThreads, 0, stream>>>(p, v, g, lr, momentum, n);
}

}  // namespace ddpsim::real::gpu
