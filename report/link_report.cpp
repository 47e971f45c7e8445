#include "report/link_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "report/rounding.hpp"

namespace ddpsim::report {

nlohmann::ordered_json links_json(const models::RunResult& run) {
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const models::LinkLoad& l : run.links) {
    links.push_back({{"name", l.name},
                     {"capacity_GBps", ratio6(l.capacity_GBps)},
                     {"bytes_per_step", std::llround(l.bytes_per_step)},
                     {"busy_share", ratio6(l.busy_share)}});
  }
  return links;
}

void write_busiest_links(std::ostream& out, const scenarios::SweepResult& result) {
  bool header = false;
  for (const scenarios::SweepRow& row : result.rows) {
    if (row.run.links.empty()) continue;
    if (!header) {
      fmt::print(out, "\nbusiest links (SimGrid; share of the run each was busy, MB it carried per step):\n");
      header = true;
    }
    std::string line;
    for (const models::LinkLoad& l : models::busiest_links(row.run.links, kBusiestLinks)) {
      line += fmt::format("{}{} {:.1f}% ({:.1f} MB)", line.empty() ? "" : ", ", l.name, l.busy_share * 100,
                          l.bytes_per_step / 1e6);
    }
    const std::string label = result.bucket_sweep ? fmt::format("W={} cap={:g}", row.run.world_size, row.bucket_cap_mb)
                                                  : fmt::format("W={}", row.run.world_size);
    fmt::print(out, "  {}: {}\n", label, line);
  }
}

}  // namespace ddpsim::report
