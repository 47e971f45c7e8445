#include "validate/flight_dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "models/ddp_job.hpp"
#include "models/fsdp_program.hpp"
#include "loader/input_error.hpp"

namespace ddpsim::validate {
namespace {

// A collective's buffer as PyTorch's recorder names it: dtype and element size, by what the op is.
struct Buffer {
  const char* dtype = "Float";
  std::int64_t element = 4;
};

Buffer buffer_of(const sim::OpLabel& label) {
  if (label.tag >= static_cast<std::uint32_t>(models::FsdpTag::kData)) return {};
  switch (static_cast<models::DdpTag>(label.tag)) {
    case models::DdpTag::kVerifyParams: return {"Long", 8};
    case models::DdpTag::kRebuildBroadcast:
    case models::DdpTag::kUsedMap:
    case models::DdpTag::kJoinCount: return {"Int", 4};
    default: return {};
  }
}

// The frame ddpsim's dump gives an entry: the op and its iteration, so that
// explain can tell two ranks' same-sized collectives of different iterations apart.
std::vector<formats::FrFrame> frames_of(const sim::OpLabel& label) {
  const auto tag = static_cast<models::DdpTag>(label.tag);
  const bool construction = label.tag < static_cast<std::uint32_t>(models::FsdpTag::kData) &&
                            (tag == models::DdpTag::kVerifyParams || tag == models::DdpTag::kInitBroadcast);
  const std::string name = construction ? "DistributedDataParallel construction: " + models::op_name(label)
                                        : fmt::format("{} of iteration {}", models::op_name(label), label.iteration);
  return {{name, "ddpsim", 0}};
}

// A group's description in pg_config and in each entry's process_group.
std::string group_desc(sim::GroupId group) {
  return group == sim::kWorldGroup ? "default_pg" : fmt::format("group_{}", group);
}

// PyTorch's profiling names: the c10d op that FSDP and DDP call.
std::string profiling_name(models::Backend backend, sim::CollectiveKind kind, const sim::OpLabel& label) {
  const char* prefix = backend == models::Backend::kGloo ? "gloo:" : "nccl:";
  if (label.tag == static_cast<std::uint32_t>(models::DdpTag::kVerifyParams) && kind == sim::CollectiveKind::kAllGather) {
    return std::string(prefix) + "all_gather";  // the list form, as _verify_param_shape_across_processes calls it
  }
  switch (kind) {
    case sim::CollectiveKind::kAllGather: return std::string(prefix) + "_allgather_base";
    case sim::CollectiveKind::kReduceScatter: return std::string(prefix) + "_reduce_scatter_base";
    default: return std::string(prefix) + std::string(sim::to_string(kind));
  }
}

// Input and output element counts: an all-gather gathers W inputs into its
// output; a reduce-scatter leaves each rank a W-th of its input.
std::pair<std::int64_t, std::int64_t> sizes(const sim::Collective& c, int members, std::int64_t element) {
  const std::int64_t n = c.bytes / element;
  if (c.kind == sim::CollectiveKind::kAllGather) return {n / std::max(1, members), n};
  if (c.kind == sim::CollectiveKind::kReduceScatter) return {n, n / std::max(1, members)};
  return {n, n};
}

// `label`: the op's, or a default one (a plain float buffer) for a rank's side known by its name only.
formats::FrEntry entry(models::Backend backend, const sim::Collective& c, const sim::OpLabel& label, int members,
                       sim::GroupId group, std::uint64_t seq, std::int64_t record_id, sim::Time timeout) {
  formats::FrEntry e;
  e.record_id = record_id;
  e.pg_id = std::to_string(group);
  e.pg_desc = group_desc(group);
  e.collective_seq_id = static_cast<std::int64_t>(seq) + 1;  // PyTorch counts from 1
  e.op_id = e.collective_seq_id;
  e.profiling_name = profiling_name(backend, c.kind, label);
  const Buffer buffer = buffer_of(label);
  if (c.kind == sim::CollectiveKind::kBarrier && backend == models::Backend::kGloo) {
    e.input_sizes = e.output_sizes = {};  // gloo's barrier has no tensor
  } else {
    const auto [in, out] = sizes(c, members, buffer.element);
    e.input_sizes = {{in}};
    e.output_sizes = {{out}};
    e.input_dtypes = e.output_dtypes = {buffer.dtype};
  }
  e.frames = frames_of(label);
  e.timeout_ms = static_cast<std::int64_t>(timeout.ms());
  return e;
}

std::optional<sim::CollectiveKind> kind_named(const std::string& name) {
  for (auto k : {sim::CollectiveKind::kAllReduce, sim::CollectiveKind::kBroadcast, sim::CollectiveKind::kBarrier,
                 sim::CollectiveKind::kAllGather, sim::CollectiveKind::kReduceScatter, sim::CollectiveKind::kReduce,
                 sim::CollectiveKind::kAllToAll}) {
    if (sim::to_string(k) == name) return k;
  }
  return std::nullopt;
}

// A rank that raised inside the failing collective (gloo's errors, c10d's
// checks) had entered it: the dump shows it started there.
void add_raised_in(const models::RunResult& run, int rank, models::Backend backend, sim::Time timeout, int members,
                   formats::FlightRecord& fr) {
  if (!run.failure || !run.failure->sequence) return;
  for (const models::RankAtFailure& a : run.failure->ranks) {
    if (a.rank != rank || a.state != models::RankState::kCrashed || a.op.empty()) continue;
    const auto kind = kind_named(a.collective);
    if (!kind) return;
    formats::FrEntry e = entry(backend, {*kind, a.bytes}, sim::OpLabel{static_cast<std::uint32_t>(models::DdpTag::kExtraCollective)},
                               members, sim::kWorldGroup, *run.failure->sequence,
                               static_cast<std::int64_t>(fr.entries.size()), timeout);
    e.frames = {{fmt::format("{} of iteration {}", a.op, a.iteration), "ddpsim", 0}};
    e.state = "started";
    fr.entries.push_back(std::move(e));
  }
}

bool killed(const models::RunResult& run, int rank) {
  return std::any_of(run.errors.begin(), run.errors.end(), [&](const models::RankError& e) {
    return e.rank == rank && e.message.find("killed") != std::string::npos;
  });
}

}  // namespace

CollectiveRecorder::CollectiveRecorder(int world_size, std::size_t buffer)
    : buffer_(std::max<std::size_t>(1, buffer)), ranks_(static_cast<std::size_t>(world_size)) {}

void CollectiveRecorder::on_op(const sim::OpRecord& record) {
  if (!record.is_collective) return;
  auto& kept = ranks_.at(static_cast<std::size_t>(record.rank));
  if (kept.size() == buffer_) kept.pop_front();
  kept.push_back(record);
}

std::vector<formats::FlightRecord> flight_records(const CollectiveRecorder& recorder, const models::RunResult& run,
                                                  models::Backend backend, sim::Time timeout) {
  // Members of each group, from what its ranks did.
  std::map<sim::GroupId, std::set<int>> members;
  for (int r = 0; r < recorder.world_size(); ++r) {
    for (const sim::OpRecord& o : recorder.rank(r)) members[o.group].insert(r);
  }
  for (const sim::BlockedOp& b : run.blocked) {
    if (b.stream != sim::StreamKind::kComm) continue;
    members[b.group].insert(b.rank);
    for (int m : b.missing_ranks) members[b.group].insert(m);
  }
  for (int r = 0; r < recorder.world_size(); ++r) members[sim::kWorldGroup].insert(r);
  std::vector<formats::FlightRecord> out;
  for (int r = 0; r < recorder.world_size(); ++r) {
    if (killed(run, r)) continue;
    formats::FlightRecord fr;
    fr.rank = r;
    for (const auto& [g, ranks] : members) {
      fr.groups.push_back({std::to_string(g), std::to_string(g), group_desc(g), std::vector<int>(ranks.begin(), ranks.end())});
    }
    std::map<sim::GroupId, formats::FrStatus> status;
    std::int64_t id = 0;
    for (const sim::OpRecord& o : recorder.rank(r)) {
      formats::FrEntry e = entry(backend, o.collective, o.label, static_cast<int>(members[o.group].size()), o.group,
                                 o.group_seq, id++, timeout);
      e.time_created_ns = o.ready.count_ns();
      e.time_discovered_started_ns = o.start.count_ns();
      e.time_discovered_completed_ns = o.end.count_ns();
      e.duration_ms = (o.end - o.start).ms();
      e.state = "completed";
      e.retired = true;
      formats::FrStatus& s = status[o.group];
      s.last_enqueued = s.last_started = s.last_completed = e.collective_seq_id;
      fr.entries.push_back(std::move(e));
    }
    for (const sim::BlockedOp& b : run.blocked) {
      if (b.rank != r || b.stream != sim::StreamKind::kComm) continue;
      formats::FrEntry e = entry(backend, b.collective, b.label, static_cast<int>(members[b.group].size()), b.group,
                                 b.group_seq, id++, timeout);
      e.time_created_ns = b.since.count_ns();
      e.state = b.in_rendezvous ? "started" : "scheduled";
      if (b.in_rendezvous) e.time_discovered_started_ns = b.since.count_ns();
      formats::FrStatus& s = status[b.group];
      s.last_enqueued = e.collective_seq_id;
      if (b.in_rendezvous) s.last_started = e.collective_seq_id;
      fr.entries.push_back(std::move(e));
    }
    if (std::none_of(run.blocked.begin(), run.blocked.end(), [&](const sim::BlockedOp& b) { return b.rank == r; })) {
      const std::size_t before = fr.entries.size();
      add_raised_in(run, r, backend, timeout, static_cast<int>(members[sim::kWorldGroup].size()), fr);
      if (fr.entries.size() > before) {
        formats::FrStatus& s = status[sim::kWorldGroup];
        s.last_enqueued = s.last_started = fr.entries.back().collective_seq_id;
      }
    }
    for (auto& [g, s] : status) {
      s.pg_id = std::to_string(g);
      fr.status.push_back(s);
    }
    out.push_back(std::move(fr));
  }
  return out;
}

void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw scenarios::InputError({dir, 0, 0}, "--flight-recorder", dir, "expected a folder it can create");
  for (const auto& [name, text] : files) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw scenarios::InputError({path, 0, 0}, "--flight-recorder", dir, "expected a writable folder");
  }
}

}  // namespace ddpsim::validate
