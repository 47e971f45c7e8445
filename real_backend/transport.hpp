#pragma once
// How the real trainer's ranks talk. Summing all-reduces run asynchronously,
// so they overlap the rest of backward, as DDP's do on their own stream.
// Two implementations: MPI on CPUs (mpi_transport.cpp), NCCL on GPUs
// (nccl_transport.cpp, built when CUDA and NCCL are found).

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/op_sink.hpp"

namespace ddpsim::real {

/// What a collective is for, so a watchdog can say which one hangs.
struct CollectiveLabel {
  enum class Kind : int {
    kBucketAllReduce,
    kSkipVote,
    kBroadcast,
    kBarrier,
    kSweep,
    kAllGather,         ///< FSDP, on the shard group
    kReduceScatter,     ///< FSDP, on the shard group
    kReplicaAllReduce,  ///< hybrid sharding: a unit's gradient shard across the replicas
  };
  Kind kind = Kind::kBucketAllReduce;
  int iteration = -1;  ///< training step, -1 outside the loop
  int bucket = -1;     ///< for bucket all-reduces; the FSDP unit for all-gathers and reduce-scatters
  bool operator==(const CollectiveLabel&) const = default;
};
/// "all_reduce of bucket 0 (iteration 9)", "broadcast", ...
std::string describe(const CollectiveLabel& label);

/// When a collective ran, in milliseconds of the process's steady clock.
struct CollectiveTimes {
  double started_ms = 0;   ///< the transport began it (all earlier ones done)
  double finished_ms = 0;  ///< the transport saw it complete
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// "mpi" or "nccl".
  virtual std::string name() const = 0;
  /// Starts summing `n` floats at `data` (memory the transport reaches: host
  /// for MPI, device for NCCL) across all ranks, in place, after
  /// every collective started before it. The buffer must stay alive and
  /// untouched until wait(ticket) returns. Training collectives are numbered
  /// in this order (their sequence number), as NCCL and MPI match them.
  virtual std::uint64_t all_reduce_async(float* data, std::size_t n, CollectiveLabel label) = 0;
  virtual CollectiveTimes wait(std::uint64_t ticket) = 0;
  /// Whether the collective of `ticket` has completed (wait() still to be
  /// called), without blocking: the overlap micro-benchmark computes until
  /// it has. The base class throws std::logic_error (NCCL's, today).
  virtual bool is_done(std::uint64_t ticket);
  /// As all_reduce_async on `n` IEEE half-precision values (fp16_compress:
  /// each partial sum rounded to half, as gloo and NCCL sum float16). The
  /// base class throws std::logic_error: a transport without it (NCCL's, today).
  virtual std::uint64_t all_reduce_half_async(_Float16* data, std::size_t n, CollectiveLabel label);
  /// FSDP's collectives, asynchronous and numbered as all_reduce_async, on
  /// `n` floats at `data` (n a multiple of the world size, S = n / W):
  /// all_gather_async gathers every rank's S floats, this rank's at
  /// data + rank * S, in place; reduce_scatter_async sums the n floats at
  /// `data` across ranks into this rank's S floats at `out` (a buffer of its
  /// own, as reduce_scatter_tensor's output). The base class
  /// throws std::logic_error: a transport without them (NCCL's, today).
  /// Both run on the shard group: the world, or under hybrid sharding the
  /// ranks of this rank's node. all_reduce_async with a kReplicaAllReduce
  /// label runs on the replica group: this rank's peers of the same index
  /// on every node.
  virtual std::uint64_t all_gather_async(float* data, std::size_t n, CollectiveLabel label);
  virtual std::uint64_t reduce_scatter_async(const float* data, std::size_t n, float* out, CollectiveLabel label);
  /// The shard group: its size and this rank's index in it (the world and
  /// the rank, unless the transport was made with node groups).
  virtual int shard_group_size() const { return world_size(); }
  virtual int shard_group_rank() const { return rank(); }
  /// Sums one host float across all ranks (a training collective), blocking.
  virtual float all_reduce_scalar(float value, CollectiveLabel label) = 0;
  /// Broadcasts `bytes` bytes of host memory from `root`.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  /// One collective of a sweep other than all_reduce, blocking, on `n`
  /// floats of transport memory (n a multiple of the world size), in
  /// nccl-tests' sense: all_gather (n / W from each rank, gathered in place),
  /// reduce_scatter (n summed, n / W left on each rank, in place), broadcast
  /// (n from rank 0). std::invalid_argument for any other kind.
  virtual void sweep_collective(sim::CollectiveKind kind, float* data, std::size_t n) = 0;
  /// A barrier on a communicator of its own: it synchronises the ranks but
  /// can never be paired with a training collective.
  virtual void barrier() = 0;
};

/// Rank 0's `bytes` to every rank (its length first, then the bytes).
void broadcast_bytes(Transport& t, std::string& bytes);

/// Milliseconds on the steady clock (the clock CollectiveTimes use).
double steady_ms();

}  // namespace ddpsim::real
