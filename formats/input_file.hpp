#pragma once
// Why an input file cannot be read, in words a user acts on: "no such
// file", "a folder, not a file", "permission denied" (errno's text
// otherwise). Every reader of a user's file says it the same way.

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace ddpsim::formats {

/// Opens `path` for reading; on failure `why` says why (and the stream is not open).
inline std::ifstream open_input(const std::string& path, std::string& why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    why = "a folder, not a file";
    std::ifstream none;
    none.setstate(std::ios::failbit);
    return none;
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    why = e == ENOENT ? "no such file" : e == EACCES ? "permission denied" : e != 0 ? std::strerror(e) : "cannot be read";
  }
  return in;
}

}  // namespace ddpsim::formats
