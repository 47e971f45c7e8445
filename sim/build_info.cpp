#include "sim/build_info.hpp"

namespace ddpsim::sim {

std::string_view ddpsim_version() { return DDPSIM_VERSION; }
std::string_view git_commit() { return DDPSIM_GIT_COMMIT; }

}  // namespace ddpsim::sim
