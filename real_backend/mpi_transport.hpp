#pragma once
// MPI transport: every MPI call runs on one communication thread, fed by a
// queue, so an all-reduce progresses while the main thread computes the rest
// of backward (MPI_THREAD_SERIALIZED is all it needs). Collectives are
// non-blocking and polled, so the same thread also runs the watchdog: when
// one makes no progress for `timeout_s`, it asks every rank where it is (on
// a communicator of its own), prints who is missing from which collective,
// and aborts every rank (MPI_Abort), leaving no process behind.

#include <cstddef>
#include <memory>
#include <string>

#include "real_backend/transport.hpp"

namespace ddpsim::real {

class MpiTransport final : public Transport {
 public:
  /// Initialises MPI (MPI_Init_thread) and starts the communication thread.
  /// `timeout_s` <= 0 turns the watchdog off. `ranks_per_node`: hybrid
  /// sharding's node groups: -1 none, 0 the ranks sharing a host
  /// (MPI_COMM_TYPE_SHARED), G > 0 consecutive blocks of G ranks; every node
  /// must have as many ranks (std::invalid_argument otherwise).
  MpiTransport(int* argc, char*** argv, double timeout_s, int ranks_per_node = -1);
  ~MpiTransport() override;  ///< drains the queue, stops the thread, finalises MPI
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  /// Keeps a flight recorder of this rank's last `buffer` collectives
  /// (real_backend/flight_log.hpp); when the watchdog fires, every rank that
  /// answers writes it to `dir`/nccl_trace_rank_<rank> before the job is
  /// aborted, for `ddpsim explain dir`. Call before the first collective.
  void record_flights(const std::string& dir, std::size_t buffer = 2000);

  int rank() const override;
  int world_size() const override;
  std::string name() const override { return "mpi"; }
  std::uint64_t all_reduce_async(float* data, std::size_t n, CollectiveLabel label) override;
  /// MPI has no half type: 16-bit words summed by a user op, each addition in float rounded back to half.
  std::uint64_t all_reduce_half_async(_Float16* data, std::size_t n, CollectiveLabel label) override;
  CollectiveTimes wait(std::uint64_t ticket) override;
  bool is_done(std::uint64_t ticket) override;
  std::uint64_t all_gather_async(float* data, std::size_t n, CollectiveLabel label) override;
  std::uint64_t reduce_scatter_async(const float* data, std::size_t n, float* out, CollectiveLabel label) override;
  float all_reduce_scalar(float value, CollectiveLabel label) override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  void sweep_collective(sim::CollectiveKind kind, float* data, std::size_t n) override;
  void barrier() override;
  int shard_group_size() const override;
  int shard_group_rank() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddpsim::real
