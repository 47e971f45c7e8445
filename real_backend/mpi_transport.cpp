#include "real_backend/mpi_transport.hpp"

#include <mpi.h>

#include <climits>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace ddpsim::real {
namespace {

// One checking macro for MPI calls: the call, file and line in the error.
#define DDPSIM_MPI_CHECK(call)                                                                        \
  do {                                                                                                \
    const int rc_ = (call);                                                                           \
    if (rc_ != MPI_SUCCESS) {                                                                         \
      throw std::runtime_error(std::string("MPI error ") + std::to_string(rc_) + " in " #call " at " + \
                               __FILE__ + ":" + std::to_string(__LINE__));                            \
    }                                                                                                 \
  } while (0)

}  // namespace

struct MpiTransport::Impl {
  int rank = 0;
  int world = 1;
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::pair<std::uint64_t, std::function<void()>>> queue;
  std::map<std::uint64_t, bool> done;
  std::uint64_t next_ticket = 0;
  bool stopping = false;
  std::string error;  // set by the communication thread
  std::thread thread;

  void run() {
    for (;;) {
      std::pair<std::uint64_t, std::function<void()>> task;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        task = std::move(queue.front());
        queue.pop_front();
      }
      try {
        task.second();
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        error = e.what();
      }
      {
        std::lock_guard lock(mutex);
        done[task.first] = true;
      }
      cv.notify_all();
    }
  }

  std::uint64_t post(std::function<void()> fn) {
    std::uint64_t ticket;
    {
      std::lock_guard lock(mutex);
      ticket = next_ticket++;
      done[ticket] = false;
      queue.emplace_back(ticket, std::move(fn));
    }
    cv.notify_all();
    return ticket;
  }

  void wait(std::uint64_t ticket) {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done.at(ticket) || !error.empty(); });
    if (!error.empty()) throw std::runtime_error(error);
    done.erase(ticket);
  }
};

MpiTransport::MpiTransport(int* argc, char*** argv) : impl_(std::make_unique<Impl>()) {
  int provided = 0;
  DDPSIM_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided));
  if (provided < MPI_THREAD_SERIALIZED) throw std::runtime_error("MPI does not provide MPI_THREAD_SERIALIZED");
  DDPSIM_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &impl_->rank));
  DDPSIM_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &impl_->world));
  impl_->thread = std::thread([this] { impl_->run(); });
}

MpiTransport::~MpiTransport() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
  MPI_Finalize();
}

int MpiTransport::rank() const { return impl_->rank; }
int MpiTransport::world_size() const { return impl_->world; }

std::uint64_t MpiTransport::all_reduce_async(float* data, std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument("all-reduce larger than INT_MAX elements");
  return impl_->post([data, n] {
    DDPSIM_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  });
}

void MpiTransport::wait(std::uint64_t ticket) { impl_->wait(ticket); }

void MpiTransport::broadcast(float* data, std::size_t n, int root) {
  impl_->wait(impl_->post([data, n, root] {
    DDPSIM_MPI_CHECK(MPI_Bcast(data, static_cast<int>(n), MPI_FLOAT, root, MPI_COMM_WORLD));
  }));
}

void MpiTransport::barrier() {
  impl_->wait(impl_->post([] { DDPSIM_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }));
}

}  // namespace ddpsim::real
