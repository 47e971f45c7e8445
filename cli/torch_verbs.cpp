// `ddpsim profile|sweep|measure|overlap|network ...`: the ddpsim_torch verbs, run
// by an interpreter that has torch, with the package on its path and the
// malloc settings its measurements assume (python/README.md), so that a
// user needs neither PYTHONPATH nor the environment's interpreter by its full path.

#include "cli/torch_verbs.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "report/cluster_report.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::cli {

namespace {

namespace fs = std::filesystem;

// Where the ddpsim_torch package is: DDPSIM_PYTHONPATH, else
// share/ddpsim/python beside an installed binary, else the source tree this
// ddpsim was built from.
std::string package_dir() {
  if (const char* given = std::getenv("DDPSIM_PYTHONPATH"); given && *given) return given;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed = exe.parent_path().parent_path() / "share" / "ddpsim" / "python";
  if (!ec && fs::exists(installed / "ddpsim_torch" / "__main__.py")) return installed.string();
  const fs::path source = fs::path(DDPSIM_SOURCE_DIR) / "python";
  return fs::exists(source / "ddpsim_torch" / "__main__.py") ? source.string() : std::string();
}

// Runs `python -c "import torch"` quietly: whether that interpreter has torch.
bool has_torch(const std::string& python) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    execl(python.c_str(), python.c_str(), "-c", "import torch", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// DDPSIM_PYTHON when set (that one only: an explicit choice is never
// overridden), else the environment scripts/setup.sh made from
// python/requirements.txt (DDPSIM_VENV_PYTHON, fixed at build time), else
// every python3 on PATH, in order.
std::vector<std::string> candidates() {
  if (const char* given = std::getenv("DDPSIM_PYTHON"); given && *given) return {given};
  std::vector<std::string> out{DDPSIM_VENV_PYTHON};
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (std::size_t start = 0; start <= dirs.size();) {
      const std::size_t end = std::min(dirs.find(':', start), dirs.size());
      const fs::path p = fs::path(dirs.substr(start, end - start)) / "python3";
      if (end > start && fs::exists(p) && std::find(out.begin(), out.end(), p.string()) == out.end()) {
        out.push_back(p.string());
      }
      start = end + 1;
    }
  }
  return out;
}

// `--cluster S.yaml` (before any `--`): the scenario's path, or "" when not given.
std::string cluster_option(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) break;
    if (std::strcmp(argv[i], "--cluster") == 0 && i + 1 < argc) return argv[i + 1];
    if (std::strncmp(argv[i], "--cluster=", 10) == 0) return argv[i] + 10;
  }
  return {};
}

// Loads S.yaml through the scenario loader (its errors, located, exit 2) and
// hands its cluster section to ddpsim_torch as DDPSIM_CLUSTER_JSON: one
// file, read by one parser, for the emulation and the prediction.
bool hand_over_cluster(const std::string& path) {
  try {
    const scenarios::Scenario s = scenarios::load_scenario(path);
    if (!s.job.cluster) {
      throw scenarios::InputError({path, 1, 1}, "cluster", "(none)",
                                  "expected a cluster: section describing the nodes to emulate (docs/emulated-network.md)");
    }
    const std::string json = report::cluster_to_json(s);
    setenv("DDPSIM_CLUSTER_JSON", json.c_str(), 1);
    return true;
  } catch (const scenarios::InputError& e) {
    fmt::print(stderr, "ddpsim: error: --cluster: {}\n", e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "ddpsim: error: --cluster {}: {}\n", path, e.what());
  }
  return false;
}

}  // namespace

bool is_torch_verb(const char* verb) {
  const std::string v = verb;
  return v == "profile" || v == "sweep" || v == "measure" || v == "overlap" || v == "network";
}

int run_torch_verb(int argc, char** argv) {
  if (const std::string cluster = cluster_option(argc, argv); !cluster.empty() && !hand_over_cluster(cluster)) {
    return 2;
  }
  const std::string package = package_dir();
  if (package.empty()) {
    fmt::print(stderr,
               "ddpsim: error: the ddpsim_torch package is not found (set DDPSIM_PYTHONPATH to the folder "
               "holding ddpsim_torch/)\n");
    return 2;
  }
  std::string python, tried;
  for (const std::string& c : candidates()) {
    tried += (tried.empty() ? "" : ", ") + c;
    if (has_torch(c)) {
      python = c;
      break;
    }
  }
  if (python.empty()) {
    fmt::print(stderr,
               "ddpsim: error: no Python interpreter with torch (tried {}); make one from the pins "
               "(python3 -m venv V && V/bin/pip install -r {}/requirements.txt) and set DDPSIM_PYTHON=V/bin/python, "
               "or in a source checkout run scripts/setup.sh\n",
               tried, package);
    return 2;
  }
  const char* old = std::getenv("PYTHONPATH");
  const std::string path = old && *old ? package + ":" + old : package;
  setenv("PYTHONPATH", path.c_str(), 1);
  // glibc keeps freed buffers instead of returning them and faulting them
  // in again each step (python/README.md): unless the user set them.
  setenv("MALLOC_MMAP_THRESHOLD_", "33554432", 0);
  setenv("MALLOC_TRIM_THRESHOLD_", "1073741824", 0);
  std::vector<char*> args{python.data(), const_cast<char*>("-m"), const_cast<char*>("ddpsim_torch")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(python.c_str(), args.data());
  fmt::print(stderr, "ddpsim: error: could not run {}\n", python);
  return 2;
}

}  // namespace ddpsim::cli
