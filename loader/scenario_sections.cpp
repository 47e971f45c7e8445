#include "loader/scenario_sections.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ddpsim::scenarios {

using sim::Time;

netsim::SimgridOptions read_simgrid(const Section& top) {
  netsim::SimgridOptions out;
  const Section simgrid = top.child("simgrid");
  out.memoize = simgrid.boolean("memoize", true);
  const std::vector<std::string>& settable = netsim::simgrid_settable();
  const Section simgrid_config = simgrid.child("config", std::vector<std::string_view>(settable.begin(), settable.end()));
  for (const std::string& key : settable) {
    if (!simgrid_config.has(key)) continue;
    // Checked here: SimGrid aborts the process on a model it does not know.
    std::string value;
    if (key == "network/model") {
      value = simgrid_config.choice(key, std::nullopt);  // Constant has no links
    } else if (key == "network/crosstraffic") {
      // Through a temporary: GCC 12 warns falsely (-Wrestrict) when the literal is assigned.
      value = std::string(simgrid_config.boolean(key, false) ? "1" : "0");
    } else if (key == "surf/precision" || key == "maxmin/precision") {
      value = fmt::format("{:.17g}", simgrid_config.number(key, std::nullopt));
    } else if (key == "network/bandwidth-factor") {
      value = fmt::format("{:.17g}", simgrid_config.number(key, std::nullopt));
    } else {
      value = fmt::format("{:.17g}", simgrid_config.number(key, std::nullopt));
    }
    out.config.emplace_back(key, value);
  }
  return out;
}

ResilienceSpec read_resilience(const Section& top, const models::DdpJob& job) {
  ResilienceSpec out;
  const Section ck = top.child("checkpoint");
  if (top.has("checkpoint")) {
    models::CheckpointSpec c;
    c.interval = Time::from_ms(60'000 * ck.number("interval_min", std::nullopt), "checkpoint.interval_min");
    // Rule of thumb: 16 bytes per parameter with Adam (fp32 weights and two moments, bf16 copy).
    c.size_gb = ck.number("size_gb", 16.0 * static_cast<double>(job.model.parameter_count()) / 1e9);
    c.write_gbps = ck.number("write_GBps", std::nullopt);
    c.read_gbps = ck.number("read_GBps", std::nullopt);
    c.async = ck.boolean("async", false);
    c.keep_last = static_cast<int>(ck.integer("keep_last", 2));
    out.checkpoint = c;
  }
  const Section fs = top.child("failures");
  if (top.has("failures")) {
    if (!top.has("checkpoint")) top.missing("checkpoint", "a checkpoint section: failures are priced against it");
    models::FailureSpec f;
    f.mtbf_hours = fs.number("mtbf_hours", std::nullopt);
    f.per_gpu = fs.choice("per", "gpu") == "gpu";
    f.detection = fs.choice("detection", "watchdog") == "watchdog" ? models::Detection::kWatchdog
                                                                                             : models::Detection::kHeartbeat;
    f.watchdog = job.watchdog_timeout;
    f.heartbeat = Time::from_ms(1000 * fs.number("heartbeat_s", 30.0), "failures.heartbeat_s");
    f.relaunch = Time::from_ms(1000 * fs.number("relaunch_s", std::nullopt), "failures.relaunch_s");
    f.horizon_hours = fs.number("horizon_hours", 24.0);
    f.corrupt_latest = fs.boolean("corrupt_latest", false);
    if (fs.has("restart_world_size")) {
      f.restart_world_size = static_cast<int>(
          fs.integer("restart_world_size", 1, job.cluster ? job.cluster->gpus() : kMaxWorldSize, std::nullopt));
    }
    out.restart_budget_min = fs.number("restart_budget_min", 15.0);
    out.failures = f;
  }
  return out;
}

}  // namespace ddpsim::scenarios
