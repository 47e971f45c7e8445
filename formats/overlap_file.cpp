#include "formats/overlap_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/input_file.hpp"
#include "formats/json_fields.hpp"
#include "formats/measured_run.hpp"

namespace ddpsim::formats {
namespace {

using Json = nlohmann::json;

constexpr const char* kFormat = "ddpsim-overlap-1";

const Json& field(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw FormatError("", key, "expected this field");
  return j.at(key);
}

std::string text(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_string()) throw FormatError("", key, fmt::format("expected a string, got {}", v.type_name()));
  return v.get<std::string>();
}

// A slowdown: a number from 0 to `hi`, contention's bounds in the scenario schema.
double slowdown(const Json& contention, const char* key, double hi) {
  const Json& v = field(contention, key);
  const std::string path = fmt::format("contention.{}", key);
  if (!v.is_number()) throw FormatError("", path, fmt::format("expected a number, got {}", v.type_name()));
  const double d = v.get<double>();
  if (!(d >= 0 && d <= hi)) throw FormatError("", path, fmt::format("{} is outside 0..{:g}", d, hi));
  return d;
}

double number(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (!v.is_number()) throw FormatError("", key, fmt::format("expected a number, got {}", v.type_name()));
  const double d = v.get<double>();
  if (!(d >= 0) || !std::isfinite(d)) throw FormatError("", key, fmt::format("{} is not a finite number >= 0", d));
  return d;
}

OverlapSize read_size(const Json& j) {
  OverlapSize s;
  s.bytes = detail::integer<std::int64_t>(field(j, "bytes"), "sizes.bytes");
  s.chunk_ms = number(j, "chunk_ms");
  s.allreduce_ms = number(j, "allreduce_ms");
  s.both_ms = number(j, "both_ms");
  s.chunks_beside = number(j, "chunks_beside");
  return s;
}

}  // namespace

std::optional<Slowdowns> pooled_slowdowns(const std::vector<OverlapSize>& sizes) {
  double both = 0, alone = 0, timed_both = 0, chunks = 0;
  for (const OverlapSize& s : sizes) {
    both += s.both_ms;
    alone += s.allreduce_ms;
    if (s.chunks_beside < 1) continue;
    timed_both += s.both_ms;
    chunks += s.chunks_beside * s.chunk_ms;
  }
  if (!(chunks > 0) || !(alone > 0)) return std::nullopt;
  return Slowdowns{std::max(0.0, timed_both / chunks - 1), std::max(0.0, both / alone - 1)};
}

std::string to_json(const OverlapMeasurement& m, const std::string& host) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["backend"] = m.backend;
  j["device"] = m.device;
  j["world_size"] = m.world_size;
  j["threads"] = m.threads;
  j["host"] = host;
  j["sizes"] = nlohmann::ordered_json::array();
  for (const OverlapSize& s : m.sizes) {
    j["sizes"].push_back({{"bytes", s.bytes}, {"chunk_ms", s.chunk_ms}, {"allreduce_ms", s.allreduce_ms},
                          {"both_ms", s.both_ms}, {"chunks_beside", s.chunks_beside}});
  }
  j["contention"] = {{"compute_slowdown", m.compute_slowdown}, {"comm_slowdown", m.comm_slowdown}};
  return j.dump(2) + "\n";
}

OverlapMeasurement read_overlap(const std::string& path) {
  std::string why;
  std::ifstream in = open_input(path, why);
  if (!in) throw FormatError(path, "", why + ": expected an overlap measurement (python3 -m ddpsim_torch overlap)");
  try {
    const Json j = Json::parse(in);
    if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat) {
      throw FormatError("", "format", fmt::format("expected \"{}\" (python3 -m ddpsim_torch overlap's JSON)", kFormat));
    }
    OverlapMeasurement m;
    m.file = path;
    m.backend = text(j, "backend");
    m.device = text(j, "device");
    m.world_size = detail::integer<int>(field(j, "world_size"), "world_size");
    m.threads = detail::integer<int>(field(j, "threads"), "threads");
    const Json& sizes = field(j, "sizes");
    if (!sizes.is_array() || sizes.empty()) throw FormatError("", "sizes", "expected a non-empty list");
    for (const Json& size : sizes) m.sizes.push_back(read_size(size));
    const Json& c = field(j, "contention");
    m.compute_slowdown = slowdown(c, "compute_slowdown", 1000);
    m.comm_slowdown = slowdown(c, "comm_slowdown", 1e6);
    return m;
  } catch (const Json::exception& e) {
    throw FormatError(path, "", fmt::format("an overlap measurement's JSON: {}", e.what()));
  } catch (const FormatError& e) {
    throw FormatError(path, e.key(), fmt::format("an overlap measurement's JSON: {}", e.what()));
  }
}

}  // namespace ddpsim::formats
