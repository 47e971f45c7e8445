#include "cli/mpi_session.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#ifdef DDPSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace ddpsim::cli {
namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? 0 : std::atoi(v);
}

}  // namespace

int launched_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const int n = env_int(name); n > 0) return n;
  }
  if (std::getenv("PMIX_RANK") != nullptr) return std::max(1, env_int("SLURM_NTASKS"));
  return 1;
}

#ifdef DDPSIM_HAVE_MPI

MpiSession::MpiSession() {
  if (launched_processes() <= 1) return;
  MPI_Init(nullptr, nullptr);
  started_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (started_) MPI_Finalize();
}

std::vector<std::string> MpiSession::gather(const std::string& mine) const {
  if (size_ == 1) return {mine};
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank_ == 0) {
    long total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += lengths[static_cast<std::size_t>(r)];
    }
    if (total > 2147483647L) throw std::runtime_error("the processes' results are over 2 GiB: too many for one gather");
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank_ != 0) return out;
  for (int r = 0; r < size_; ++r) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  }
  return out;
}

#else

MpiSession::MpiSession() = default;
MpiSession::~MpiSession() = default;
std::vector<std::string> MpiSession::gather(const std::string& mine) const { return {mine}; }

#endif

}  // namespace ddpsim::cli
