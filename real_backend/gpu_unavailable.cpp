// The GPU entry points in a build without CUDA and NCCL.

#include <stdexcept>

#include "real_backend/nccl_transport.hpp"
#include "real_backend/replica.hpp"

namespace ddpsim::real {
namespace {
[[noreturn]] void unavailable() {
  throw std::runtime_error("this ddpsim-real was built without CUDA and NCCL (CMake did not find them): --device gpu is unavailable");
}
}  // namespace

bool gpu_built() { return false; }
bool gpu_available() { return false; }
std::string gpu_description() { return "built without CUDA and NCCL"; }
std::unique_ptr<Transport> make_nccl_transport(MpiTransport&, double) { unavailable(); }
std::unique_ptr<Replica> make_gpu_replica(const ReplicaConfig&) { unavailable(); }
DeviceBuffer::DeviceBuffer(std::size_t floats) {
  if (floats > 0) unavailable();
}
DeviceBuffer::~DeviceBuffer() = default;

}  // namespace ddpsim::real
