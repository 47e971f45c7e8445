// The readers of a model and of a straggler section (model_section.hpp).

#include "loader/model_section.hpp"

#include <algorithm>

#include "models/fsdp.hpp"
#include "models/presets.hpp"
#include "loader/schema.hpp"

namespace ddpsim::scenarios {
namespace {

constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;

std::vector<models::Tensor> read_tensors(const Section& s, std::string_view key) {
  std::vector<models::Tensor> out;
  const std::vector<YAML::Node> items = s.sequence(key);
  // A tensor's keys and dtypes, the same for every item (presets list hundreds).
  static const std::vector<std::string_view> keys = schema::children(schema::scenario_keys(), "model.parameters[]");
  static const std::vector<std::string_view> dtypes = schema::choices(schema::scenario_keys(), "model.parameters[].dtype");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Section t = s.item(items[i], fmt::format("{}[{}]", s.path_of(key), i), keys);
    if (!t.has("name")) t.missing("name", "the tensor's name");
    models::Tensor x;
    x.name = t.text("name", "");
    for (const YAML::Node& d : t.sequence("shape")) x.shape.push_back(t.parse_integer(d, "shape", 1, kMaxDim));
    if (!t.has("shape")) t.missing("shape", "a list of dimensions, e.g. [64, 3, 7, 7]");
    const std::string dtype = t.choice("dtype", dtypes, "float32");
    x.dtype = *models::parse_dtype(dtype);
    for (const models::Tensor& prev : out) {
      if (prev.name == x.name) t.fail_value("name", "expected a name not used by an earlier tensor");
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<int> read_ready_order(const Section& s, const std::vector<models::Tensor>& params) {
  std::vector<int> order;
  if (!s.has("gradient_ready_order")) {
    for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) order.push_back(i);
    return order;
  }
  order = ParamIndex(params).list(s, "gradient_ready_order", true);
  if (order.size() != params.size()) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (std::find(order.begin(), order.end(), static_cast<int>(i)) == order.end()) {
        s.fail("gradient_ready_order", fmt::format("lists {} of {} parameters; missing, for one: '{}'", order.size(),
                                                   params.size(), params[i].name));
      }
    }
  }
  return order;
}

std::vector<std::int64_t> numels(const std::vector<models::Tensor>& params) {
  std::vector<std::int64_t> out;
  for (const auto& p : params) out.push_back(p.numel());
  return out;
}

// model.activation_checkpointing: the modules whose forward is recomputed
// in backward (apply_activation_checkpointing's check_fn). A parameter is in
// the outermost matching module; its forward time is added to its backward.
void read_activation_checkpointing(const Section& model, models::ModelSpec& spec) {
  if (!model.has("activation_checkpointing")) return;
  const auto patterns = model.strings("activation_checkpointing");
  if (patterns.empty()) model.fail_value("activation_checkpointing", "expected at least one module path pattern");
  spec.checkpointed.assign(spec.parameters.size(), -1);
  std::vector<std::string> modules;  // the checkpointed modules, in order of first parameter
  std::vector<bool> used(patterns.size(), false);
  for (std::size_t p = 0; p < spec.parameters.size(); ++p) {
    const std::string& name = spec.parameters[p].name;
    for (std::size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      const std::string path = name.substr(0, dot);
      for (std::size_t k = 0; k < patterns.size(); ++k) {
        if (!models::module_matches(patterns[k].first, path)) continue;
        used[k] = true;
        if (spec.checkpointed[p] >= 0) continue;  // inside an outer checkpointed module already
        const auto at = std::find(modules.begin(), modules.end(), path);
        spec.checkpointed[p] = static_cast<int>(at - modules.begin());
        if (at == modules.end()) modules.push_back(path);
      }
    }
    if (spec.checkpointed[p] >= 0) spec.backward[p] += spec.forward[p];
  }
  for (std::size_t k = 0; k < patterns.size(); ++k) {
    if (!used[k]) {
      model.fail_node(patterns[k].second, "model.activation_checkpointing",
                      "expected a pattern matching a module of the parameters' names (`*` is one path component)");
    }
  }
}

}  // namespace

models::StragglerModel read_straggler(const Section& s, const std::vector<int>& worlds) {
  const std::string model = s.choice("model", "none");
  const std::string why = fmt::format("does not apply to straggler model '{}'", model);
  if (model == "none") {
    for (auto k : {"penalty_ms", "rank", "distribution", "mean_ms", "max_ms"}) s.forbid(k, why);
    return models::NoStraggler{};
  }
  if (model == "log2") {
    for (auto k : {"distribution", "mean_ms", "max_ms"}) s.forbid(k, why);
    const int smallest = *std::min_element(worlds.begin(), worlds.end());
    const auto rank = s.integer("rank", -1, smallest - 1, -1);
    return models::Log2Straggler{s.millis("penalty_ms", std::nullopt), static_cast<int>(rank)};
  }
  for (auto k : {"penalty_ms", "rank"}) s.forbid(k, why);
  const std::string dist = s.choice("distribution", "exponential");
  if (dist == "exponential") {
    s.forbid("max_ms", "does not apply to the exponential distribution (it takes mean_ms)");
    return models::JitterStraggler{models::JitterDistribution::kExponential,
                                   s.millis("mean_ms", std::nullopt), {}};
  }
  s.forbid("mean_ms", "does not apply to the uniform distribution (it takes max_ms)");
  return models::JitterStraggler{models::JitterDistribution::kUniform, {}, s.millis("max_ms", std::nullopt)};
}

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::int64_t mebibytes(const Section& s, std::string_view key) {
  return std::llround(s.number(key, std::nullopt) * kMiB);
}

// A layer's activation_MB, spread over its parameters by size (memory only).
void read_layer_activations(const Section& l, const std::vector<int>& members, models::ModelSpec& spec) {
  if (!l.has("activation_MB")) return;
  std::vector<std::int64_t> weights;
  for (int m : members) weights.push_back(spec.parameters[static_cast<std::size_t>(m)].numel());
  const auto parts = models::spread_integer(mebibytes(l, "activation_MB"), weights);
  spec.activations.resize(spec.parameters.size(), 0);
  for (std::size_t k = 0; k < members.size(); ++k) spec.activations[static_cast<std::size_t>(members[k])] = parts[k];
}

// The whole model's activation_MB, spread over the parameters by forward time
// (by size where forward takes no time).
void read_activations(const Section& model, models::ModelSpec& spec) {
  if (!model.has("activation_MB")) return;
  if (!spec.activations.empty()) model.fail("activation_MB", "give it per layer or for the whole model, not both");
  std::vector<std::int64_t> weights;
  for (const sim::Time& t : spec.forward) weights.push_back(t.count_ns());
  if (std::all_of(weights.begin(), weights.end(), [](std::int64_t w) { return w == 0; })) weights = numels(spec.parameters);
  spec.activations = models::spread_integer(mebibytes(model, "activation_MB"), weights);
}

}  // namespace

void read_compute(const Section& model, ComputeTimes& times, models::ModelSpec& spec) {
  const std::size_t n = spec.parameters.size();
  const bool whole = model.has("forward_ms") || model.has("forward_gflops") || model.has("backward_ms") ||
                     model.has("backward_gflops");
  if (model.has("layers")) {
    if (whole) model.fail("layers", "give per-layer times or whole-model forward/backward times, not both");
    spec.forward.assign(n, sim::Time{});
    spec.backward.assign(n, sim::Time{});
    std::vector<char> covered(n, 0);
    const ParamIndex index(spec.parameters);
    const std::vector<YAML::Node> layers = model.sequence("layers");
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const Section l = model.item(layers[i], "layers", i);
      l.text("name", "");
      if (!l.has("params")) l.missing("params", "the names of the layer's parameters");
      const std::vector<int> members = index.list(l, "params", true);
      if (members.empty()) l.fail_value("params", "expected at least one parameter");
      std::vector<std::int64_t> weights;
      for (int m : members) {
        if (covered[static_cast<std::size_t>(m)]) l.fail_value("params", "expected parameters in no other layer");
        covered[static_cast<std::size_t>(m)] = 1;
        weights.push_back(spec.parameters[static_cast<std::size_t>(m)].numel());
      }
      const auto fwd = models::spread_by_size(*times.read(l, "forward", true), weights);
      const auto bwd = models::spread_by_size(*times.read(l, "backward", true), weights);
      for (std::size_t k = 0; k < members.size(); ++k) {
        spec.forward[static_cast<std::size_t>(members[k])] = fwd[k];
        spec.backward[static_cast<std::size_t>(members[k])] = bwd[k];
      }
      read_layer_activations(l, members, spec);
    }
    for (std::size_t p = 0; p < n; ++p) {
      if (!covered[p]) model.fail("layers", fmt::format("parameter '{}' is in no layer", spec.parameters[p].name));
    }
    return;
  }
  spec.forward = models::spread_by_size(*times.read(model, "forward", true), numels(spec.parameters));
  spec.backward = models::spread_by_size(*times.read(model, "backward", true), numels(spec.parameters));
}

models::ModelSpec read_model(const Section& top, std::string& description) {
  const Section model = top.child("model");
  if (!top.has("model")) top.missing("model", "a mapping with a preset, parameters or gradient_bytes, and compute times");
  const int forms = int(model.has("preset")) + int(model.has("parameters")) + int(model.has("gradient_bytes"));
  if (forms != 1) {
    const std::string why = "expected exactly one of preset, parameters, gradient_bytes";
    if (forms == 0) model.missing("preset", "a preset name, a parameters list or gradient_bytes");
    model.fail(model.has("gradient_bytes") ? "gradient_bytes" : "parameters", why);
  }
  models::ModelSpec spec;
  const Section device = top.child("device");
  ComputeTimes times(device);
  if (model.has("gradient_bytes")) {
    for (auto k : {"gradient_ready_order", "buffers", "layers"}) model.forbid(k, "needs a parameters list or a preset");
    const std::int64_t bytes = model.integer("gradient_bytes", std::nullopt);
    if (bytes % 4 != 0) model.fail_value("gradient_bytes", "expected a multiple of 4 (one fp32 gradient buffer)");
    spec = models::block_model(*times.read(model, "forward", true), *times.read(model, "backward", true), {}, bytes);
    description = fmt::format("one block, {} gradient bytes", bytes);
  } else if (model.has("preset")) {
    for (auto k : {"parameters", "gradient_ready_order", "buffers"}) model.forbid(k, "comes from the preset");
    std::vector<std::string_view> names = models::preset_names();
    const std::string name = model.choice("preset", names, std::nullopt);
    const std::string source = "preset:" + name;
    const YAML::Node root = parse_yaml(*models::preset_yaml(name), source);
    const Reader reader(source);
    const Section preset(reader, root, schema::preset_keys());
    spec.parameters = read_tensors(preset, "parameters");
    spec.ready_order = read_ready_order(preset, spec.parameters);
    spec.buffers = read_tensors(preset, "buffers");
    read_compute(model, times, spec);
    description = fmt::format("preset {}, {} parameters in {} tensors", name, spec.parameter_count(),
                              spec.parameters.size());
  } else {
    spec.parameters = read_tensors(model, "parameters");
    if (spec.parameters.empty()) model.fail_value("parameters", "expected at least one parameter");
    spec.ready_order = read_ready_order(model, spec.parameters);
    spec.buffers = read_tensors(model, "buffers");
    read_compute(model, times, spec);
    description = fmt::format("{} parameters in {} tensors", spec.parameter_count(), spec.parameters.size());
  }
  spec.optimizer = model.millis("optimizer_ms", 0.0);
  if (!times.used_flops()) {
    for (auto k : {"peak_tflops", "efficiency"}) device.forbid(k, "is given, but no compute time is in gflops");
  }
  read_activations(model, spec);
  read_activation_checkpointing(model, spec);
  return spec;
}

}  // namespace ddpsim::scenarios
