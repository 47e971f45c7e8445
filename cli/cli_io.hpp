#pragma once
// Writing the files a ddpsim command is asked to write.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "report/html_report.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

namespace ddpsim::cli {

inline std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw scenarios::InputError({path, 0, 0}, "", "", "cannot open this output file for writing");
  return out;
}

/// Before anything is simulated: each output (option, path) can be written,
/// and no two options name one file. A file that did not exist is not left behind.
inline void check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (path.empty()) continue;
    std::error_code ec;
    const auto where = [](const std::string& p) {
      std::error_code e;
      return fs::weakly_canonical(fs::absolute(p, e), e).lexically_normal();
    };
    for (std::size_t j = 0; j < i; ++j) {
      if (!outputs[j].second.empty() && where(outputs[j].second) == where(path)) {
        throw scenarios::InputError({"the command line", 0, 0}, option, path,
                                    "expected a file of its own: " + outputs[j].first + " writes it too");
      }
    }
    if (fs::is_directory(path, ec)) throw scenarios::InputError({path, 0, 0}, option, "", "expected a file, not a folder");
    const bool existed = fs::exists(path, ec);
    std::ofstream probe(path, std::ios::binary | std::ios::app);
    if (!probe) {
      throw scenarios::InputError({path, 0, 0}, option, "",
                                  "cannot open this output file for writing (does its folder exist, may it be written?)");
    }
    probe.close();
    if (!existed) fs::remove(path, ec);
  }
}

inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream out = open_output(path);
  out << content;
  if (!out.flush()) throw scenarios::InputError({path, 0, 0}, "", "", "write failed");
}

/// Whether --html traces the sweep for the page's timeline: every world
/// size at most report::kTimelineMaxWorld (a trace simulates every rank).
inline bool traced_for_page(const scenarios::Scenario& s) {
  const auto& w = s.sweep.world_sizes;
  return !w.empty() && *std::max_element(w.begin(), w.end()) <= report::kTimelineMaxWorld;
}

/// --html beside --trace: the trace file read back for the page's timeline (none above 256 MB).
inline std::optional<std::string> read_trace_for_page(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > (std::uintmax_t{256} << 20)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace ddpsim::cli
