#include "formats/measured_run.hpp"
#include "formats/input_file.hpp"

#include "formats/json_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <type_traits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ddpsim::formats {
namespace {

using detail::integer;
using Json = nlohmann::json;
using Ordered = nlohmann::ordered_json;

// The optional per-step numbers, in the order ddpsim-real writes them.
struct OptionalField {
  const char* name;
  std::optional<double> MeasuredStep::*member;
};
constexpr OptionalField kBeforeWait[] = {{"data_ms", &MeasuredStep::data_ms},
                                         {"compute_ms", &MeasuredStep::compute_ms},
                                         {"collective_ms", &MeasuredStep::collective_ms},
                                         {"exposed_comm_ms", &MeasuredStep::exposed_comm_ms}};
constexpr OptionalField kAfterWait[] = {{"forward_compute_ms", &MeasuredStep::forward_compute_ms},
                                        {"backward_compute_ms", &MeasuredStep::backward_compute_ms},
                                        {"backward_comm_ms", &MeasuredStep::backward_comm_ms},
                                        {"backward_overlap_ms", &MeasuredStep::backward_overlap_ms},
                                        {"optimizer_ms", &MeasuredStep::optimizer_ms}};

template <class T>
void read_if(const Json& j, const char* key, T& out) {
  if (!j.contains(key)) return;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    out = integer<T>(j.at(key), key);
  } else {
    out = j.at(key).get<T>();
  }
}

std::vector<std::int64_t> integers(const Json& list, const char* key) {
  std::vector<std::int64_t> out;
  if (!list.is_array()) throw FormatError("", key, "expected a list of integers");
  for (const Json& v : list) out.push_back(integer<std::int64_t>(v, key));
  return out;
}

MeasuredStep read_step(const Json& s) {
  MeasuredStep out;
  out.iteration = integer<int>(s.at("iteration"), "iteration");
  out.skipped = s.at("skipped").get<bool>();
  out.step_ms = s.at("step_ms").get<double>();
  read_if(s, "epoch", out.epoch);
  read_if(s, "examples", out.examples);
  for (const OptionalField& f : kBeforeWait) {
    if (s.contains(f.name)) out.*f.member = s.at(f.name).get<double>();
  }
  for (const OptionalField& f : kAfterWait) {
    if (s.contains(f.name)) out.*f.member = s.at(f.name).get<double>();
  }
  if (s.contains("backward_end_clock_ms")) out.backward_end_clock_ms = s.at("backward_end_clock_ms").get<double>();
  read_if(s, "layer_forward_ms", out.layer_forward_ms);
  read_if(s, "layer_backward_ms", out.layer_backward_ms);
  return out;
}

RankLog read_log(const Json& j) {
  RankLog out;
  out.world_size = integer<int>(j.at("world_size"), "world_size");
  if (out.world_size < 1) throw FormatError("", "world_size", "expected a world size >= 1");
  read_if(j, "rank", out.rank);
  read_if(j, "host", out.host);
  read_if(j, "ddpsim_version", out.ddpsim_version);
  read_if(j, "git_commit", out.git_commit);
  read_if(j, "device", out.device);
  read_if(j, "transport", out.transport);
  if (j.contains("network")) out.network = j.at("network").dump();
  if (j.contains("comm_hook")) {
    const Json& h = j.at("comm_hook");
    if (!h.is_object() || !h.contains("name") || !h.at("name").is_string()) {
      throw FormatError("", "comm_hook", "expected {\"name\": a hook's name, \"options\": {...}}");
    }
    out.comm_hook = h.at("name").get<std::string>();
  }
  if (j.contains("sizes")) {
    const Json& s = j.at("sizes");
    out.sizes.widths = s.at("widths").get<std::string>();
    out.sizes.parameters = integer<std::int64_t>(s.at("parameters"), "parameters");
    out.sizes.gradient_bytes = integer<std::int64_t>(s.at("gradient_bytes"), "gradient_bytes");
    out.sizes.bucket_bytes = integers(s.at("bucket_bytes"), "bucket_bytes");
    out.sizes.dataset_size = integer<std::int64_t>(s.at("dataset_size"), "dataset_size");
    if (s.contains("unit_bytes")) out.sizes.unit_bytes = integers(s.at("unit_bytes"), "unit_bytes");
  }
  read_if(j, "parallelism", out.parallelism);
  if (j.contains("peak_memory_bytes")) out.peak_memory_bytes = integer<std::int64_t>(j.at("peak_memory_bytes"), "peak_memory_bytes");
  if (j.contains("layers")) {
    for (const Json& l : j.at("layers")) {
      out.layers.push_back({l.at("name").get<std::string>(), l.at("params").get<std::vector<std::string>>()});
    }
  }
  if (j.contains("gradient_ready_order")) {
    out.gradient_ready_order = j.at("gradient_ready_order").get<std::vector<std::string>>();
  }
  read_if(j, "batch_size", out.batch_size);
  read_if(j, "resumed_from_step", out.resumed_from_step);
  if (j.contains("epochs")) {
    for (const Json& e : j.at("epochs")) {
      out.epochs.push_back({integer<int>(e.at("epoch"), "epoch"), integers(e.at("ids"), "ids")});
    }
  }
  for (const Json& s : j.at("steps")) out.steps.push_back(read_step(s));
  return out;
}

CollectiveSweep read_sweep(const Json& j) {
  CollectiveSweep out;
  out.world_size = integer<int>(j.at("world_size"), "world_size");
  read_if(j, "transport", out.transport);
  read_if(j, "host", out.host);
  read_if(j, "ddpsim_version", out.ddpsim_version);
  read_if(j, "git_commit", out.git_commit);
  read_if(j, "op", out.op);
  if (j.contains("network")) out.network = j.at("network").dump();
  for (const Json& row : j.at("sweep")) {
    SweepRow r;
    r.bytes = integer<std::int64_t>(row.at("bytes"), "bytes");
    r.time_us = row.at("time_us").get<double>();
    read_if(row, "algbw_GBps", r.algbw_GBps);
    read_if(row, "busbw_GBps", r.busbw_GBps);
    out.rows.push_back(r);
  }
  return out;
}

Json parse_file(const std::string& path) {
  std::string why;
  std::ifstream in = open_input(path, why);
  if (!in) throw FormatError(path, "", why + ": expected a measurement file (ddpsim-real's JSON)");
  try {
    return Json::parse(in);
  } catch (const Json::exception& e) {
    throw FormatError(path, "", fmt::format("JSON from ddpsim-real: {}", e.what()));
  }
}

}  // namespace

double RankLog::need(const std::optional<double> MeasuredStep::*field, std::string_view name, std::size_t i) const {
  const std::optional<double>& v = steps.at(i).*field;
  if (!v) {
    throw FormatError(file, fmt::format("steps[{}].{}", i, name),
                      fmt::format("ddpsim-real's JSON: step {} has no '{}' (written by newer ddpsim-real)", i, name));
  }
  return *v;
}

std::string rank_log_path(const std::string& prefix, int rank) { return fmt::format("{}.rank{}.json", prefix, rank); }

std::variant<RankLog, CollectiveSweep> read_measured_file(const std::string& path) {
  const Json j = parse_file(path);
  try {
    if (j.is_object() && j.contains("sweep")) {
      CollectiveSweep s = read_sweep(j);
      s.file = path;
      return s;
    }
    if (j.is_object() && j.contains("steps")) {
      RankLog log = read_log(j);
      log.file = path;
      return log;
    }
  } catch (const Json::exception& e) {
    throw FormatError(path, "", fmt::format("ddpsim-real's JSON: {}", e.what()));
  } catch (const FormatError& e) {
    throw FormatError(path, e.key(), fmt::format("ddpsim-real's JSON: {}", e.what()));
  }
  throw FormatError(path, "", "an all-reduce sweep (allreduce-sweep --json) or a training run (train --json)");
}

RankLog read_rank_log(const std::string& path) {
  auto file = read_measured_file(path);
  if (auto* log = std::get_if<RankLog>(&file)) return std::move(*log);
  throw FormatError(path, "", "a training run's PREFIX.rank<r>.json (train --json), not an all-reduce sweep");
}

std::vector<RankLog> read_run(const std::string& prefix) {
  std::vector<RankLog> logs;
  logs.push_back(read_rank_log(rank_log_path(prefix, 0)));
  for (int r = 1; r < logs.front().world_size; ++r) logs.push_back(read_rank_log(rank_log_path(prefix, r)));
  return logs;
}

std::string to_json(const RankLog& log) {
  Ordered j;
  j["rank"] = log.rank;
  j["world_size"] = log.world_size;
  j["host"] = log.host;
  j["ddpsim_version"] = log.ddpsim_version;
  j["git_commit"] = log.git_commit;
  j["device"] = log.device;
  j["transport"] = log.transport;
  if (!log.network.empty()) j["network"] = Ordered::parse(log.network);
  if (!log.comm_hook.empty()) j["comm_hook"] = {{"name", log.comm_hook}, {"options", Ordered::object()}};
  j["sizes"] = {{"widths", log.sizes.widths},
                {"parameters", log.sizes.parameters},
                {"gradient_bytes", log.sizes.gradient_bytes},
                {"bucket_bytes", log.sizes.bucket_bytes},
                {"dataset_size", log.sizes.dataset_size}};
  if (!log.sizes.unit_bytes.empty()) j["sizes"]["unit_bytes"] = log.sizes.unit_bytes;
  if (log.parallelism != "ddp") j["parallelism"] = log.parallelism;
  if (log.peak_memory_bytes >= 0) j["peak_memory_bytes"] = log.peak_memory_bytes;
  if (!log.layers.empty()) {  // written only where a step has per-layer times
    Ordered layers = Ordered::array();
    for (const MeasuredLayer& l : log.layers) layers.push_back({{"name", l.name}, {"params", l.params}});
    j["layers"] = std::move(layers);
  }
  if (!log.gradient_ready_order.empty()) j["gradient_ready_order"] = log.gradient_ready_order;
  j["batch_size"] = log.batch_size;
  j["resumed_from_step"] = log.resumed_from_step;
  Ordered epochs = Ordered::array();
  for (const MeasuredEpoch& e : log.epochs) epochs.push_back({{"epoch", e.epoch}, {"ids", e.ids}});
  j["epochs"] = std::move(epochs);
  Ordered steps = Ordered::array();
  const auto number = [](const std::optional<double>& v) { return v ? Ordered(*v) : Ordered(nullptr); };
  for (const MeasuredStep& s : log.steps) {
    Ordered step = {{"iteration", s.iteration}, {"epoch", s.epoch}, {"examples", s.examples}, {"skipped", s.skipped}};
    for (const OptionalField& f : kBeforeWait) step[f.name] = number(s.*f.member);
    step["wait_ms"] = nullptr;  // not separable from collective time on one rank: docs/validation.md
    for (const OptionalField& f : kAfterWait) step[f.name] = number(s.*f.member);
    step["step_ms"] = s.step_ms;
    step["backward_end_clock_ms"] = number(s.backward_end_clock_ms);
    step["layer_forward_ms"] = s.layer_forward_ms;
    step["layer_backward_ms"] = s.layer_backward_ms;
    steps.push_back(std::move(step));
  }
  j["steps"] = std::move(steps);
  return j.dump(2) + "\n";
}

std::string to_json(const CollectiveSweep& sweep) {
  Ordered rows = Ordered::array();
  for (const SweepRow& r : sweep.rows) {
    rows.push_back({{"bytes", r.bytes}, {"time_us", r.time_us}, {"algbw_GBps", r.algbw_GBps}, {"busbw_GBps", r.busbw_GBps}});
  }
  Ordered j{{"transport", sweep.transport}, {"host", sweep.host},         {"ddpsim_version", sweep.ddpsim_version},
            {"git_commit", sweep.git_commit}, {"world_size", sweep.world_size}};
  if (sweep.op != "all_reduce") j["op"] = sweep.op;  // all-reduce sweeps keep the format they always had
  if (!sweep.network.empty()) j["network"] = Ordered::parse(sweep.network);
  j["sweep"] = std::move(rows);
  return j.dump(2) + "\n";
}

}  // namespace ddpsim::formats
