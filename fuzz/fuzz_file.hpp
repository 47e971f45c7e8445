#pragma once
// What the fuzz targets share: the input written where ddpsim reads files
// (the readers under test take paths, as users give them), and the rule that
// ends a run: bad input is an InputError (exit code 2), anything else that
// escapes is a finding.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace ddpsim::fuzz {

/// A folder of this process's own under the system's temporary directory, removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("ddpsim_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    // Removed at exit; the name is kept where static destruction cannot reach it.
    static const std::string* const removed_at_exit = new std::string(d.string());
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*removed_at_exit, ec);
    });
    return d;
  }();
  return dir;
}

/// Writes the fuzzer's bytes to `name` in scratch(); returns its path.
inline std::string write_input(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const std::string path = (scratch() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

/// A finding: says what, then aborts, so that libFuzzer keeps the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "ddpsim fuzz finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace ddpsim::fuzz
