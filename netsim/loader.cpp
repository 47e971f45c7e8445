// run_with_simgrid for the rest of ddpsim: loads the SimGrid module
// (libddpsim_simgrid.so, netsim/simgrid_engine.cpp) on first use, so that a
// run of the analytic engine never loads libsimgrid (50 ms at every process
// start, and a second definition of every MPI function).
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "netsim/simgrid_engine.hpp"

namespace ddpsim::netsim {
namespace {

struct Module {
  RunEntry run = nullptr;
  std::string error;  ///< why it could not be loaded
};

// DDPSIM_SIMGRID_MODULE if set; else beside the build tree's executables
// (../netsim/ from bin/ or cli/), else where this build put it.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("DDPSIM_SIMGRID_MODULE"); env != nullptr && *env != '\0') return {env};
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path().parent_path() / "netsim" / DDPSIM_NETSIM_MODULE_NAME).string());
    out.push_back((exe.parent_path().parent_path() / "lib" / "ddpsim" / DDPSIM_NETSIM_MODULE_NAME).string());  // installed
  }
  out.emplace_back(DDPSIM_NETSIM_MODULE);
  return out;
}

const Module& module() {
  static const Module loaded = [] {
    Module m;
    for (const std::string& path : candidates()) {
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = dlerror();
        m.error += (m.error.empty() ? "" : "; ") + std::string(why != nullptr ? why : path);
        continue;
      }
      m.run = reinterpret_cast<RunEntry>(dlsym(handle, "ddpsim_netsim_run"));
      if (m.run != nullptr) return m;
      m.error += "; " + path + " has no ddpsim_netsim_run";
    }
    return m;
  }();
  return loaded;
}

}  // namespace

bool simgrid_available() { return module().run != nullptr; }

std::string simgrid_unavailable_reason() {
  return simgrid_available() ? "" : "the SimGrid engine could not be loaded: " + module().error;
}

SimgridStats run_with_simgrid(const ClusterSpec& cluster, sim::Time launch_overhead, Algorithm algorithm,
                              const std::vector<int>& world_sizes, const SimgridOptions& options,
                              const std::function<void(CollectiveTimer&)>& body,
                              const std::vector<std::vector<int>>& groups, models::Broadcast broadcast) {
  const Module& m = module();
  if (m.run == nullptr) throw std::runtime_error(simgrid_unavailable_reason());
  return m.run(RunRequest{&cluster, launch_overhead, algorithm, &world_sizes, &options, &body, &groups, broadcast});
}

}  // namespace ddpsim::netsim
