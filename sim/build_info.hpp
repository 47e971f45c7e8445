#pragma once
// What built this binary: the project version and the git commit of the
// source tree at the last CMake configure ("-dirty" if it had uncommitted
// changes, "unknown" outside a git checkout). scripts/build.sh configures on
// every build, so the commit is current there.

#include <string_view>

namespace ddpsim::sim {

std::string_view ddpsim_version();
std::string_view git_commit();

}  // namespace ddpsim::sim
