// The schema against the loader and the code it describes: every declared
// range is the one the loader enforces (a value just outside is refused,
// naming the key; the bounds load), and the declared lists (presets, SimGrid
// settings, fault kinds) are the code's.

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/faults.hpp"
#include "models/presets.hpp"
#include "netsim/simgrid_options.hpp"
#include "loader/scenario.hpp"
#include "loader/schema.hpp"
#include "loader/test_scenarios.hpp"

using namespace ddpsim;
namespace schema = scenarios::schema;
using scenarios::testing::error_of;

namespace {

const char* const kBase = R"(world_size: [1, 2]
training: {iterations: 4}
model: {gradient_bytes: 1000, forward_ms: 1, backward_ms: 2}
collective: {latency_us: 5, bandwidth_GBps: 10}
)";

// What a key needs beside it to load: its section's companions.
void add_companions(YAML::Node& root, const std::string& path) {
  const auto starts = [&](const char* prefix) { return path.rfind(prefix, 0) == 0; };
  if (starts("device.") || starts("model.forward_gflops") || starts("model.backward_gflops")) {
    root["model"].remove("forward_ms");
    root["model"].remove("backward_ms");
    root["model"]["forward_gflops"] = 1;
    root["model"]["backward_gflops"] = 2;
    root["device"]["peak_tflops"] = 100;
    root["device"]["efficiency"] = 0.5;
  }
  if (starts("checkpoint.") || starts("failures.")) {
    root["checkpoint"]["interval_min"] = 10;
    root["checkpoint"]["write_GBps"] = 1;
    root["checkpoint"]["read_GBps"] = 1;
  }
  if (starts("failures.")) {
    root["failures"]["mtbf_hours"] = 1000;
    root["failures"]["relaunch_s"] = 60;
  }
  if (starts("data.") && path != "data.load_ms") root["data"]["dataset_size"] = 100;
  if (starts("ddp.comm_hook.")) root["ddp"]["comm_hook"]["name"] = path == "ddp.comm_hook.cast_GBps" ? "fp16_compress" : "powerSGD";
  if (path == "ddp.comm_hook.start_powerSGD_iter") {  // 0 and 1 need neither error feedback nor warm start
    root["ddp"]["comm_hook"]["use_error_feedback"] = false;
    root["ddp"]["comm_hook"]["warm_start"] = false;
  }
  if (starts("fsdp.")) root["parallelism"] = "fsdp";
  if (path == "straggler.penalty_ms") root["straggler"]["model"] = "log2";
  if (path == "straggler.mean_ms" || path == "straggler.max_ms") root["straggler"]["model"] = "jitter";
  if (path == "straggler.max_ms") root["straggler"]["distribution"] = "uniform";
  if (path == "collective.bandwidth_scale") {  // NCCL's model: a cluster with its GPU generation
    root["collective"] = YAML::Node(YAML::NodeType::Map);
    root["collective"]["model"] = "nccl";
    YAML::Node c = root["cluster"];
    c["nodes"] = 1;
    c["gpus_per_node"] = 2;
    c["gpu"] = "ampere";
    c["intra"]["bandwidth_GBps"] = 100;
    c["intra"]["latency_us"] = 1;
  }
  if (starts("cluster.")) {
    root.remove("collective");
    YAML::Node c = root["cluster"];
    c["nodes"] = 2;
    c["gpus_per_node"] = 2;
    c["intra"]["bandwidth_GBps"] = 100;
    c["intra"]["latency_us"] = 1;
    c["inter"]["topology"] = "fat_tree";
    c["inter"]["nodes_per_switch"] = 1;
    c["inter"]["bandwidth_GBps"] = 10;
    c["inter"]["latency_us"] = 2;
  }
  if (path == "cluster.intra.uplink_GBps") {  // a PCIe node of two switches
    YAML::Node intra = root["cluster"]["intra"];
    intra["link"] = "pcie";
    intra["gpus_per_switch"] = 1;
    root["cluster"]["nics_per_node"] = 2;
  }
}

// The base scenario with `path` set to `value` (as a plain scalar).
std::string with_value(const std::string& path, const std::string& value) {
  YAML::Node root = YAML::Load(kBase);
  add_companions(root, path);
  // Split "a.b.c" at dots, but "simgrid.config.network/model" keeps its slash key whole.
  std::vector<std::string> parts;
  std::string rest = path;
  for (std::size_t dot; parts.size() < 2 && (dot = rest.find('.')) != std::string::npos;) {
    parts.push_back(rest.substr(0, dot));
    rest = rest.substr(dot + 1);
  }
  if (rest.find('.') != std::string::npos && rest.find('/') == std::string::npos) {
    parts.push_back(rest.substr(0, rest.find('.')));
    rest = rest.substr(rest.find('.') + 1);
  }
  parts.push_back(rest);
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) chain.push_back(chain.back()[parts[i]]);
  chain.back()[parts.back()] = YAML::Load(value);
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string text_of(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

}  // namespace

TEST_CASE("every declared numeric range is the loader's: just outside is refused, the bounds load") {
  int tested = 0;
  for (const schema::Key& k : schema::scenario_keys()) {
    const bool integer = k.type == schema::Type::kInteger;
    if (!integer && k.type != schema::Type::kNumber && k.type != schema::Type::kNumberOrList) continue;
    if (std::string_view(k.path).find("[]") != std::string_view::npos) continue;  // list items: ranges by context
    const std::optional<schema::Bounds> b = schema::bounds(k.range);
    if (!b) continue;
    const std::string path(k.path);
    CAPTURE(path);
    const std::string named = "key '" + path + "'";
    const double below = b->lo_open ? b->lo : (integer ? b->lo - 1 : b->lo - 0.5);
    CHECK(error_of(with_value(path, text_of(below, integer))).find(named) != std::string::npos);
    if (std::isfinite(b->hi)) {
      const double above = integer ? b->hi + 1 : b->hi * 2 + 1;
      CHECK(error_of(with_value(path, text_of(above, integer))).find(named) != std::string::npos);
    }
    // The bounds themselves load (cluster.nodes: one node refuses the base's inter-node section,
    // 2^20 nodes of 2 GPUs exceed the rank limit; both refusals are tested in the loader's tests).
    // The notes' own limits: epochs x iterations at most 10^7, gradient_bytes a multiple of 4.
    if (path != "cluster.nodes" && path != "training.epochs" && path != "model.gradient_bytes") {
      const double inside = b->lo_open ? (std::isfinite(b->hi) ? b->hi : b->lo + 1) : b->lo;
      CHECK(error_of(with_value(path, text_of(inside, integer))) == "");
      if (std::isfinite(b->hi)) CHECK(error_of(with_value(path, text_of(b->hi, integer))) == "");
    }
    ++tested;
  }
  CHECK(tested >= 40);
}

TEST_CASE("a range's text is its bounds: the grammar schema.hpp declares") {
  const auto b = [](std::string_view r) { return schema::bounds(r); };
  CHECK(b("1..10,000,000")->hi == 1e7);
  CHECK_FALSE(b("1..10,000,000")->lo_open);
  CHECK(b("(0, 1e6]")->lo_open);
  CHECK(b("(0, 1e6]")->hi == 1e6);
  CHECK(b(">= 0")->hi == std::numeric_limits<double>::infinity());
  CHECK(b("> 0")->lo_open);
  CHECK(b("1..2^50, a multiple of 4")->hi == std::pow(2.0, 50));
  CHECK(b("(0, 1e6]; slow_link: 1..1e6")->hi == 1e6);
  CHECK(b("-1..5")->lo == -1);
  CHECK_FALSE(b("0..iterations-1"));
  CHECK_FALSE(b("-1..min(world_size)-1"));
  CHECK_FALSE(b("a divisor of gpus_per_node"));
  CHECK_FALSE(b("refused"));
}

TEST_CASE("every numeric key declares its bounds, or says in words what other keys bound it") {
  // Ranges that depend on other keys: the loader checks them in code (the text says how).
  const std::vector<std::string_view> dynamic = {
      "training.warmup_iterations", "straggler.rank", "faults[].rank", "faults[].iteration", "faults[].fewer",
      "faults[].from_iteration", "faults[].to_iteration", "faults[].every", "failures.restart_world_size",
      "cluster.nics_per_node", "cluster.intra.gpus_per_switch", "cluster.intra.nodes_per_switch",
      "cluster.intra.oversubscription"};
  for (const auto* keys : {&schema::scenario_keys(), &schema::calibration_keys(), &schema::preset_keys()}) {
    for (const schema::Key& k : *keys) {
      const bool numeric = k.type == schema::Type::kInteger || k.type == schema::Type::kNumber ||
                           k.type == schema::Type::kNumberOrList || k.type == schema::Type::kIntegerOrList;
      if (!numeric) continue;
      CAPTURE(k.path);
      const bool is_dynamic = std::find(dynamic.begin(), dynamic.end(), k.path) != dynamic.end();
      CHECK(schema::bounds(k.range).has_value() != is_dynamic);
      // A number's upper bound is declared too: no key takes any finite double.
      if (!is_dynamic && k.type != schema::Type::kInteger && k.type != schema::Type::kIntegerOrList) {
        CHECK(std::isfinite(schema::bounds(k.range)->hi));
      }
    }
  }
}

TEST_CASE("the schema's lists are the code's") {
  const std::vector<std::string_view> presets = models::preset_names();
  CHECK(schema::choices(schema::scenario_keys(), "model.preset") == presets);
  std::vector<std::string_view> settable;
  for (const std::string& s : netsim::simgrid_settable()) settable.push_back(s);
  CHECK(schema::children(schema::scenario_keys(), "simgrid.config") == settable);
  const std::vector<std::string_view> types = schema::choices(schema::scenario_keys(), "faults[].type");
  REQUIRE(types.size() == schema::fault_kinds().size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    CHECK(types[i] == schema::fault_kinds()[i].type);
    CHECK(models::to_string(static_cast<models::FaultType>(i)) == types[i]);
    for (std::string_view key : schema::fault_kinds()[i].keys) {
      CHECK(schema::key(schema::scenario_keys(), "faults[]." + std::string(key)).path.size() > 0);
    }
  }
}

TEST_CASE("every section's keys are declared, and nothing else") {
  CHECK(schema::children(schema::scenario_keys(), "ddp") ==
        std::vector<std::string_view>{"bucket_cap_mb", "first_bucket_mb", "find_unused_parameters", "static_graph",
                                      "broadcast_buffers", "gradient_accumulation", "unused_parameters",
                                      "traversal_us_per_tensor", "gradient_as_bucket_view", "bucket_copy_GBps", "comm_hook"});
  CHECK_THROWS_AS(schema::key(schema::scenario_keys(), "ddp.bucket_cap"), std::logic_error);
  CHECK(schema::children(schema::calibration_keys(), "straggler") ==
        schema::children(schema::scenario_keys(), "straggler"));
  // An undeclared key is refused with the declared ones listed.
  CHECK(error_of(with_value("ddp.bucket_cap", "25")).find("did you mean 'bucket_cap_mb'?") != std::string::npos);
}
