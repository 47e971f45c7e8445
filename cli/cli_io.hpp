#pragma once
// Writing the files a ddpsim command is asked to write.

#include <fstream>
#include <string>

#include "scenarios/input_error.hpp"

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

}  // namespace ddpsim::cli
