#pragma once
// How the real trainer's ranks talk. Summing all-reduces run asynchronously,
// so they overlap the rest of backward, as DDP's do on their own stream.
// Two implementations: MPI on CPUs (mpi_transport.cpp), NCCL on GPUs.

#include <cstddef>
#include <cstdint>

namespace ddpsim::real {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// Starts summing `n` floats at `data` across all ranks, in place. The
  /// buffer must stay alive and untouched until wait(ticket) returns.
  virtual std::uint64_t all_reduce_async(float* data, std::size_t n) = 0;
  virtual void wait(std::uint64_t ticket) = 0;
  virtual void broadcast(float* data, std::size_t n, int root) = 0;
  virtual void barrier() = 0;
};

}  // namespace ddpsim::real
