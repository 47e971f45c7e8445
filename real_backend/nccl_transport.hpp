#pragma once
// The GPU side: an NCCL transport and device memory. Built with CUDA and NCCL
// when CMake finds them (nccl_transport.cpp); otherwise every entry point
// throws std::runtime_error saying so (gpu_unavailable.cpp), and the CPU
// path is unaffected.

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "real_backend/mpi_transport.hpp"

namespace ddpsim::real {

/// True when this build has the CUDA/NCCL path.
bool gpu_built();
/// True when this build has the CUDA/NCCL path and a GPU is visible.
bool gpu_available();
/// The visible GPUs and the CUDA runtime, driver and NCCL versions.
std::string gpu_description();

/// NCCL all-reduces on a stream of their own, ordered after the compute
/// stream with events; MPI (`bootstrap`, which must outlive it) broadcasts
/// NCCL's unique id and carries host broadcasts and barriers. Rank r uses
/// GPU r % (GPUs visible). `timeout_s` > 0: a collective not complete after
/// it aborts the job (0: off).
std::unique_ptr<Transport> make_nccl_transport(MpiTransport& bootstrap, double timeout_s);

/// Device memory (fp32), freed on destruction; 0 elements allocates nothing.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t floats);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  float* data() { return data_; }
  const float* data() const { return data_; }

 private:
  float* data_ = nullptr;
};

}  // namespace ddpsim::real
