#include "present/efficiency.hpp"

#include <fmt/format.h>

namespace ddpsim::present {

Overhead costliest_overhead(double exposed_comm_ms, double wait_ms, double data_ms) {
  Overhead o{"exposed communication", exposed_comm_ms};
  if (wait_ms > o.ms) o = {"straggler wait", wait_ms};
  if (data_ms > o.ms) o = {"data loading", data_ms};
  return o;
}

std::string low_efficiency_flag(double efficiency, double exposed_comm_ms, double wait_ms, double data_ms) {
  if (efficiency >= kLowEfficiency) return "";
  const Overhead o = costliest_overhead(exposed_comm_ms, wait_ms, data_ms);
  return fmt::format("  below {:.0f}%: {} costs most ({:.3g} ms per step)", 100 * kLowEfficiency, o.name, o.ms);
}

}  // namespace ddpsim::present
