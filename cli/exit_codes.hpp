#pragma once
// ddpsim's exit codes: one taxonomy for every command (README.md#exit-codes;
// tests/exit_codes.sh walks the table).

namespace ddpsim::cli {

inline constexpr int kExitOk = 0;
/// A bug in ddpsim (an exception no input should cause): the message says so and where to report it.
inline constexpr int kExitInternal = 1;
/// Bad input of any kind: a scenario, an option, a file that cannot be read or written.
inline constexpr int kExitBadInput = 2;
/// validate missed its threshold, or calibrate --check-scenario rejected the fit.
inline constexpr int kExitMissedTarget = 3;
/// memory: a row does not fit device.memory_GB; advise: no configuration fits.
inline constexpr int kExitDoesNotFit = 4;

}  // namespace ddpsim::cli
