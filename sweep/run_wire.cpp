#include "sweep/run_wire.hpp"

#include <optional>
#include <stdexcept>

#include "sweep/wire.hpp"

// Every struct a RunResult holds, field by field (nlohmann's macros, in the
// types' namespaces so they are found), on the wire of split runs (wire.hpp).


namespace ddpsim::sim {
inline void to_json(nlohmann::json& j, Time t) { j = t.count_ns(); }
inline void from_json(const nlohmann::json& j, Time& t) { t = Time::ns(j.get<std::int64_t>()); }
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Collective, kind, bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OpRef, stream, index)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OpLabel, tag, iteration, index)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BlockedOp, rank, stream, label, since, in_rendezvous, group, group_seq, collective,
                                   missing_ranks, waits_for, running)
}  // namespace ddpsim::sim

namespace ddpsim::models {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankStats, rank, data_ms, compute_ms, collective_ms, exposed_comm_ms, wait_ms,
                                   forward_compute_ms, backward_compute_ms, backward_comm_ms, backward_overlap_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankError, rank, at_ms, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankWarning, rank, iteration, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RankAtFailure, rank, state, op, collective, bytes, dtype, iteration, bucket, detail)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FailureReport, sequence, ranks, waiting_ranks, missing_ranks, culprit_rank, reason, fix,
                                   detected_at_ms, detection)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MisalignedPair, sequence, rank, op, iteration, with_rank, with_op, with_iteration)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LinkLoad, name, capacity_GBps, bytes, busy_s, bytes_per_step, busy_share)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunResult, world_size, outcome, step_ms, measured_iterations, global_batch, iterations,
                                   ranks, blocked, errors, failure, misalignments, warnings, iterations_run,
                                   shadow_collectives, events, rank_ops, fast_path, levelized, end, links)
}  // namespace ddpsim::models

namespace ddpsim::netsim {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SimgridStats, collectives, transfers, hosts, links)
}  // namespace ddpsim::netsim

namespace ddpsim::scenarios {

std::string encode_share(const ProcessShare& share) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& [task, run] : share.runs) runs.push_back({{"task", task}, {"run", run}});
  return to_wire({{"runs", std::move(runs)}, {"recorded", share.recorded}, {"simgrid", share.simgrid}, {"error", share.error}});
}

ProcessShare decode_share(const std::string& bytes) {
  ProcessShare out;
  const nlohmann::json j = from_wire(bytes, "a process's runs");
  try {
    for (const nlohmann::json& r : j.at("runs")) {
      out.runs.emplace_back(r.at("task").get<std::size_t>(), r.at("run").get<models::RunResult>());
    }
    out.simgrid = j.at("simgrid").get<std::optional<netsim::SimgridStats>>();
    out.error = j.at("error").get<std::string>();
    j.at("recorded").get_to(out.recorded);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a process's runs could not be read: ") + e.what());
  }
  return out;
}

}  // namespace ddpsim::scenarios
