#pragma once
// Work split over processes (mpirun, srun): which share is this process's,
// and how the shares come back to the first. ddpsim run splits a sweep's
// runs this way, ddpsim advise its search; cli/mpi_session.hpp supplies it.

#include <functional>
#include <string>
#include <vector>

namespace ddpsim::scenarios {

/// This process's index and the count of processes. Each process works its
/// share; `gather` takes this process's results (bytes) and returns, on
/// index 0, every process's in index order (elsewhere: empty). What index 0
/// reports is what one process gives, byte for byte; the others report nothing.
struct Partition {
  int index = 0;
  int count = 1;
  std::function<std::vector<std::string>(const std::string&)> gather;
};

}  // namespace ddpsim::scenarios
