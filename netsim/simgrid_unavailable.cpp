// Built when CMake finds no SimGrid (libsimgrid-dev): the SimGrid engine says so.
#include <stdexcept>

#include "netsim/simgrid_engine.hpp"

namespace ddpsim::netsim {

const std::vector<std::string>& simgrid_settable() {
  static const std::vector<std::string> keys;
  return keys;
}

bool simgrid_available() { return false; }

SimgridStats run_with_simgrid(const ClusterSpec&, sim::Time, Algorithm, const std::vector<int>&, const SimgridOptions&,
                              const std::function<void(CollectiveTimer&)>&) {
  throw std::runtime_error("this ddpsim was built without SimGrid: install libsimgrid-dev (scripts/setup.sh) and rebuild");
}

}  // namespace ddpsim::netsim
