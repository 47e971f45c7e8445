#pragma once
// MPI transport: every MPI call runs on one communication thread, fed by a
// queue, so an all-reduce progresses while the main thread computes the rest
// of backward (MPI_THREAD_SERIALIZED is all it needs).

#include <memory>

#include "real_backend/transport.hpp"

namespace ddpsim::real {

class MpiTransport final : public Transport {
 public:
  /// Initialises MPI (MPI_Init_thread) and starts the communication thread.
  MpiTransport(int* argc, char*** argv);
  ~MpiTransport() override;  ///< drains the queue, stops the thread, finalises MPI
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override;
  int world_size() const override;
  std::uint64_t all_reduce_async(float* data, std::size_t n) override;
  void wait(std::uint64_t ticket) override;
  void broadcast(float* data, std::size_t n, int root) override;
  void barrier() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddpsim::real
