#include "formats/overlap_file.hpp"

#include <fmt/format.h>

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

// A slowdown: a number from 0 to 1000, contention's bounds in the scenario schema.
double slowdown(const Json& contention, const char* key) {
  const Json& v = field(contention, key);
  const std::string path = fmt::format("contention.{}", key);
  if (!v.is_number()) throw FormatError("", path, fmt::format("expected a number, got {}", v.type_name()));
  const double d = v.get<double>();
  if (!(d >= 0 && d <= 1000)) throw FormatError("", path, fmt::format("{} is outside 0..1000", d));
  return d;
}

}  // namespace

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
    m.sizes = static_cast<int>(sizes.size());
    const Json& c = field(j, "contention");
    m.compute_slowdown = slowdown(c, "compute_slowdown");
    m.comm_slowdown = slowdown(c, "comm_slowdown");
    return m;
  } catch (const Json::exception& e) {
    throw FormatError(path, "", fmt::format("an overlap measurement's JSON: {}", e.what()));
  } catch (const FormatError& e) {
    throw FormatError(path, e.key(), fmt::format("an overlap measurement's JSON: {}", e.what()));
  }
}

}  // namespace ddpsim::formats
