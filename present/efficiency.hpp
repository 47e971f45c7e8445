#pragma once
// Words for a scaling result, shared by every table ddpsim prints (the
// simulated sweep, validation, ddpsim-real's efficiency report).

#include <string>
#include <string_view>

namespace ddpsim::present {

/// Scaling efficiency below this is flagged in every table, with the overhead
/// that costs most.
inline constexpr double kLowEfficiency = 0.8;
struct Overhead {
  std::string_view name;  ///< "exposed communication", "straggler wait" or "data loading"
  double ms = 0;          ///< per step
};
/// The largest of the three non-compute costs of a step.
Overhead costliest_overhead(double exposed_comm_ms, double wait_ms, double data_ms);
/// "  below 80%: exposed communication costs most (0.42 ms per step)", or "" at or above 80 %.
std::string low_efficiency_flag(double efficiency, double exposed_comm_ms, double wait_ms, double data_ms);

}  // namespace ddpsim::present
