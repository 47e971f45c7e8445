// The NCCL transport: bucket all-reduces on a non-blocking stream of their
// own, each ordered after the work queued so far on the legacy default stream
// (where the GPU replica computes) by an event, so they overlap the rest of
// backward. MPI bootstraps the communicator (rank 0's ncclUniqueId) and
// carries host broadcasts and barriers. The watchdog here is per rank: a
// collective not complete after the timeout is named, the communicator
// aborted (ncclCommAbort) and the job ended (MPI_Abort); the cross-rank
// report is the MPI transport's.

#include "real_backend/nccl_transport.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <deque>
#include <stdexcept>
#include <thread>

#include "real_backend/gpu_check.hpp"

namespace ddpsim::real {
namespace {

class NcclTransport final : public Transport {
 public:
  NcclTransport(MpiTransport& mpi, double timeout_s) : mpi_(mpi), timeout_s_(timeout_s) {
    int devices = 0;
    DDPSIM_CUDA_CHECK(cudaGetDeviceCount(&devices));
    DDPSIM_CUDA_CHECK(cudaSetDevice(mpi.rank() % devices));
    ncclUniqueId id{};
    if (mpi.rank() == 0) DDPSIM_NCCL_CHECK(ncclGetUniqueId(&id));
    mpi.broadcast(&id, sizeof id, 0);
    DDPSIM_NCCL_CHECK(ncclCommInitRank(&comm_, mpi.world_size(), id, mpi.rank()));
    DDPSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    DDPSIM_CUDA_CHECK(cudaMalloc(&scalar_, sizeof(float)));
    // Device time -> host time: an event recorded and waited for now.
    DDPSIM_CUDA_CHECK(cudaEventCreate(&origin_));
    DDPSIM_CUDA_CHECK(cudaEventRecord(origin_, stream_));
    DDPSIM_CUDA_CHECK(cudaEventSynchronize(origin_));
    origin_ms_ = steady_ms();
  }

  ~NcclTransport() override {
    for (Pending& p : pending_) destroy(p);
    cudaFree(scalar_);
    cudaEventDestroy(origin_);
    cudaStreamDestroy(stream_);
    ncclCommDestroy(comm_);
  }
  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;

  int rank() const override { return mpi_.rank(); }
  int world_size() const override { return mpi_.world_size(); }
  std::string name() const override { return "nccl"; }

  std::uint64_t all_reduce_async(float* data, std::size_t n, CollectiveLabel label) override {
    Pending p;
    p.ticket = next_ticket_++;
    p.seq = seq_++;
    p.label = label;
    for (cudaEvent_t* e : {&p.ready, &p.start, &p.done}) DDPSIM_CUDA_CHECK(cudaEventCreate(e));
    DDPSIM_CUDA_CHECK(cudaEventRecord(p.ready, nullptr));  // after the bucket's copy-in on the compute stream
    DDPSIM_CUDA_CHECK(cudaStreamWaitEvent(stream_, p.ready, 0));
    DDPSIM_CUDA_CHECK(cudaEventRecord(p.start, stream_));
    DDPSIM_NCCL_CHECK(ncclAllReduce(data, data, n, ncclFloat32, ncclSum, comm_, stream_));
    DDPSIM_CUDA_CHECK(cudaEventRecord(p.done, stream_));
    pending_.push_back(p);
    return p.ticket;
  }

  CollectiveTimes wait(std::uint64_t ticket) override {
    auto it = pending_.begin();
    while (it != pending_.end() && it->ticket != ticket) ++it;
    if (it == pending_.end()) throw std::invalid_argument("unknown or already waited-for ticket");
    const double since = steady_ms();
    for (;;) {
      const cudaError_t e = cudaEventQuery(it->done);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) DDPSIM_CUDA_CHECK(e);
      if (timeout_s_ > 0 && steady_ms() - since > timeout_s_ * 1000) {
        std::fprintf(stderr, "[rank %d] watchdog: NCCL collective #%llu (%s) has not completed after %g s; aborting "
                     "the communicator and every rank\n",
                     rank(), static_cast<unsigned long long>(it->seq), describe(it->label).c_str(), timeout_s_);
        std::fflush(stderr);
        ncclCommAbort(comm_);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
      std::this_thread::yield();
    }
    float start = 0, done = 0;
    DDPSIM_CUDA_CHECK(cudaEventElapsedTime(&start, origin_, it->start));
    DDPSIM_CUDA_CHECK(cudaEventElapsedTime(&done, origin_, it->done));
    destroy(*it);
    pending_.erase(it);
    return {origin_ms_ + start, origin_ms_ + done};
  }

  void sweep_collective(sim::CollectiveKind kind, float* data, std::size_t n) override {
    const std::size_t part = n / static_cast<std::size_t>(world_size());
    const auto at = static_cast<std::size_t>(rank()) * part;
    switch (kind) {
      case sim::CollectiveKind::kAllGather:  // in place: the send buffer is this rank's part of the result
        DDPSIM_NCCL_CHECK(ncclAllGather(data + at, data, part, ncclFloat32, comm_, stream_));
        break;
      case sim::CollectiveKind::kReduceScatter:  // in place: the result is this rank's part of the input
        DDPSIM_NCCL_CHECK(ncclReduceScatter(data, data + at, part, ncclFloat32, ncclSum, comm_, stream_));
        break;
      case sim::CollectiveKind::kBroadcast:
        DDPSIM_NCCL_CHECK(ncclBroadcast(data, data, n, ncclFloat32, 0, comm_, stream_));
        break;
      default:
        throw std::invalid_argument("a sweep runs all_gather, reduce_scatter or broadcast here");
    }
    DDPSIM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  float all_reduce_scalar(float value, CollectiveLabel label) override {
    DDPSIM_CUDA_CHECK(cudaMemcpy(scalar_, &value, sizeof value, cudaMemcpyHostToDevice));
    wait(all_reduce_async(scalar_, 1, label));
    DDPSIM_CUDA_CHECK(cudaMemcpy(&value, scalar_, sizeof value, cudaMemcpyDeviceToHost));
    return value;
  }

  void broadcast(void* data, std::size_t bytes, int root) override { mpi_.broadcast(data, bytes, root); }
  void barrier() override { mpi_.barrier(); }

 private:
  struct Pending {
    std::uint64_t ticket = 0, seq = 0;
    CollectiveLabel label;
    cudaEvent_t ready = nullptr, start = nullptr, done = nullptr;
  };
  static void destroy(Pending& p) {
    for (cudaEvent_t e : {p.ready, p.start, p.done}) cudaEventDestroy(e);
  }

  MpiTransport& mpi_;
  double timeout_s_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t origin_ = nullptr;
  double origin_ms_ = 0;
  float* scalar_ = nullptr;
  std::deque<Pending> pending_;
  std::uint64_t next_ticket_ = 0, seq_ = 0;
};

}  // namespace

bool gpu_built() { return true; }

std::string gpu_description() {
  int devices = 0, runtime = 0, driver = 0, nccl = 0;
  DDPSIM_CUDA_CHECK(cudaGetDeviceCount(&devices));
  DDPSIM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  DDPSIM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  DDPSIM_NCCL_CHECK(ncclGetVersion(&nccl));
  std::string s = fmt::format("{} GPU(s); CUDA runtime {}, driver {}, NCCL {}", devices, runtime, driver, nccl);
  for (int d = 0; d < devices; ++d) {
    cudaDeviceProp p{};
    DDPSIM_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    s += fmt::format("\n  GPU {}: {} (sm_{}{}, {:.0f} GiB)", d, p.name, p.major, p.minor,
                     static_cast<double>(p.totalGlobalMem) / (1 << 30));
  }
  return s;
}

bool gpu_available() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::unique_ptr<Transport> make_nccl_transport(MpiTransport& bootstrap, double timeout_s) {
  return std::make_unique<NcclTransport>(bootstrap, timeout_s);
}

DeviceBuffer::DeviceBuffer(std::size_t floats) {
  if (floats > 0) DDPSIM_CUDA_CHECK(cudaMalloc(&data_, floats * sizeof(float)));
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

}  // namespace ddpsim::real
