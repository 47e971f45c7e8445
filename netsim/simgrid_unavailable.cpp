// Built when CMake finds no SimGrid (libsimgrid-dev): the SimGrid engine says so.
#include <stdexcept>

#include "netsim/simgrid_engine.hpp"

namespace ddpsim::netsim {

bool simgrid_available() { return false; }

std::string simgrid_unavailable_reason() {
  return "this ddpsim was built without SimGrid: install libsimgrid-dev (scripts/setup.sh) and rebuild with -DDDPSIM_SIMGRID=ON";
}

SimgridStats run_with_simgrid(const ClusterSpec&, sim::Time, Algorithm, const std::vector<int>&, const SimgridOptions&,
                              const std::function<void(CollectiveTimer&)>&, const std::vector<std::vector<int>>&,
                              models::Broadcast) {
  throw std::runtime_error(simgrid_unavailable_reason());
}

}  // namespace ddpsim::netsim
