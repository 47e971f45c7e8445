#pragma once
// ddpsim under mpirun or srun: MPI started when the launcher says there are
// several processes (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK with
// SLURM_NTASKS), and a gather of text to the first. Without MPI in the build,
// or launched alone, one process of one.

#include <memory>
#include <string>
#include <vector>

namespace ddpsim::cli {

class MpiSession {
 public:
  /// Starts MPI when launched as one of several processes (and MPI is built in).
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Every process's `mine`, in rank order, on rank 0 (elsewhere: empty).
  std::vector<std::string> gather(const std::string& mine) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool started_ = false;
};

/// The launcher's process count, from its environment; 1 when there is none.
int launched_processes();

}  // namespace ddpsim::cli
