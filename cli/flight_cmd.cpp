// ddpsim run --flight-recorder DIR and ddpsim explain DIR
// (cli/subcommands.hpp; docs/flight-recorder.md).

#include <fmt/format.h>

#include <memory>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/subcommands.hpp"
#include "cli/mpi_session.hpp"
#include "cli/verb.hpp"
#include "ddpsim/ddpsim.hpp"
#include "formats/flight_recorder.hpp"
#include "loader/input_error.hpp"
#include "sweep/runner.hpp"
#include "validate/explain.hpp"
#include "validate/flight_dump.hpp"

namespace ddpsim::cli {

scenarios::RecordFailed flight_recorder() {
  return [](const models::DdpJob& job, const models::RunResult& run, const scenarios::Rerun& rerun) {
    validate::CollectiveRecorder recorder(run.world_size, kFlightRecorderEntries);
    const models::RunResult again = rerun(recorder);
    std::vector<std::pair<std::string, std::string>> files;
    for (const formats::FlightRecord& r : validate::flight_records(recorder, again, job.backend, job.watchdog_timeout)) {
      files.emplace_back(formats::dump_file_name(r.rank), formats::to_json(r));
    }
    return files;
  };
}

std::vector<std::string> write_flight_dumps(const scenarios::SweepResult& result, const std::string& dir) {
  std::vector<std::string> written;
  for (const scenarios::SweepRow& row : result.rows) {
    // Recorded, and still a collective's failure (not the out-of-memory end that replaced it).
    if (row.recorded.empty() || row.run.outcome == models::Outcome::kCompleted || !row.run.failure) continue;
    const std::string where =
        (std::filesystem::path(dir) /
         (result.bucket_sweep ? fmt::format("cap{:g}_W{}", row.bucket_cap_mb, row.run.world_size)
                              : fmt::format("W{}", row.run.world_size)))
            .string();
    validate::write_files(where, row.recorded);
    written.push_back(where);
  }
  return written;
}

int explain(const std::string& dir) {
  for (const ddpsim::Explanation& e : ddpsim::explain(dir)) fmt::print("{}", e.text);
  return 0;
}

Verb add_explain(CLI::App& app) {
  auto o = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Explain a hang from flight-recorder dumps (PyTorch 2.5+'s JSON form, or ddpsim run --flight-recorder)");
  cmd->add_option("dir", *o, "Folder of dumps, one a rank, named PREFIX<rank>")->required();
  return {cmd, [o](const MpiSession& mpi) {
            (void)mpi;
            return explain(*o);
          }};
}

}  // namespace ddpsim::cli
