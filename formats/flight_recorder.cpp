#include "formats/flight_recorder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/json_fields.hpp"
#include "formats/pickle.hpp"

namespace ddpsim::formats {
namespace {

using Json = nlohmann::json;
using Ordered = nlohmann::ordered_json;

// Nanosecond timestamps pass 2^53: integers are read as JSON integers, exactly.
std::int64_t int64_field(const Json& v, const std::string& key) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  if (v.is_string()) {  // pg_status's sequence numbers are strings in some versions
    const std::string s = v.get<std::string>();
    std::size_t used = 0;
    try {
      const long long n = std::stoll(s, &used);
      if (used == s.size()) return n;
    } catch (const std::exception&) {
    }
    throw FormatError("", key, fmt::format("expected an integer, got the string '{}'", s));
  }
  return detail::integer<std::int64_t>(v, key.c_str());
}

std::optional<std::int64_t> optional_int64(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return int64_field(j.at(key), key);
}

const Json& need(const Json& j, const std::string& key) {
  if (!j.contains(key)) throw FormatError("", key, "missing");
  return j.at(key);
}

std::string text(const Json& j, const std::string& key) {
  const Json& v = need(j, key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  throw FormatError("", key, fmt::format("expected a string, got {}", v.type_name()));
}

std::vector<std::vector<std::int64_t>> shapes(const Json& j, const std::string& key) {
  std::vector<std::vector<std::int64_t>> out;
  if (!j.contains(key) || j.at(key).is_null()) return out;
  const Json& list = j.at(key);
  if (!list.is_array()) throw FormatError("", key, "expected a list of shapes (lists of integers)");
  for (const Json& shape : list) {
    if (!shape.is_array()) throw FormatError("", key, "expected a list of shapes (lists of integers)");
    std::vector<std::int64_t> dims;
    for (const Json& d : shape) dims.push_back(int64_field(d, key));
    out.push_back(std::move(dims));
  }
  return out;
}

std::vector<std::string> strings(const Json& j, const std::string& key) {
  std::vector<std::string> out;
  if (!j.contains(key) || j.at(key).is_null()) return out;
  if (!j.at(key).is_array()) throw FormatError("", key, "expected a list of strings");
  for (const Json& v : j.at(key)) {
    if (!v.is_string()) throw FormatError("", key, "expected a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

// pg_config's ranks: a string "[0, 1]" as PyTorch writes it, or a list.
std::vector<int> ranks_of(const Json& v, const std::string& key) {
  Json list = v;
  if (v.is_string()) {
    try {
      list = Json::parse(v.get<std::string>());
    } catch (const Json::exception&) {
      throw FormatError("", key, "expected a list of ranks, \"[0, 1]\"");
    }
  }
  if (!list.is_array()) throw FormatError("", key, "expected a list of ranks, \"[0, 1]\"");
  std::vector<int> out;
  for (const Json& r : list) out.push_back(detail::integer<int>(r, key.c_str()));
  return out;
}

// The stack that issued an entry: a list of {name, filename, line}; absent or null: none.
std::vector<FrFrame> frames_of(const Json& e) {
  std::vector<FrFrame> out;
  if (!e.contains("frames") || e.at("frames").is_null()) return out;
  const Json& list = e.at("frames");
  if (!list.is_array()) throw FormatError("", "frames", "expected a list of {name, filename, line}");
  for (std::size_t k = 0; k < list.size(); ++k) {
    const Json& f = list[k];
    const std::string at = fmt::format("frames[{}]", k);
    if (!f.is_object()) throw FormatError("", at, "expected an object with name, filename and line");
    FrFrame frame;
    if (f.contains("name") && f.at("name").is_string()) frame.name = f.at("name").get<std::string>();
    if (f.contains("filename") && f.at("filename").is_string()) frame.filename = f.at("filename").get<std::string>();
    if (auto v = optional_int64(f, "line")) frame.line = *v;
    out.push_back(std::move(frame));
  }
  return out;
}

FrEntry read_entry(const Json& e, std::size_t i) {
  const std::string at = fmt::format("entries[{}].", i);
  if (!e.is_object()) throw FormatError("", at.substr(0, at.size() - 1), "expected an object");
  FrEntry out;
  try {
    out.record_id = int64_field(need(e, "record_id"), "record_id");
    out.pg_id = text(e, "pg_id");
    if (e.contains("process_group") && e.at("process_group").is_array() && e.at("process_group").size() == 2) {
      out.pg_desc = e.at("process_group")[1].is_string() ? e.at("process_group")[1].get<std::string>() : "";
    }
    out.collective_seq_id = int64_field(need(e, "collective_seq_id"), "collective_seq_id");
    if (auto v = optional_int64(e, "p2p_seq_id")) out.p2p_seq_id = *v;
    if (auto v = optional_int64(e, "op_id")) out.op_id = *v;
    out.profiling_name = text(e, "profiling_name");
    if (auto v = optional_int64(e, "time_created_ns")) out.time_created_ns = *v;
    out.input_sizes = shapes(e, "input_sizes");
    out.output_sizes = shapes(e, "output_sizes");
    out.input_dtypes = strings(e, "input_dtypes");
    out.output_dtypes = strings(e, "output_dtypes");
    out.state = text(e, "state");
    if (out.state != "scheduled" && out.state != "started" && out.state != "completed") {
      throw FormatError("", "state", fmt::format("expected scheduled, started or completed, got '{}'", out.state));
    }
    out.time_discovered_started_ns = optional_int64(e, "time_discovered_started_ns");
    out.time_discovered_completed_ns = optional_int64(e, "time_discovered_completed_ns");
    if (e.contains("duration_ms") && e.at("duration_ms").is_number()) out.duration_ms = e.at("duration_ms").get<double>();
    if (e.contains("retired") && e.at("retired").is_boolean()) out.retired = e.at("retired").get<bool>();
    if (auto v = optional_int64(e, "timeout_ms")) out.timeout_ms = *v;
    if (e.contains("is_p2p") && e.at("is_p2p").is_boolean()) out.is_p2p = e.at("is_p2p").get<bool>();
    out.frames = frames_of(e);
  } catch (const FormatError& x) {
    throw FormatError("", at + x.key(), x.what());
  }
  return out;
}

int rank_of_name(const std::string& file) {
  std::string name = std::filesystem::path(file).filename().string();
  if (name.size() > 5 && name.ends_with(".json")) name.resize(name.size() - 5);
  std::size_t digits = name.size();
  while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
  if (digits == name.size() || name.size() - digits > 7) return -1;
  return std::stoi(name.substr(digits));
}

void read_groups(const Json& j, FlightRecord& out) {
  if (!j.contains("pg_config")) return;
  if (!j.at("pg_config").is_object()) throw FormatError("", "pg_config", "expected an object of process groups");
  for (const auto& [id, g] : j.at("pg_config").items()) {
    const std::string at = "pg_config." + id;
    if (!g.is_object()) throw FormatError("", at, "expected an object with name, desc and ranks");
    FrGroup group{id, g.contains("name") && g.at("name").is_string() ? g.at("name").get<std::string>() : id,
                  g.contains("desc") && g.at("desc").is_string() ? g.at("desc").get<std::string>() : "", {}};
    group.ranks = ranks_of(need(g, "ranks"), at + ".ranks");
    out.groups.push_back(std::move(group));
  }
  if (!j.contains("pg_status") || !j.at("pg_status").is_object()) return;
  for (const auto& [id, s] : j.at("pg_status").items()) {
    FrStatus status{id};
    if (!s.is_object()) throw FormatError("", "pg_status." + id, "expected an object");
    if (auto v = optional_int64(s, "last_enqueued_collective")) status.last_enqueued = *v;
    if (auto v = optional_int64(s, "last_started_collective")) status.last_started = *v;
    if (auto v = optional_int64(s, "last_completed_collective")) status.last_completed = *v;
    out.status.push_back(status);
  }
}

}  // namespace

std::string to_json(const FlightRecord& r) {
  Ordered j;
  j["version"] = r.version;
  Ordered groups = Ordered::object(), status = Ordered::object();
  for (const FrGroup& g : r.groups) {
    std::string ranks = "[";
    for (std::size_t i = 0; i < g.ranks.size(); ++i) ranks += (i ? ", " : "") + std::to_string(g.ranks[i]);
    groups[g.id] = {{"name", g.name}, {"desc", g.desc}, {"ranks", ranks + "]"}};
  }
  for (const FrStatus& s : r.status) {
    status[s.pg_id] = {{"last_enqueued_collective", s.last_enqueued},
                       {"last_started_collective", s.last_started},
                       {"last_completed_collective", s.last_completed}};
  }
  j["pg_config"] = std::move(groups);
  j["pg_status"] = std::move(status);
  std::string out = j.dump(1);
  out.resize(out.rfind('}'));  // reopen the object for the entries, one a line
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  out += ",\n \"entries\": [";
  for (std::size_t i = 0; i < r.entries.size(); ++i) {
    const FrEntry& e = r.entries[i];
    const auto opt = [](const auto& v) { return v ? Ordered(*v) : Ordered(nullptr); };
    const bool numeric = !e.pg_id.empty() && e.pg_id.size() < 10 &&
                         std::all_of(e.pg_id.begin(), e.pg_id.end(), [](char c) { return c >= '0' && c <= '9'; });
    Ordered x{{"record_id", e.record_id},
              {"pg_id", numeric ? Ordered(std::stoi(e.pg_id)) : Ordered(e.pg_id)},  // PyTorch writes an integer
              {"process_group", {e.pg_id, e.pg_desc}},
              {"collective_seq_id", e.collective_seq_id},
              {"p2p_seq_id", e.p2p_seq_id},
              {"op_id", e.op_id},
              {"profiling_name", e.profiling_name},
              {"time_created_ns", e.time_created_ns},
              {"input_sizes", e.input_sizes},
              {"input_dtypes", e.input_dtypes},
              {"output_sizes", e.output_sizes},
              {"output_dtypes", e.output_dtypes},
              {"state", e.state},
              {"time_discovered_started_ns", opt(e.time_discovered_started_ns)},
              {"time_discovered_completed_ns", opt(e.time_discovered_completed_ns)},
              {"duration_ms", opt(e.duration_ms)},
              {"retired", e.retired},
              {"timeout_ms", e.timeout_ms},
              {"is_p2p", e.is_p2p}};
    if (!e.frames.empty()) {
      Ordered frames = Ordered::array();
      for (const FrFrame& f : e.frames) frames.push_back({{"name", f.name}, {"filename", f.filename}, {"line", f.line}});
      x["frames"] = std::move(frames);
    }
    out += (i ? ",\n  " : "\n  ") + x.dump();
  }
  return out + (r.entries.empty() ? "]\n}\n" : "\n ]\n}\n");
}

FlightRecord parse_flight_record(std::string_view text, const std::string& file) {
  FlightRecord out;
  out.rank = rank_of_name(file);
  if (out.rank < 0) throw FormatError(file, "", "expected a file name ending in the rank (nccl_trace_rank_3)");
  Json j;
  if (!text.empty() && static_cast<unsigned char>(text.front()) == 0x80) {  // PyTorch's default: a pickle
    try {
      j = detail::unpickle(text);
    } catch (const FormatError& e) {
      throw FormatError(file, "", fmt::format("a pickle dump ddpsim cannot read ({}); convert it to JSON with: python3 "
                                              "-c \"import json, pickle, sys; json.dump(pickle.load(open(sys.argv[1], "
                                              "'rb')), open(sys.argv[2], 'w'))\" DUMP DUMP.json",
                                              e.what()));
    }
  } else {
    try {
      j = Json::parse(text);
    } catch (const Json::exception& e) {
      throw FormatError(file, "", fmt::format("expected a flight-recorder dump in JSON: {}", e.what()));
    }
  }
  try {
    if (!j.is_object()) throw FormatError("", "", "expected an object with version, pg_config, pg_status and entries");
    if (j.contains("version") && j.at("version").is_string()) out.version = j.at("version").get<std::string>();
    read_groups(j, out);
    const Json& entries = need(j, "entries");
    if (!entries.is_array()) throw FormatError("", "entries", "expected a list");
    for (std::size_t i = 0; i < entries.size(); ++i) out.entries.push_back(read_entry(entries[i], i));
  } catch (const FormatError& e) {
    throw FormatError(file, e.key(), e.what());
  }
  return out;
}

std::vector<FlightRecord> read_flight_records(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw FormatError(dir, "", "expected a folder of flight-recorder dumps");
  std::map<int, FlightRecord> by_rank;
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.is_regular_file() && rank_of_name(f.path().string()) >= 0) files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    FlightRecord r = parse_flight_record(ss.str(), path.string());
    if (by_rank.count(r.rank)) throw FormatError(path.string(), "", fmt::format("a second dump of rank {}", r.rank));
    by_rank.emplace(r.rank, std::move(r));
  }
  if (by_rank.empty()) throw FormatError(dir, "", "no dump in it: expected files named PREFIX<rank>, nccl_trace_rank_0");
  std::vector<FlightRecord> out;
  for (auto& [rank, r] : by_rank) out.push_back(std::move(r));
  return out;
}

std::string dump_file_name(int rank) { return "nccl_trace_rank_" + std::to_string(rank); }

}  // namespace ddpsim::formats
