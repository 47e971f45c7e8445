#include "real_backend/flight_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace ddpsim::real {

FlightLog::FlightLog(int rank, std::vector<Group> groups, std::string backend, std::int64_t timeout_ms, std::size_t buffer)
    : rank_(rank),
      groups_(std::move(groups)),
      backend_(std::move(backend)),
      timeout_ms_(timeout_ms),
      buffer_(std::max<std::size_t>(1, buffer)),
      seq_(groups_.size(), 0),
      status_(groups_.size()) {
  for (std::size_t g = 0; g < groups_.size(); ++g) status_[g].pg_id = groups_[g].id;
}

std::int64_t FlightLog::enqueue(const Call& call, std::int64_t now_ns) {
  const std::size_t g = call.group;
  if (g >= groups_.size()) throw std::out_of_range("flight log: no process group " + std::to_string(g));
  formats::FrEntry e;
  e.record_id = next_id_++;
  e.pg_id = groups_[g].id;
  e.pg_desc = groups_[g].desc;
  e.collective_seq_id = ++seq_[g];  // PyTorch counts from 1
  e.op_id = e.collective_seq_id;
  e.profiling_name = backend_ + ":" + call.op;
  e.time_created_ns = now_ns;
  e.input_sizes = {{call.in}};
  e.output_sizes = {{call.out}};
  e.input_dtypes = {call.dtype};
  e.output_dtypes = {call.dtype};
  e.state = "scheduled";
  e.timeout_ms = timeout_ms_;
  status_[g].last_enqueued = e.collective_seq_id;
  if (entries_.size() == buffer_) entries_.pop_front();
  entries_.push_back(std::move(e));
  return entries_.back().record_id;
}

formats::FrStatus& FlightLog::status_of(const std::string& pg_id) {
  return *std::find_if(status_.begin(), status_.end(), [&](const formats::FrStatus& s) { return s.pg_id == pg_id; });
}

formats::FrEntry* FlightLog::find(std::int64_t id) {
  if (entries_.empty() || id < entries_.front().record_id || id > entries_.back().record_id) return nullptr;
  return &entries_[static_cast<std::size_t>(id - entries_.front().record_id)];
}

void FlightLog::start(std::int64_t id, std::int64_t now_ns) {
  formats::FrEntry* e = find(id);
  if (e == nullptr) return;
  e->state = "started";
  e->time_discovered_started_ns = now_ns;
  status_of(e->pg_id).last_started = e->collective_seq_id;
}

void FlightLog::complete(std::int64_t id, std::int64_t now_ns) {
  formats::FrEntry* e = find(id);
  if (e == nullptr) return;
  e->state = "completed";
  e->retired = true;
  e->time_discovered_completed_ns = now_ns;
  if (e->time_discovered_started_ns) e->duration_ms = static_cast<double>(now_ns - *e->time_discovered_started_ns) / 1e6;
  status_of(e->pg_id).last_completed = e->collective_seq_id;
}

formats::FlightRecord FlightLog::record() const {
  formats::FlightRecord fr;
  fr.rank = rank_;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    fr.groups.push_back({groups_[g].id, groups_[g].id, groups_[g].desc, groups_[g].ranks});
  }
  fr.status = status_;
  fr.entries.assign(entries_.begin(), entries_.end());
  return fr;
}

void write_flight_dump(const std::string& dir, const formats::FlightRecord& record) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("--flight-recorder {}: cannot create it: {}", dir, ec.message()));
  const std::filesystem::path path = std::filesystem::path(dir) / formats::dump_file_name(record.rank);
  const std::filesystem::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << formats::to_json(record);
    if (!out.flush()) throw std::runtime_error(fmt::format("--flight-recorder: cannot write {}", partial.string()));
  }
  std::filesystem::rename(partial, path, ec);  // whole or not at all: the job is about to be aborted
  if (ec) throw std::runtime_error(fmt::format("--flight-recorder: cannot write {}: {}", path.string(), ec.message()));
}

}  // namespace ddpsim::real
