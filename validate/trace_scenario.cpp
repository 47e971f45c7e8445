// The scenario rewritten with a trace's numbers (validate/trace_import.hpp).

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "loader/input_error.hpp"
#include "validate/trace_import.hpp"

namespace ddpsim::validate {
namespace {

using scenarios::InputError;

std::string number(double v) { return fmt::format("{:.6g}", v); }

// The parameter of each AccumulateGrad event, in time order: by its shape when
// the trace recorded shapes (among equal shapes, in the scenario's order),
// else the scenario's ready order. Parameters without a gradient are left out.
std::vector<int> event_parameters(const scenarios::Scenario& s, const Trace& trace, const TraceSummary& summary) {
  const models::ModelSpec& m = s.job.model;
  const std::vector<int>& unused = s.job.ddp.unused_parameters;
  std::vector<int> used;
  for (int p : m.ready_order) {
    if (std::find(unused.begin(), unused.end(), p) == unused.end()) used.push_back(p);
  }
  if (used.size() != summary.ready_ms.size()) {
    throw InputError({s.source, 0, 0}, "model.parameters", fmt::format("{} with a gradient", used.size()),
                     fmt::format("expected one per AccumulateGrad event of a step in {} ({})", trace.file, summary.ready_ms.size()));
  }
  if (summary.ready_shapes.size() != used.size()) return used;
  std::vector<int> out;
  std::vector<char> taken(used.size(), 0);
  for (const std::vector<std::int64_t>& shape : summary.ready_shapes) {
    std::size_t k = 0;
    while (k < used.size() && (taken[k] || m.parameters[static_cast<std::size_t>(used[k])].shape != shape)) ++k;
    if (k == used.size()) {
      throw InputError({trace.file, 0, 0}, "Input Dims", fmt::format("[{}]", fmt::join(shape, ", ")),
                       fmt::format("expected the shape of a parameter of {} not yet matched by an earlier AccumulateGrad", s.source));
    }
    taken[k] = 1;
    out.push_back(used[k]);
  }
  return out;
}

struct Applied {
  std::string forward, backward, order;
};

// Whether the trace's leaf modules are the scenario's layers, one for one in
// order: as many, and (when the trace recorded shapes) each module's ops
// take every parameter shape of its layer.
bool modules_are_layers(const YAML::Node& layers, const scenarios::Scenario& s, const TraceSummary& summary) {
  if (summary.modules.size() != layers.size() || layers.size() == 0) return false;
  const models::ModelSpec& m = s.job.model;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const ModuleSpan& module = summary.modules[i];
    if (module.shapes.empty()) continue;
    for (const YAML::Node& p : layers[i]["params"]) {
      const auto param = std::find_if(m.parameters.begin(), m.parameters.end(),
                                      [&](const models::Tensor& q) { return q.name == p.as<std::string>(); });
      if (param == m.parameters.end()) continue;
      if (std::find(module.shapes.begin(), module.shapes.end(), param->shape) == module.shapes.end()) return false;
    }
  }
  return true;
}

// model.layers: backward from when each layer's last gradient became ready,
// forward scaled to the trace's total.
Applied apply_layers(YAML::Node layers, const scenarios::Scenario& s, const std::map<std::string, double>& ready,
                     const TraceSummary& summary) {
  std::vector<double> last(layers.size(), -1), forward(layers.size(), 0);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const YAML::Node layer = layers[i];
    if (layer["forward_gflops"] || layer["backward_gflops"]) {
      throw InputError({s.source, layer.Mark().line + 1, layer.Mark().column + 1}, "model.layers[].forward_gflops",
                       layer["name"].as<std::string>(""), "expected times in ms: import-trace writes measured times");
    }
    forward[i] = layer["forward_ms"] ? layer["forward_ms"].as<double>(0) : 0;
    for (const YAML::Node& p : layer["params"]) {
      const auto it = ready.find(p.as<std::string>());
      if (it != ready.end()) last[i] = std::max(last[i], it->second);
    }
  }
  std::vector<std::size_t> by_ready(layers.size());
  std::iota(by_ready.begin(), by_ready.end(), 0);
  std::stable_sort(by_ready.begin(), by_ready.end(), [&](std::size_t a, std::size_t b) { return last[a] < last[b]; });
  double previous = 0;
  for (std::size_t i : by_ready) {
    const double own = last[i] < 0 ? 0 : last[i] - previous;
    previous = std::max(previous, last[i]);
    layers[i]["backward_ms"] = number(own);
  }
  const bool measured = modules_are_layers(layers, s, summary);
  if (measured) {
    for (std::size_t i = 0; i < layers.size(); ++i) forward[i] = summary.modules[i].forward_ms;
  }
  const double total = std::accumulate(forward.begin(), forward.end(), 0.0);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const double f = total > 0 ? forward[i] * summary.forward_ms / total : summary.forward_ms / static_cast<double>(layers.size());
    layers[i]["forward_ms"] = number(f);
  }
  std::string how = total > 0 ? fmt::format("each layer's forward_ms scaled by {:.4g} to it", summary.forward_ms / total)
                              : "split evenly over the layers";
  if (measured) {
    how = fmt::format("each layer's forward_ms from its module's span, scaled by {:.4g} to it (the loss and the glue "
                      "between modules spread in proportion)", summary.forward_ms / total);
  } else if (!summary.modules.empty()) {
    how += fmt::format(" ({} leaf module spans are not the scenario's {} layers, in order)", summary.modules.size(), layers.size());
  }
  return {how, "each layer's backward_ms: from the previous layer's last gradient to its own (AccumulateGrad ends)", ""};
}

std::string header(const scenarios::Scenario& s, const Trace& trace, const TraceSummary& summary, const Applied& applied) {
  std::string h = fmt::format(
      "# Written by `ddpsim import-trace {} --scenario {}`: that scenario with the times of the trace\n"
      "# ({} format, {} step(s) delimited by {}; medians over the steps). Its comments are not kept.\n"
      "#   forward {:.4f} ms (step start to the first backward node, the loss included): {}\n"
      "#   backward {:.4f} ms (first backward node to the last AccumulateGrad's end): {}\n"
      "#   optimizer {:.4f} ms (Optimizer.step# and Optimizer.zero_grad# spans): model.optimizer_ms\n"
      "#   gradient-ready order: {}\n",
      trace.file, s.source, trace.format, summary.steps, summary.delimiter, summary.forward_ms, applied.forward,
      summary.backward_ms, applied.backward, summary.optimizer_ms, applied.order);
  if (!summary.allreduce_ms.empty()) {
    std::vector<std::string> spans;
    for (std::size_t b = 0; b < summary.allreduce_ms.size(); ++b) {
      const std::int64_t n = summary.allreduce_elements[b];
      spans.push_back(n >= 0 ? fmt::format("{:.4f} ms ({} elements)", summary.allreduce_ms[b], n)
                             : fmt::format("{:.4f} ms", summary.allreduce_ms[b]));
    }
    h += fmt::format("#   {} in the last step: {} (not used: the collective section comes from a sweep)\n",
                     summary.allreduce_name, fmt::join(spans, ", "));
  }
  if (!summary.modules.empty()) {
    std::vector<std::string> modules;
    for (const ModuleSpan& m : summary.modules) {
      modules.push_back(fmt::format("{} {:.4f} / {:.4f} ms", m.name, m.forward_ms, m.backward_ms));
    }
    h += fmt::format("#   leaf modules, forward span / backward nodes joined by sequence number ({} of a step's {} "
                     "nodes joined): {}\n",
                     summary.joined_nodes, summary.backward_nodes, fmt::join(modules, ", "));
  }
  return h;
}

}  // namespace

std::string import_into_scenario(const scenarios::Scenario& scenario, const std::string& scenario_text,
                                 const Trace& trace, const TraceSummary& summary) {
  const models::ModelSpec& m = scenario.job.model;
  const std::vector<int> events = event_parameters(scenario, trace, summary);
  std::map<std::string, double> ready;
  for (std::size_t j = 0; j < events.size(); ++j) ready[m.parameters[static_cast<std::size_t>(events[j])].name] = summary.ready_ms[j];
  YAML::Node root = YAML::Load(scenario_text);
  YAML::Node model = root["model"];
  Applied applied;
  if (model["layers"]) {
    applied = apply_layers(model["layers"], scenario, ready, summary);
  } else {
    model["forward_ms"] = number(summary.forward_ms);
    model["backward_ms"] = number(summary.backward_ms);
    applied = {"model.forward_ms", "model.backward_ms", ""};
  }
  model["optimizer_ms"] = number(summary.optimizer_ms);
  // The new order: the events' parameters, then those without a gradient as the scenario had them.
  std::vector<int> order = events;
  for (int p : m.ready_order) {
    if (std::find(order.begin(), order.end(), p) == order.end()) order.push_back(p);
  }
  if (summary.ready_shapes.size() != events.size()) {
    applied.order = "the scenario's (the trace records no shapes)";
  } else if (order == m.ready_order) {
    applied.order = "the AccumulateGrad shapes agree with the scenario's";
  } else {
    YAML::Node names(YAML::NodeType::Sequence);
    for (int p : order) names.push_back(m.parameters[static_cast<std::size_t>(p)].name);
    model["gradient_ready_order"] = names;
    applied.order = "model.gradient_ready_order from the AccumulateGrad shapes (equal shapes in the scenario's order)";
  }
  YAML::Emitter out;
  out << root;
  return header(scenario, trace, summary, applied) + out.c_str() + "\n";
}

}  // namespace ddpsim::validate
