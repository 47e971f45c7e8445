// Scenario validation. Every value is checked for type, range and
// finiteness; every mapping for unknown and duplicate keys. Nothing is
// walked that the schema does not name, so alias bombs cost nothing.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/nccl_model.hpp"
#include "models/presets.hpp"
#include "netsim/simgrid_options.hpp"
#include "formats/input_file.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"
#include "loader/calibration_file.hpp"
#include "loader/model_section.hpp"
#include "loader/scenario_sections.hpp"
#include "loader/schema.hpp"
#include "loader/yaml_section.hpp"
#include "sim/digest.hpp"

namespace ddpsim::scenarios {
namespace {

using sim::Time;

std::string stem_of(const std::string& source) {
  const std::string stem = std::filesystem::path(source).stem().string();
  return stem.empty() ? "scenario" : stem;
}

// DDP's settings; the bucket caps go to the sweep's axis (the job's is set from it: with_cap).
models::DdpConfig read_ddp(const Section& top, const models::ModelSpec& model, std::vector<double>& caps) {
  const Section s = top.child("ddp");
  models::DdpConfig ddp;
  caps = s.number_or_list("bucket_cap_mb", 25.0);
  ddp.first_bucket_bytes = models::bucket_bytes(s.number("first_bucket_mb", 1.0));
  // As DDP(bucket_cap_mb=X) since PyTorch 2.3: a given cap caps the first bucket too, unless it is given.
  ddp.first_bucket_given = s.has("first_bucket_mb");
  ddp.first_bucket_follows_cap = s.has("bucket_cap_mb") && !ddp.first_bucket_given;
  ddp.find_unused_parameters = s.boolean("find_unused_parameters", false);
  ddp.static_graph = s.boolean("static_graph", false);
  ddp.broadcast_buffers = s.boolean("broadcast_buffers", true);
  ddp.gradient_accumulation = static_cast<int>(s.integer("gradient_accumulation", 1));
  ddp.unused_parameters = ParamIndex(model.parameters).list(s, "unused_parameters", true);
  std::sort(ddp.unused_parameters.begin(), ddp.unused_parameters.end());
  ddp.traversal_per_tensor = s.micros("traversal_us_per_tensor", 1.0);
  if (s.has("bucket_copy_GBps")) ddp.bucket_copy_bytes_per_s = 1e9 * s.number("bucket_copy_GBps", std::nullopt);
  return ddp;
}

// ---- faults ---------------------------------------------------------------

// The fields of one fault of kind `type`, read in the order errors name them.
models::FaultKind read_fault_kind(const Section& f, models::FaultType type, const Scenario& scenario) {
  const models::DdpJob& job = scenario.job;
  namespace fault = models::fault;
  const int total = job.total_iterations();
  const auto iteration = [&](std::string_view key, std::optional<std::int64_t> fallback) {
    return static_cast<int>(f.integer(key, 0, total - 1, fallback));
  };
  switch (type) {
    case models::FaultType::kSkipBackward: return fault::SkipBackward{iteration("iteration", std::nullopt)};
    case models::FaultType::kSkipIteration: return fault::SkipIteration{iteration("iteration", std::nullopt)};
    case models::FaultType::kUnevenBatches:
      return fault::UnevenBatches{static_cast<int>(f.integer("fewer", 1, job.iterations - 1, std::nullopt))};
    case models::FaultType::kExtraCollective: {
      fault::ExtraCollective out{iteration("iteration", std::nullopt), {}};
      const std::string op = f.choice("op", "all_reduce");
      out.collective.kind = op == "all_reduce"  ? sim::CollectiveKind::kAllReduce
                            : op == "broadcast" ? sim::CollectiveKind::kBroadcast
                                                : sim::CollectiveKind::kBarrier;
      out.collective.bytes = f.integer("bytes", 4);
      return out;
    }
    case models::FaultType::kUnusedParameters: {
      fault::UnusedParameters out{iteration("iteration", std::nullopt), {}};
      if (!f.has("parameters")) f.missing("parameters", "the names of the parameters without gradient");
      out.parameters = ParamIndex(job.model.parameters).list(f, "parameters", true);
      return out;
    }
    case models::FaultType::kSlowdown: {
      fault::Slowdown out;
      out.factor = f.number("factor", std::nullopt);
      out.from_iteration = iteration("from_iteration", 0);
      out.to_iteration = iteration("to_iteration", total - 1);
      if (out.to_iteration < out.from_iteration) f.fail_value("to_iteration", "expected >= from_iteration");
      out.data = f.choice("target", "compute") == "data";
      return out;
    }
    case models::FaultType::kSlowLink: {
      fault::SlowLink out{f.number("factor", schema::Bounds{1, false, 1e6}, std::nullopt), std::nullopt};
      if (f.has("at_ms")) {
        if (scenario.fsdp && models::is_hybrid(scenario.fsdp->sharding)) {
          f.fail("at_ms", "a link that slows mid-run is modelled on the world group's collectives only: expected no "
                          "at_ms under a hybrid sharding strategy (slow the link from the start instead)");
        }
        out.at = f.millis("at_ms", std::nullopt);
      }
      return out;
    }
    case models::FaultType::kRank0Artifact: {
      fault::Rank0Artifact out;
      if (f.has("iteration") == f.has("every")) f.fail(f.has("every") ? "every" : "type", "expected exactly one of iteration, every");
      if (f.has("iteration")) out.iteration = iteration("iteration", std::nullopt);
      if (f.has("every")) out.every = static_cast<int>(f.integer("every", 1, total, std::nullopt));
      out.duration = f.millis("duration_ms", std::nullopt);
      return out;
    }
    case models::FaultType::kCrash: {
      fault::Crash out;
      if (f.has("iteration") == f.has("at_ms")) f.fail(f.has("at_ms") ? "at_ms" : "type", "expected exactly one of iteration, at_ms");
      if (f.has("iteration")) out.iteration = iteration("iteration", std::nullopt);
      if (f.has("at_ms")) out.at = f.millis("at_ms", std::nullopt);
      return out;
    }
    case models::FaultType::kSkipUnit: {
      fault::SkipUnit out{iteration("iteration", std::nullopt), -1, f.text("unit", "")};
      if (!f.has("unit")) f.missing("unit", "the module path of one of the FSDP units");
      const std::vector<models::FsdpUnit> units = models::build_units(job.model, scenario.fsdp->wrap);
      std::string names;
      for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].root) continue;
        if (units[u].module == out.module) out.unit = static_cast<int>(u);
        names += (names.empty() ? "" : ", ") + units[u].module;
      }
      if (out.unit < 0) {
        f.fail_value("unit", names.empty() ? "expected a unit other than the root, but the wrap policy makes only the root"
                                           : "expected the module path of a unit other than the root: " + names);
      }
      return out;
    }
    case models::FaultType::kMicroBatches:
      return fault::MicroBatches{iteration("iteration", std::nullopt),
                                 static_cast<int>(f.integer("count", std::nullopt))};
    case models::FaultType::kLinkDown:
      return fault::LinkDown{f.millis("at_ms", std::nullopt)};
  }
  throw std::logic_error("read_fault_kind: unknown fault type");
}

// Whether a fault of `type` runs under the scenario's program; its error if not.
void check_program(const Section& f, models::FaultType type, const Scenario& scenario) {
  using models::FaultType;
  const bool fsdp_only = type == FaultType::kSkipUnit || type == FaultType::kMicroBatches;
  const bool ddp_only =
      type == FaultType::kSkipBackward || type == FaultType::kUnevenBatches || type == FaultType::kUnusedParameters;
  if (fsdp_only && scenario.parallelism != Parallelism::kFsdp) f.fail_value("type", "expected parallelism: fsdp for it");
  if (ddp_only && scenario.parallelism == Parallelism::kFsdp) {
    f.fail_value("type", "expected a fault the FSDP program runs: skip_iteration, extra_collective, slowdown, slow_link, "
                         "rank0_artifact, crash, skip_unit, micro_batches, link_down");
  }
}

std::vector<models::Fault> read_faults(const Section& top, const Scenario& scenario, int smallest_world) {
  std::vector<models::Fault> out;
  const std::vector<YAML::Node> items = top.sequence("faults");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Section f = top.item(items[i], "faults", i);
    models::Fault fault;
    const std::string type = f.choice("type", std::nullopt);
    const schema::FaultKind& kind = *schema::fault_kind(type);
    for (std::string_view k : schema::fault_keys()) {
      if (std::find(kind.keys.begin(), kind.keys.end(), k) == kind.keys.end()) {
        f.forbid(k, fmt::format("does not apply to a {} fault (it takes {})", type, join(kind.keys)));
      }
    }
    if (kind.keys.front() != "rank") {
      fault.ranks = {0};  // rank0_artifact
    } else {
      if (!f.has("rank")) f.missing("rank", fmt::format("a rank from 0 to {}, or a list of them", smallest_world - 1));
      for (std::int64_t r : f.integer_or_list("rank", 0, smallest_world - 1)) fault.ranks.push_back(static_cast<int>(r));
    }
    // The schema lists the kinds in FaultType's order (schema_test checks it).
    const auto type_index = static_cast<models::FaultType>(&kind - schema::fault_kinds().data());
    check_program(f, type_index, scenario);
    fault.kind = read_fault_kind(f, type_index, scenario);
    out.push_back(std::move(fault));
  }
  return out;
}

}  // namespace

// Reads a file with the scenario limits; `what` names it in the error.
std::string read_limited(const std::string& path, const char* what) {
  std::string why;
  std::ifstream in = formats::open_input(path, why);
  if (!in) throw InputError({path, 0, 0}, "", "", fmt::format("{}: expected a {}", why, what));
  // Read at most one byte past the limit: a huge file is refused without being slurped.
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}


namespace {

models::Fabric read_fabric(const Section& f) {
  models::Fabric out;
  const std::string topology = f.choice("topology", "star");
  out.topology = topology == "ring"       ? models::Fabric::Topology::kRing
                 : topology == "fat_tree" ? models::Fabric::Topology::kFatTree
                                          : models::Fabric::Topology::kStar;
  out.bandwidth_GBps = f.number("bandwidth_GBps", std::nullopt);
  out.latency = f.micros("latency_us", std::nullopt);
  out.full_duplex = f.choice("duplex", "full") == "full";
  if (f.path() != "cluster.intra") f.forbid("link", "only the intra-node fabric has a link kind");
  if (f.path() == "cluster.inter") {
    out.collnet = f.boolean("collnet", false);
  } else {
    f.forbid("collnet", "only the inter-node network reduces in its switches (cluster.inter.collnet)");
  }
  if (out.topology == models::Fabric::Topology::kFatTree) {
    out.nodes_per_switch = static_cast<int>(f.integer("nodes_per_switch", std::nullopt));
    out.oversubscription = f.number("oversubscription", 1.0);
  } else {
    f.forbid("nodes_per_switch", "only a fat_tree has leaf switches");
    f.forbid("oversubscription", "only a fat_tree has oversubscribed uplinks");
  }
  return out;
}

// cluster.intra.gpus_per_switch and uplink_GBps: a PCIe node's GPUs
// behind switches (docs/cost-models.md#a-pcie-tree-inside-a-node).
void read_pcie_tree(const Section& intra, models::ClusterSpec& out) {
  if (out.nvlink || out.intra.topology != models::Fabric::Topology::kStar || out.gpus_per_node < 2) {
    const std::string why = "only a PCIe node (link: pcie, topology: star) of two or more GPUs has PCIe switches";
    intra.forbid("gpus_per_switch", why);
    intra.forbid("uplink_GBps", why);
    return;
  }
  const int g = out.gpus_per_node;
  out.gpus_per_switch = static_cast<int>(intra.integer("gpus_per_switch", 1, g, g));
  if (g % out.gpus_per_switch != 0) {
    intra.fail_value("gpus_per_switch", fmt::format("expected a divisor of gpus_per_node ({})", g));
  }
  if (out.gpus_per_switch == g) {
    intra.forbid("uplink_GBps", "one switch for all the node's GPUs: no uplink between them (set gpus_per_switch)");
    return;
  }
  out.switch_uplink_GBps =
      intra.number("uplink_GBps", std::nullopt);
}

// The cluster section (models/cluster.hpp): nodes of GPUs, their fabrics.
models::ClusterSpec read_cluster(const Section& top) {
  const Section c = top.child("cluster");
  models::ClusterSpec out;
  out.nodes = static_cast<int>(c.integer("nodes", std::nullopt));
  out.gpus_per_node = static_cast<int>(c.integer("gpus_per_node", std::nullopt));
  if (c.has("gpu")) out.gpu = models::parse_gpu_arch(c.choice("gpu", ""));
  if (static_cast<std::int64_t>(out.nodes) * out.gpus_per_node > kMaxWorldSize) {
    c.fail_value("nodes", fmt::format("at most {} GPUs in all (nodes x gpus_per_node)", kMaxWorldSize));
  }
  if (!c.has("intra")) c.missing("intra", "the intra-node fabric: topology, bandwidth_GBps, latency_us");
  out.intra = read_fabric(c.child("intra"));
  out.nvlink = c.child("intra").choice("link", "nvlink") == "nvlink";
  read_pcie_tree(c.child("intra"), out);
  if (out.nodes > 1) {
    if (!c.has("inter")) c.missing("inter", "the inter-node network: topology, bandwidth_GBps, latency_us");
    out.nics_per_node = static_cast<int>(c.integer("nics_per_node", 1, out.gpus_per_node, 1));
    if (out.nics_per_node % out.pcie_switches() != 0) {
      const std::string expected = fmt::format(
          "a multiple of the PCIe switches ({}, gpus_per_node / "
          "cluster.intra.gpus_per_switch): a NIC under each switch",
          out.pcie_switches());
      if (!c.has("nics_per_node")) c.missing("nics_per_node", expected + " (the default is 1)");
      c.fail_value("nics_per_node", "expected " + expected);
    }
    out.inter = read_fabric(c.child("inter"));
  } else {
    c.forbid("inter", "one node has no inter-node network");
    c.forbid("nics_per_node", "one node has no inter-node network");
    out.inter = out.intra;
  }
  return out;
}

void read_training(const Section& top, models::DdpJob& job) {
  const Section training = top.child("training");
  job.iterations = static_cast<int>(training.integer("iterations", 10));
  job.epochs = static_cast<int>(training.integer("epochs", 1, 10'000'000 / job.iterations, 1));
  const int total = job.total_iterations();
  job.warmup_iterations = static_cast<int>(training.integer("warmup_iterations", 0, total - 1, std::min(2, total - 1)));
  job.local_batch_size = static_cast<int>(training.integer("local_batch_size", 32));
  job.final_barrier = training.boolean("final_barrier", true);
  job.agree_on_skip = training.boolean("agree_on_skip", false);
  job.join = training.boolean("join", false);
}

// The data section: the load time and, with a dataset size, the sampler.
void read_data(const Section& top, Scenario& out) {
  models::DdpJob& job = out.job;
  const Section data = top.child("data");
  job.data_load = data.millis("load_ms", 0.0);
  if (data.has("dataset_size")) {
    SamplerSpec sampler;
    sampler.dataset_size = data.integer("dataset_size", std::nullopt);
    sampler.shuffle = data.boolean("shuffle", true);
    sampler.drop_last = data.boolean("drop_last", false);
    sampler.set_epoch = data.boolean("set_epoch", true);
    sampler.epochs = static_cast<int>(data.integer("epochs", 1));
    out.sampler = sampler;
  } else {
    for (auto k : {"shuffle", "drop_last", "set_epoch", "epochs"}) data.forbid(k, "needs data.dataset_size");
  }
}

// collective.model and what it needs: NCCL's model prices on a cluster
// whose GPU generation is known, with the analytic engine, choosing its own
// algorithm.
void read_collective_model(const Section& top, Scenario& out) {
  models::DdpJob& job = out.job;
  const Section coll = top.child("collective");
  if (coll.choice("model", "ring") == "ring") {
    coll.forbid("bandwidth_scale", "it scales NCCL's bandwidths: collective.model nccl");
    if (job.cluster && job.cluster->inter.collnet) {
      top.child("cluster").child("inter").fail_value(
          "collnet", "expected false with collective.model ring: only NCCL's tuning model has CollNet (collective.model nccl)");
    }
    return;
  }
  job.collective_model = models::CollectiveModel::kNccl;
  job.nccl_bandwidth_scale = coll.number("bandwidth_scale", 1.0);
  if (!job.cluster) coll.fail_value("model", "expected ring (the default) without a cluster section: NCCL's model reads the cluster's GPUs and links");
  if (!job.cluster->gpu) top.child("cluster").missing("gpu", "the GPU generation for NCCL's model: volta, ampere, hopper or blackwell");
  if (job.algorithm != models::Algorithm::kRing) coll.fail_value("algorithm", "expected ring (the default) with collective.model nccl: NCCL chooses its algorithm");
  if (out.engine != "analytic") coll.fail_value("model", "expected ring (the default) with engine simgrid: NCCL's model prices collectives analytically");
  if (job.backend == models::Backend::kGloo) {
    coll.fail_value("model", "expected ring (the default) with backend gloo: NCCL's tuning model prices NCCL's collectives, "
                             "and gloo runs its own (a ring all-reduce, a binomial-tree broadcast)");
  }
  if (job.cluster->pcie_switches() > 1) {
    coll.fail_value(
        "model", "expected ring (the default) with cluster.intra.gpus_per_switch: NCCL's model here has no PCIe tree");
  }
}

// The collective, watchdog and cluster sections: the backend, the
// algorithm, the routes' latency and bandwidth, the watchdog timeout.
void read_network(const Section& top, Scenario& out) {
  models::DdpJob& job = out.job;
  const Section coll =
      top.child("collective");
  if (!top.has("collective") && !top.has("cluster")) {
    top.missing("collective", "a mapping with latency_us and bandwidth_GBps (or a cluster section)");
  }
  const std::string algorithm = coll.choice("algorithm", "ring");
  job.algorithm = algorithm == "ring"           ? models::Algorithm::kRing
                  : algorithm == "hierarchical" ? models::Algorithm::kHierarchical
                  : algorithm == "auto"         ? models::Algorithm::kAuto
                                                : models::Algorithm::kBinomial;
  const bool gloo = coll.choice("backend", "nccl") == "gloo";
  job.backend = gloo ? models::Backend::kGloo : models::Backend::kNccl;
  // PyTorch's defaults: 10 minutes for NCCL process groups, 30 for gloo.
  const Section watchdog = top.child("watchdog");
  job.watchdog_timeout = Time::from_ms(1000 * watchdog.number("timeout_s", gloo ? 1800.0 : 600.0), "watchdog.timeout_s");
  if (top.has("cluster")) {
    job.cluster = read_cluster(top);
    coll.forbid("latency_us", "the cluster section gives every route's latency: remove collective.latency_us (the "
                              "cluster's intra and inter links give each route's), or remove cluster: to give every "
                              "route this one");
    coll.forbid("bandwidth_GBps", "the cluster section gives every route's bandwidth: remove "
                                  "collective.bandwidth_GBps (the cluster's intra and inter links give each route's), "
                                  "or remove cluster: to give every route this one");
    const int gpus = job.cluster->gpus();
    for (int w : out.sweep.world_sizes) {
      if (w <= gpus) continue;
      // Point at the offending element of a list.
      const YAML::Node& list = top.value("world_size");
      YAML::Node bad = list;
      for (std::size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
        const YAML::Node n = list[i];
        if (n.as<std::int64_t>() == w) {
          bad = n;
          break;
        }
      }
      top.fail_node(bad, "world_size", fmt::format("expected at most {} ranks: the cluster has {} nodes x {} GPUs", gpus,
                                                   job.cluster->nodes, job.cluster->gpus_per_node));
    }
    job.network.latency = job.cluster->intra.latency;
    job.network.bandwidth_GBps = job.cluster->intra.bandwidth_GBps;
  } else {
    job.network.latency = coll.micros("latency_us", std::nullopt);
    job.network.bandwidth_GBps = coll.number("bandwidth_GBps", std::nullopt);
  }
  job.network.launch_overhead = coll.micros("launch_overhead_us", 0.0);
  out.collective_placeholder = coll.boolean("placeholder", false);
  read_collective_model(top, out);
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& source) {
  check_text(text, source);
  const YAML::Node root = parse_yaml(text, source);
  const Reader reader(source);
  const Section top(reader, root, schema::scenario_keys());
  Scenario out;
  out.source = source;
  out.sha256 = sim::to_hex(sim::sha256(text));
  out.name = top.text("name", stem_of(source));
  top.text("description", "");
  out.engine = top.choice("engine", "analytic");
  out.simgrid = read_simgrid(top);
  out.seed = static_cast<std::uint64_t>(top.integer("seed", 0));
  for (std::int64_t w : top.integer_or_list("world_size")) out.sweep.world_sizes.push_back(static_cast<int>(w));

  models::DdpJob& job = out.job;
  read_training(top, job);

  job.model = read_model(top, out.model_description);
  out.measured_on = top.child("model").choice("measured_on", "");
  job.ddp = read_ddp(top, job.model, out.sweep.bucket_caps_mb);
  job = with_cap(std::move(job), out.sweep.bucket_caps_mb.front());

  read_parallelism(top, out);
  read_data(top, out);

  read_network(top, out);
  read_comm_hook(top, job);

  job.fingerprint = top.child("debug").boolean("fingerprint", false);
  job.compute_slowdown = top.child("contention").number("compute_slowdown", 0.0);
  job.comm_slowdown = top.child("contention").number("comm_slowdown", 0.0);
  job.straggler = read_straggler(
      top.child("straggler"), out.sweep.world_sizes);
  job.faults = read_faults(top, out, *std::min_element(out.sweep.world_sizes.begin(), out.sweep.world_sizes.end()));

  out.resilience = read_resilience(top, job);
  const Section validation = top.child("validation");
  if (validation.has("max_error_pct")) {
    out.max_error_pct = validation.number("max_error_pct", std::nullopt);
  }
  if (top.has("calibration")) {
    // Relative to the scenario's folder; its values override the scenario's.
    const std::string given = top.text("calibration", "");
    const std::filesystem::path path = std::filesystem::path(source).parent_path() / given;
    apply_calibration_text(out, read_limited(path.string(), "calibration file"), path.string());
  }
  if (out.parallelism == Parallelism::kFsdp && !std::holds_alternative<models::NoStraggler>(job.straggler)) {
    const std::string expected = "expected model none with parallelism: fsdp (the FSDP program has no straggler model yet)";
    const Section st = top.child("straggler");
    if (st.has("model")) st.fail_value("model", expected);
    throw InputError(out.parallelism_at, "straggler", "", expected);  // from the calibration file
  }
  return out;
}

// DistributedDataParallel's default bucket_cap_mb (_DEFAULT_BUCKET_CAP_MB).
constexpr double kDdpDefaultCapMb = 25.0;

models::DdpJob with_cap(models::DdpJob job, double cap_mb) {
  job.ddp.bucket_cap_bytes = models::bucket_bytes(cap_mb);
  // A cap other than DDP's default is passed to DDP (the advisor's caps on a scenario without one
  // too), and so caps the first bucket, unless first_bucket_mb pins it.
  const bool passed = job.ddp.first_bucket_follows_cap || cap_mb != kDdpDefaultCapMb;
  if (passed && !job.ddp.first_bucket_given) job.ddp.first_bucket_bytes = job.ddp.bucket_cap_bytes;
  return job;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(read_limited(path, "scenario file"), path); }

void check_fits_cluster(const Scenario& scenario, int world_size, const std::string& option) {
  const auto& cluster = scenario.job.cluster;
  if (!cluster || world_size <= cluster->gpus()) return;
  throw InputError({"the command line", 0, 0}, option, std::to_string(world_size),
                   fmt::format("expected at most {} ranks: the scenario's cluster has {} nodes x {} GPUs", cluster->gpus(),
                               cluster->nodes, cluster->gpus_per_node));
}

}  // namespace ddpsim::scenarios
