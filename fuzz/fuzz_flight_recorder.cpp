// libFuzzer target: a flight-recorder dump, as `ddpsim explain DIR` takes
// it (formats/flight_recorder.hpp, validate/explain.hpp): written as rank
// 1's dump beside a fixed rank 0's. The command must exit 0 or 2 (bad
// input); 1 (an internal error), a crash, a hang or runaway memory is a finding.

#include <cstdint>
#include <filesystem>
#include <string>

#include "cli/commands.hpp"
#include "fuzz/fuzz_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = ddpsim::fuzz::write_input(data, size, "nccl_trace_rank_1");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::filesystem::copy_file(DDPSIM_FUZZ_RANK0_DUMP, std::filesystem::path(dir) / "nccl_trace_rank_0",
                             std::filesystem::copy_options::overwrite_existing);
  std::string args[] = {"ddpsim", "explain", dir};
  char* argv[] = {args[0].data(), args[1].data(), args[2].data()};
  const int rc = ddpsim::cli::main(3, argv);
  if (rc != 0 && rc != 2) ddpsim::fuzz::finding("ddpsim explain exited " + std::to_string(rc));
  return 0;
}
