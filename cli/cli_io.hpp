#pragma once
// Writing the files a ddpsim command is asked to write.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include "report/html_report.hpp"
#include "scenarios/input_error.hpp"
#include "scenarios/scenario.hpp"

namespace ddpsim::cli {

inline std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw scenarios::InputError({path, 0, 0}, "", "", "cannot open this output file for writing");
  return out;
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
