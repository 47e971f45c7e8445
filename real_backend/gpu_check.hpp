#pragma once
// One checking macro per GPU library: the call, file and line in the error.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

#define DDPSIM_GPU_FAIL(call, what) \
  throw std::runtime_error(std::string(what) + " in " #call " at " + __FILE__ + ":" + std::to_string(__LINE__))

#define DDPSIM_CUDA_CHECK(call)                                                        \
  do {                                                                                 \
    const cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) DDPSIM_GPU_FAIL(call, std::string("CUDA error ") + cudaGetErrorString(e_)); \
  } while (0)

#define DDPSIM_CUBLAS_CHECK(call)                                                              \
  do {                                                                                         \
    const cublasStatus_t s_ = (call);                                                          \
    if (s_ != CUBLAS_STATUS_SUCCESS) DDPSIM_GPU_FAIL(call, "cuBLAS status " + std::to_string(static_cast<int>(s_))); \
  } while (0)

#define DDPSIM_NCCL_CHECK(call)                                                       \
  do {                                                                                \
    const ncclResult_t r_ = (call);                                                   \
    if (r_ != ncclSuccess) DDPSIM_GPU_FAIL(call, std::string("NCCL error ") + ncclGetErrorString(r_)); \
  } while (0)
