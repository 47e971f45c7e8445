#pragma once
// The element-wise CUDA kernels of the GPU replica (gpu_kernels.cu); the
// matrix products are cuBLAS's. All launch on `stream` and return at once.

#include <cuda_runtime.h>

#include <cstddef>

namespace ddpsim::real::gpu {

/// z[r][c] += bias[c] for a rows x cols row-major z, then tanh in place if `activate`.
void bias_activation(float* z, const float* bias, int rows, int cols, bool activate, cudaStream_t stream);
/// delta = scale (out - y); *loss_sum += sum (out - y)^2 (n elements).
void loss_delta(const float* out, const float* y, float* delta, float* loss_sum, int n, float scale, cudaStream_t stream);
/// sums[c] = sum over rows of m[r][c] (row-major rows x cols).
void column_sums(const float* m, float* sums, int rows, int cols, cudaStream_t stream);
/// delta *= 1 - h^2 (the derivative of tanh at its output h).
void tanh_backward(float* delta, const float* h, int n, cudaStream_t stream);
/// dst = scale * src.
void scale_copy(const float* src, float* dst, float scale, std::size_t n, cudaStream_t stream);
/// v = momentum v + g; p -= lr v (torch.optim.SGD with momentum).
void sgd_momentum(float* p, float* v, const float* g, float lr, float momentum, std::size_t n, cudaStream_t stream);

}  // namespace ddpsim::real::gpu
