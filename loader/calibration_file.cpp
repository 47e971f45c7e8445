// The calibration file (calibration_file.hpp): its writer and its reader.

#include "loader/calibration_file.hpp"

#include <fmt/format.h>

#include "loader/input_error.hpp"
#include "loader/model_section.hpp"
#include "loader/scenario_sections.hpp"
#include "loader/schema.hpp"
#include "loader/yaml_section.hpp"
#include "sim/digest.hpp"

namespace ddpsim::scenarios {
namespace {

std::string comments(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "# " + line + "\n";
  return out;
}

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& n : list) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string compute_yaml(const CalibrationFile::Compute& c) {
  std::string yaml = comments(c.comments) + "model:\n";
  if (c.forward_ms) yaml += fmt::format("  forward_ms: {:.6g}\n", *c.forward_ms);
  if (c.backward_ms) yaml += fmt::format("  backward_ms: {:.6g}\n", *c.backward_ms);
  if (!c.layers.empty()) yaml += "  layers:\n";
  for (const CalibrationFile::Layer& l : c.layers) {
    yaml += fmt::format("    - {{name: {}, params: [{}], forward_ms: {:.6g}, backward_ms: {:.6g}}}\n", l.name, names(l.params),
                        l.forward_ms, l.backward_ms);
  }
  return yaml + fmt::format("  optimizer_ms: {:.6g}\ndata:\n  load_ms: {:.6g}\n", c.optimizer_ms, c.load_ms);
}

}  // namespace

std::string to_yaml(const CalibrationFile& calibration) {
  std::string yaml = "# ddpsim calibrate, from:\n";
  for (const std::string& s : calibration.sources) yaml += "#   " + s + "\n";
  if (const auto& c = calibration.collective) {
    yaml += comments(c->comments) + "collective:\n";
    if (c->binomial) yaml += "  algorithm: binomial\n";
    if (c->latency_us) yaml += fmt::format("  latency_us: {:.6g}\n", *c->latency_us);
    if (c->bandwidth_GBps) yaml += fmt::format("  bandwidth_GBps: {:.6g}\n", *c->bandwidth_GBps);
    yaml += fmt::format("  launch_overhead_us: {:.6g}\n", c->launch_overhead_us);
    if (c->bandwidth_scale) yaml += fmt::format("  bandwidth_scale: {:.6g}\n", *c->bandwidth_scale);
  }
  if (calibration.compute) yaml += compute_yaml(*calibration.compute);
  if (const auto& s = calibration.straggler) {
    yaml += comments(s->comments) + fmt::format("straggler:\n  model: log2\n  penalty_ms: {:.6g}\n", s->penalty_ms);
  }
  if (const auto& c = calibration.contention) {
    yaml += comments(c->comments) + fmt::format("contention:\n  compute_slowdown: {:.6g}\n", c->compute_slowdown);
    if (c->comm_slowdown) yaml += fmt::format("  comm_slowdown: {:.6g}\n", *c->comm_slowdown);
  }
  return yaml;
}

void apply_calibration_text(Scenario& out, std::string_view text, const std::string& source) {
  check_text(text, source);
  const YAML::Node root = parse_yaml(text, source);
  const Reader reader(source);
  const Section top(reader, root, schema::calibration_keys());
  models::DdpJob& job = out.job;
  const Section coll = top.child("collective");
  if (job.cluster) {
    coll.forbid("latency_us", "the scenario's cluster section gives every route's latency");
    coll.forbid("bandwidth_GBps", "the scenario's cluster section gives every route's bandwidth");
  }
  // Latency and bandwidth fitted to one all-reduce's form price that form only: the binomial's (per message
  // up and down a tree) and the ring's (per ring step) are not each other's.
  const bool fitted_binomial = coll.choice("algorithm", "ring") == "binomial";
  if ((coll.has("latency_us") || coll.has("bandwidth_GBps")) &&
      fitted_binomial != (job.algorithm == models::Algorithm::kBinomial)) {
    if (!coll.has("algorithm")) {
      coll.missing("algorithm", "binomial, the scenario's collective.algorithm: latency and bandwidth fitted as the "
                                "ring's do not price the binomial all-reduce (ddpsim calibrate --algorithm binomial)");
    }
    coll.fail_value("algorithm", fmt::format("expected the scenario's collective.algorithm ({}): latency and bandwidth "
                                             "fitted as one all-reduce do not price another",
                                             models::to_string(job.algorithm)));
  }
  if (coll.has("latency_us")) job.network.latency = coll.micros("latency_us", std::nullopt);
  if (coll.has("latency_us") || coll.has("bandwidth_GBps")) out.collective_placeholder = false;  // measured now
  if (coll.has("bandwidth_GBps")) {
    job.network.bandwidth_GBps = coll.number("bandwidth_GBps", std::nullopt);
  }
  if (coll.has("launch_overhead_us")) job.network.launch_overhead = coll.micros("launch_overhead_us", std::nullopt);
  if (job.collective_model != models::CollectiveModel::kNccl) {
    coll.forbid("bandwidth_scale", "it scales NCCL's bandwidths: the scenario's collective.model is ring");
  }
  if (coll.has("bandwidth_scale")) job.nccl_bandwidth_scale = coll.number("bandwidth_scale", std::nullopt);
  const Section model = top.child("model");
  if (model.has("layers") || model.has("forward_ms") || model.has("backward_ms")) {
    const Section no_device = top.child("device");
    ComputeTimes times(no_device);
    read_compute(model, times, job.model);
  }
  if (model.has("optimizer_ms")) job.model.optimizer = model.millis("optimizer_ms", std::nullopt);
  const Section data = top.child("data");
  if (data.has("load_ms")) job.data_load = data.millis("load_ms", std::nullopt);
  if (top.has("straggler")) {
    job.straggler = read_straggler(top.child("straggler"), out.sweep.world_sizes);
  }
  if (top.has("contention")) {
    job.compute_slowdown = top.child("contention").number("compute_slowdown", job.compute_slowdown);
    job.comm_slowdown = top.child("contention").number("comm_slowdown", job.comm_slowdown);
  }
  out.calibration = source;
  out.calibration_sha256 = sim::to_hex(sim::sha256(text));
}

void apply_calibration(Scenario& scenario, const std::string& path) {
  apply_calibration_text(scenario, read_limited(path, "calibration file"), path);
}


}  // namespace ddpsim::scenarios
