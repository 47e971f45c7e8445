#include "real_backend/mpi_transport.hpp"
#include "real_backend/half.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "real_backend/flight_log.hpp"
#include "real_backend/hang_report.hpp"

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

constexpr int kQueryTag = 1;     // "where are you?"
constexpr int kProgressTag = 2;  // the answer: encode_progress()
constexpr int kAbortCode = 3;    // MPI_Abort's error code after a watchdog report

int checked_count(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX)) throw std::invalid_argument("collective larger than INT_MAX elements");
  return static_cast<int>(n);
}

}  // namespace

struct MpiTransport::Impl {
  struct Op {
    std::uint64_t ticket = 0;
    std::function<void(MPI_Request*)> start;  // posts the non-blocking call
    CollectiveLabel label;
    bool training = true;  // on the training communicator, numbered by sequence
    FlightLog::Call call;  // what the flight recorder keeps of it
    std::int64_t record = -1;
  };

  int rank = 0;
  int world = 1;
  double timeout_s = 0;
  MPI_Comm train_comm = MPI_COMM_NULL;  // bucket all-reduces, skip votes, broadcasts
  MPI_Comm shard_comm = MPI_COMM_NULL;    // hybrid sharding: this rank's node (else train_comm's ranks)
  MPI_Comm replica_comm = MPI_COMM_NULL;  // hybrid sharding: one rank of each node, this rank's index
  int shard_size = 1, shard_rank = 0;
  MPI_Comm sync_comm = MPI_COMM_NULL;   // barriers only
  MPI_Comm ctl_comm = MPI_COMM_NULL;    // the watchdog's point-to-point messages

  // Shared with the callers, under `mutex`.
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Op> queue;
  std::map<std::uint64_t, std::optional<CollectiveTimes>> done;
  std::uint64_t next_ticket = 0;
  bool stopping = false;
  std::string error;
  std::thread thread;
  std::optional<FlightLog> flight;  // with --flight-recorder
  std::string flight_dir;
  bool dumped = false;
  std::size_t shard_group = 0, replica_group = 0;  // their index in the flight log's groups

  // The communication thread's own.
  RankProgress progress;
  MPI_Request query = MPI_REQUEST_NULL;
  int query_buffer = 0;
  std::list<std::pair<std::vector<int>, MPI_Request>> sends;  // answers and queries in flight

  void run() {
    try {
      DDPSIM_MPI_CHECK(MPI_Irecv(&query_buffer, 1, MPI_INT, MPI_ANY_SOURCE, kQueryTag, ctl_comm, &query));
      for (;;) {
        std::optional<Op> op;
        {
          std::unique_lock lock(mutex);
          if (queue.empty() && !stopping) cv.wait_for(lock, std::chrono::milliseconds(1));
          if (!queue.empty()) {
            op = std::move(queue.front());
            queue.pop_front();
          } else if (stopping) {
            break;
          }
        }
        if (op) {
          execute(*op);
        } else {
          serve();
        }
      }
      DDPSIM_MPI_CHECK(MPI_Cancel(&query));
      DDPSIM_MPI_CHECK(MPI_Wait(&query, MPI_STATUS_IGNORE));
      for (auto& [buffer, request] : sends) DDPSIM_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      error = e.what();
      cv.notify_all();
    }
  }

  void execute(const Op& op) {
    if (op.training) progress.history.push_back(op.label);
    progress.current = op.label;
    progress.phase = op.training ? RankProgress::Phase::kInCollective : RankProgress::Phase::kInBarrier;
    CollectiveTimes times;
    times.started_ms = steady_ms();
    logged(op, [&](FlightLog& log) { log.start(op.record, now_ns()); });
    MPI_Request request = MPI_REQUEST_NULL;
    op.start(&request);
    for (int flag = 0;;) {
      DDPSIM_MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
      if (flag) break;
      serve();
      if (timeout_s > 0 && steady_ms() - times.started_ms > timeout_s * 1000) on_timeout();
      std::this_thread::yield();
    }
    times.finished_ms = steady_ms();
    logged(op, [&](FlightLog& log) { log.complete(op.record, now_ns()); });
    progress.phase = RankProgress::Phase::kComputing;
    {
      std::lock_guard lock(mutex);
      done[op.ticket] = times;
    }
    cv.notify_all();
  }

  // Answers a pending "where are you?" and retires finished sends.
  void serve() {
    int flag = 0;
    MPI_Status status;
    DDPSIM_MPI_CHECK(MPI_Test(&query, &flag, &status));
    if (flag) {
      dump_flight();  // another rank's watchdog fired: this rank's recorder is dumped before it answers
      send(encode_progress(progress), status.MPI_SOURCE, kProgressTag);
      DDPSIM_MPI_CHECK(MPI_Irecv(&query_buffer, 1, MPI_INT, MPI_ANY_SOURCE, kQueryTag, ctl_comm, &query));
    }
    for (auto it = sends.begin(); it != sends.end();) {
      DDPSIM_MPI_CHECK(MPI_Test(&it->second, &flag, MPI_STATUS_IGNORE));
      it = flag ? sends.erase(it) : std::next(it);
    }
  }

  void send(std::vector<int> message, int to, int tag) {
    sends.emplace_back(std::move(message), MPI_REQUEST_NULL);
    auto& [buffer, request] = sends.back();
    DDPSIM_MPI_CHECK(MPI_Isend(buffer.data(), checked_count(buffer.size()), MPI_INT, to, tag, ctl_comm, &request));
  }

  // The watchdog: gather every rank's progress, let the lowest blocked rank
  // print the report, and abort the whole job. Never returns.
  [[noreturn]] void on_timeout() {
    const std::string what = progress.phase == RankProgress::Phase::kInBarrier
                                 ? std::string("the end-of-training barrier")
                                 : fmt::format("collective #{} ({})", progress.history.size() - 1, describe(progress.current));
    std::fprintf(stderr, "[rank %d] watchdog: %s has not completed after %g s; asking every rank where it is\n", rank,
                 what.c_str(), timeout_s);
    std::fflush(stderr);
    dump_flight();
    for (int r = 0; r < world; ++r) {
      if (r != rank) send({rank}, r, kQueryTag);
    }
    std::vector<RankProgress> all(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) all[static_cast<std::size_t>(r)].rank = r;
    all[static_cast<std::size_t>(rank)] = progress;
    all[static_cast<std::size_t>(rank)].rank = rank;
    int answered = 1;
    const double patience_ms = std::max(5.0, timeout_s) * 1000;
    const double asked = steady_ms();
    while (answered < world && steady_ms() - asked < patience_ms) {
      serve();
      int flag = 0;
      MPI_Status status;
      DDPSIM_MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, kProgressTag, ctl_comm, &flag, &status));
      if (!flag) {
        std::this_thread::yield();
        continue;
      }
      int count = 0;
      DDPSIM_MPI_CHECK(MPI_Get_count(&status, MPI_INT, &count));
      std::vector<int> wire(static_cast<std::size_t>(count));
      DDPSIM_MPI_CHECK(MPI_Recv(wire.data(), count, MPI_INT, status.MPI_SOURCE, kProgressTag, ctl_comm, MPI_STATUS_IGNORE));
      auto& slot = all[static_cast<std::size_t>(status.MPI_SOURCE)];
      if (slot.phase == RankProgress::Phase::kNoAnswer) ++answered;
      slot = decode_progress(wire, status.MPI_SOURCE);
    }
    const int reporter = reporting_rank(all);
    if (reporter == rank) {
      std::fprintf(stderr, "[rank %d] %s[rank %d] aborting every rank (MPI_Abort)\n", rank,
                   hang_report(all, timeout_s).c_str(), rank);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, kAbortCode);
    }
    // Rank `reporter` reports and aborts the job; if it never does, abort anyway.
    std::fprintf(stderr, "[rank %d] watchdog: rank %d writes the report\n", rank, reporter);
    std::fflush(stderr);
    const double since = steady_ms();
    while (steady_ms() - since < patience_ms) {
      serve();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::fprintf(stderr, "[rank %d] watchdog: no report from rank %d; aborting every rank (MPI_Abort)\n", rank, reporter);
    MPI_Abort(MPI_COMM_WORLD, kAbortCode);
    std::abort();
  }

  // The flight recorder's part of `op`, under the lock (the caller's thread enqueues, this one runs).
  void logged(const Op& op, const std::function<void(FlightLog&)>& act) {
    std::lock_guard lock(mutex);
    if (flight && op.record >= 0) act(*flight);
  }

  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  // This rank's flight-recorder dump, once: when its watchdog fires or
  // another's asks where it is. A failure to write is said, not raised:
  // the watchdog still reports and aborts.
  void dump_flight() {
    std::optional<formats::FlightRecord> record;
    {
      std::lock_guard lock(mutex);
      if (!flight || dumped) return;
      dumped = true;
      record = flight->record();
    }
    try {
      write_flight_dump(flight_dir, *record);
      std::fprintf(stderr, "[rank %d] watchdog: flight-recorder dump in %s/%s\n", rank, flight_dir.c_str(),
                   formats::dump_file_name(rank).c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[rank %d] watchdog: no flight-recorder dump: %s\n", rank, e.what());
    }
    std::fflush(stderr);
  }

  std::uint64_t post(Op op) {
    std::uint64_t ticket;
    {
      std::lock_guard lock(mutex);
      if (flight) op.record = flight->enqueue(op.call, now_ns());
      ticket = op.ticket = next_ticket++;
      done[ticket] = std::nullopt;
      queue.push_back(std::move(op));
    }
    cv.notify_all();
    return ticket;
  }

  CollectiveTimes wait(std::uint64_t ticket) {
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done.at(ticket).has_value() || !error.empty(); });
    if (!error.empty()) throw std::runtime_error(error);
    const CollectiveTimes times = *done.at(ticket);
    done.erase(ticket);
    return times;
  }
};

namespace {

// Hybrid sharding's groups, made before the communication thread starts.
void make_node_groups(int rank, int world, int ranks_per_node, MPI_Comm& shard, MPI_Comm& replica) {
  if (ranks_per_node == 0) {
    DDPSIM_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shard));
  } else {
    if (world % ranks_per_node != 0) {
      throw std::invalid_argument(fmt::format("--ranks-per-node {}: {} ranks are not whole nodes", ranks_per_node, world));
    }
    DDPSIM_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank / ranks_per_node, rank, &shard));
  }
  int size = 0, local = 0, smallest = 0, largest = 0;
  DDPSIM_MPI_CHECK(MPI_Comm_size(shard, &size));
  DDPSIM_MPI_CHECK(MPI_Comm_rank(shard, &local));
  DDPSIM_MPI_CHECK(MPI_Allreduce(&size, &smallest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  DDPSIM_MPI_CHECK(MPI_Allreduce(&size, &largest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (smallest != largest) {
    throw std::invalid_argument(fmt::format("hybrid sharding needs as many ranks on every node: {} to {}", smallest, largest));
  }
  // Node groups of consecutive ranks, so that ranks 0 to G - 1 hold one replica's shards.
  const int consecutive = local == rank % size ? 1 : 0;
  int all_consecutive = 0;
  DDPSIM_MPI_CHECK(MPI_Allreduce(&consecutive, &all_consecutive, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (all_consecutive == 0) {
    throw std::invalid_argument("hybrid sharding needs each host's ranks consecutive (mpirun --map-by slot), or --ranks-per-node");
  }
  DDPSIM_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, local, rank, &replica));
}

}  // namespace

MpiTransport::MpiTransport(int* argc, char*** argv, double timeout_s, int ranks_per_node) : impl_(std::make_unique<Impl>()) {
  int provided = 0;
  DDPSIM_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided));
  if (provided < MPI_THREAD_SERIALIZED) throw std::runtime_error("MPI does not provide MPI_THREAD_SERIALIZED");
  Impl& m = *impl_;
  m.timeout_s = timeout_s;
  DDPSIM_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &m.rank));
  DDPSIM_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &m.world));
  DDPSIM_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &m.train_comm));
  DDPSIM_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &m.sync_comm));
  DDPSIM_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &m.ctl_comm));
  if (ranks_per_node >= 0) {
    try {
      make_node_groups(m.rank, m.world, ranks_per_node, m.shard_comm, m.replica_comm);
    } catch (const std::invalid_argument&) {  // every rank finds the same: all finalise and report it
      for (MPI_Comm* c : {&m.train_comm, &m.sync_comm, &m.ctl_comm, &m.shard_comm, &m.replica_comm}) {
        if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
      }
      MPI_Finalize();
      throw;
    }
  } else {
    DDPSIM_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &m.shard_comm));
  }
  DDPSIM_MPI_CHECK(MPI_Comm_size(m.shard_comm, &m.shard_size));
  DDPSIM_MPI_CHECK(MPI_Comm_rank(m.shard_comm, &m.shard_rank));
  m.progress.rank = m.rank;
  m.progress.phase = RankProgress::Phase::kComputing;
  m.thread = std::thread([this] { impl_->run(); });
}

MpiTransport::~MpiTransport() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
  MPI_Comm_free(&impl_->train_comm);
  MPI_Comm_free(&impl_->sync_comm);
  MPI_Comm_free(&impl_->ctl_comm);
  MPI_Comm_free(&impl_->shard_comm);
  if (impl_->replica_comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->replica_comm);
  MPI_Finalize();
}

void MpiTransport::record_flights(const std::string& dir, std::size_t buffer) {
  Impl& m = *impl_;
  std::vector<FlightLog::Group> groups;
  std::vector<int> all(static_cast<std::size_t>(m.world));
  for (int r = 0; r < m.world; ++r) all[static_cast<std::size_t>(r)] = r;
  groups.push_back({"0", "default_pg", all});
  if (m.replica_comm != MPI_COMM_NULL) {  // hybrid: node groups of consecutive ranks (make_node_groups)
    const int size = m.shard_size, nodes = m.world / size, node = m.rank / size;
    std::vector<int> shard, replica;
    for (int i = 0; i < size; ++i) shard.push_back(node * size + i);
    for (int k = 0; k < nodes; ++k) replica.push_back(k * size + m.shard_rank);
    groups.push_back({std::to_string(1 + node), fmt::format("shard_group_{}", node), shard});
    groups.push_back({std::to_string(1 + nodes + m.shard_rank), fmt::format("replica_group_{}", m.shard_rank), replica});
    m.shard_group = 1;
    m.replica_group = 2;
  }
  const auto timeout_ms = static_cast<std::int64_t>(m.timeout_s * 1000);
  std::lock_guard lock(m.mutex);
  m.flight.emplace(m.rank, std::move(groups), "mpi", timeout_ms, buffer);
  m.flight_dir = dir;
}

int MpiTransport::rank() const { return impl_->rank; }
int MpiTransport::world_size() const { return impl_->world; }
int MpiTransport::shard_group_size() const { return impl_->shard_size; }
int MpiTransport::shard_group_rank() const { return impl_->shard_rank; }

std::uint64_t MpiTransport::all_reduce_async(float* data, std::size_t n, CollectiveLabel label) {
  const int count = checked_count(n);
  const bool replica = label.kind == CollectiveLabel::Kind::kReplicaAllReduce;
  if (replica && impl_->replica_comm == MPI_COMM_NULL) throw std::logic_error("a replica all-reduce without node groups");
  MPI_Comm comm = replica ? impl_->replica_comm : impl_->train_comm;
  const auto elements = static_cast<std::int64_t>(n);
  return impl_->post({0,
                      [=](MPI_Request* r) {
                        DDPSIM_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_FLOAT, MPI_SUM, comm, r));
                      },
                      label, true, {replica ? impl_->replica_group : 0, "all_reduce", elements, elements}});
}

namespace {

// MPI_Op's function: inout[i] += in[i] in half precision (the sum taken in
// float, rounded once to half, as gloo's float16 sum).
void half_sum_op_fn(void* in, void* inout, int* len, MPI_Datatype*) {
  half_sum(static_cast<const Half*>(in), static_cast<Half*>(inout), static_cast<std::size_t>(*len));
}

// The half-sum op, made once MPI is up (MPI_Op_create is not thread-safe
// under MPI_THREAD_SERIALIZED, so the caller's thread makes it); MPI_Finalize frees it.
MPI_Op half_sum_op() {
  static const MPI_Op op = [] {
    MPI_Op made = MPI_OP_NULL;
    DDPSIM_MPI_CHECK(MPI_Op_create(&half_sum_op_fn, 1, &made));
    return made;
  }();
  return op;
}

}  // namespace

std::uint64_t MpiTransport::all_reduce_half_async(_Float16* data, std::size_t n, CollectiveLabel label) {
  const int count = checked_count(n);
  MPI_Comm comm = impl_->train_comm;
  const MPI_Op op = half_sum_op();
  const auto elements = static_cast<std::int64_t>(n);
  return impl_->post({0,
                      [=](MPI_Request* r) {
                        DDPSIM_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_UINT16_T, op, comm, r));
                      },
                      label, true, {0, "all_reduce", elements, elements, "Half"}});
}

CollectiveTimes MpiTransport::wait(std::uint64_t ticket) { return impl_->wait(ticket); }

bool MpiTransport::is_done(std::uint64_t ticket) {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->error.empty()) throw std::runtime_error(impl_->error);
  return impl_->done.at(ticket).has_value();
}

float MpiTransport::all_reduce_scalar(float value, CollectiveLabel label) {
  wait(all_reduce_async(&value, 1, label));
  return value;
}

void MpiTransport::broadcast(void* data, std::size_t bytes, int root) {
  const int count = checked_count(bytes);
  MPI_Comm comm = impl_->train_comm;
  impl_->wait(impl_->post({0, [=](MPI_Request* r) { DDPSIM_MPI_CHECK(MPI_Ibcast(data, count, MPI_BYTE, root, comm, r)); },
                           {CollectiveLabel::Kind::kBroadcast, -1, -1}, true, {0, "broadcast", count, count, "Byte"}}));
}

namespace {

// The non-blocking MPI call of a collective of `kind` on `n` floats at `data`, in place.
std::function<void(MPI_Request*)> start_of(sim::CollectiveKind kind, float* data, std::size_t n, int world, MPI_Comm comm) {
  const int count = checked_count(n), part = count / world;
  if ((kind == sim::CollectiveKind::kAllGather || kind == sim::CollectiveKind::kReduceScatter) && count % world != 0) {
    throw std::invalid_argument(fmt::format("{} floats do not split over {} ranks", count, world));
  }
  switch (kind) {
    case sim::CollectiveKind::kAllGather:
      return [=](MPI_Request* r) {
        DDPSIM_MPI_CHECK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, part, MPI_FLOAT, comm, r));
      };
    case sim::CollectiveKind::kReduceScatter:
      return [=](MPI_Request* r) {
        DDPSIM_MPI_CHECK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, data, part, MPI_FLOAT, MPI_SUM, comm, r));
      };
    case sim::CollectiveKind::kBroadcast:
      return [=](MPI_Request* r) { DDPSIM_MPI_CHECK(MPI_Ibcast(data, count, MPI_FLOAT, 0, comm, r)); };
    default:
      throw std::invalid_argument("a sweep runs all_gather, reduce_scatter or broadcast here");
  }
}

// The flight recorder's view of a collective of `kind` on `n` floats over
// `members` ranks: PyTorch's profiling name and its input and output sizes.
FlightLog::Call flight_call(sim::CollectiveKind kind, std::size_t group, std::size_t n, int members) {
  const auto all = static_cast<std::int64_t>(n), part = all / std::max(1, members);
  switch (kind) {
    case sim::CollectiveKind::kAllGather: return {group, "_allgather_base", part, all};
    case sim::CollectiveKind::kReduceScatter: return {group, "_reduce_scatter_base", all, part};
    default: return {group, std::string(sim::to_string(kind)), all, all};
  }
}

}  // namespace

void MpiTransport::sweep_collective(sim::CollectiveKind kind, float* data, std::size_t n) {
  impl_->wait(impl_->post({0, start_of(kind, data, n, impl_->world, impl_->train_comm), {CollectiveLabel::Kind::kSweep, -1, -1},
                           true, flight_call(kind, 0, n, impl_->world)}));
}

std::uint64_t MpiTransport::all_gather_async(float* data, std::size_t n, CollectiveLabel label) {
  return impl_->post({0, start_of(sim::CollectiveKind::kAllGather, data, n, impl_->shard_size, impl_->shard_comm), label, true,
                      flight_call(sim::CollectiveKind::kAllGather, impl_->shard_group, n, impl_->shard_size)});
}

std::uint64_t MpiTransport::reduce_scatter_async(const float* data, std::size_t n, float* out, CollectiveLabel label) {
  const int count = checked_count(n), world = impl_->shard_size, part = count / world;
  if (count % world != 0) throw std::invalid_argument(fmt::format("{} floats do not split over {} ranks", count, world));
  MPI_Comm comm = impl_->shard_comm;
  return impl_->post({0,
                      [=](MPI_Request* r) {
                        DDPSIM_MPI_CHECK(MPI_Ireduce_scatter_block(data, out, part, MPI_FLOAT, MPI_SUM, comm, r));
                      },
                      label, true, flight_call(sim::CollectiveKind::kReduceScatter, impl_->shard_group, n, world)});
}

void MpiTransport::barrier() {
  MPI_Comm comm = impl_->sync_comm;
  impl_->wait(impl_->post(
      {0, [=](MPI_Request* r) { DDPSIM_MPI_CHECK(MPI_Ibarrier(comm, r)); }, {CollectiveLabel::Kind::kBarrier, -1, -1}, false,
       {0, "barrier", 0, 0}}));
}

}  // namespace ddpsim::real
