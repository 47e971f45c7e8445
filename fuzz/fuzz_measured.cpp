// libFuzzer target: a measured-run JSON file from ddpsim-real, as its two
// readers take it: `ddpsim calibrate --measured FILE` (an all-reduce sweep,
// a 1-rank training run, or rank 0 of a multi-rank run) and `ddpsim
// validate --measured PREFIX` (validate::read_measured). The command must
// exit 0 or 2 (bad input); 1 (an internal error), a crash, a hang or
// runaway memory is a finding.

#include <cstdint>
#include <exception>
#include <string>

#include "cli/commands.hpp"
#include "fuzz/fuzz_file.hpp"
#include "loader/input_error.hpp"
#include "validate/validation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = ddpsim::fuzz::write_input(data, size, "run.rank0.json");
  const std::string prefix = path.substr(0, path.size() - std::string(".rank0.json").size());
  const std::string out = (ddpsim::fuzz::scratch() / "calibration.yaml").string();
  std::string args[] = {"ddpsim", "calibrate", "--measured", path, "--out", out};
  char* argv[] = {args[0].data(), args[1].data(), args[2].data(), args[3].data(), args[4].data(), args[5].data()};
  const int rc = ddpsim::cli::main(6, argv);
  if (rc != 0 && rc != 2) ddpsim::fuzz::finding("ddpsim calibrate --measured exited " + std::to_string(rc));
  try {
    (void)ddpsim::validate::read_measured(prefix, 2);
  } catch (const ddpsim::scenarios::InputError&) {
    // refused with a message naming the file
  } catch (const std::exception& e) {
    ddpsim::fuzz::finding(std::string("read_measured threw something other than InputError: ") + e.what());
  }
  return 0;
}
