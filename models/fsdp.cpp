#include "models/fsdp.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

namespace ddpsim::models {
namespace {

constexpr std::array<std::string_view, 5> kStrategyNames = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD",
                                                            "_HYBRID_SHARD_ZERO2"};

// The module tree the parameter names imply: a module per dotted prefix,
// children in the order their first parameter was registered.
struct Module {
  std::string path;
  int parent = -1;
  std::vector<int> children;
  std::vector<int> params;  // its own (recurse=False) parameters
  std::int64_t subtree_numel = 0;
  int preorder = 0;
};

class ModuleTree {
 public:
  explicit ModuleTree(const ModelSpec& model) {
    modules_.push_back(Module{});
    for (std::size_t i = 0; i < model.parameters.size(); ++i) {
      const std::string& name = model.parameters[i].name;
      const std::size_t dot = name.rfind('.');
      const int m = find_or_add(dot == std::string::npos ? std::string() : name.substr(0, dot));
      modules_[static_cast<std::size_t>(m)].params.push_back(static_cast<int>(i));
      for (int a = m; a >= 0; a = modules_[static_cast<std::size_t>(a)].parent) {
        modules_[static_cast<std::size_t>(a)].subtree_numel += model.parameters[i].numel();
      }
    }
    int next = 0;
    number(0, next);
  }

  const Module& at(int m) const { return modules_[static_cast<std::size_t>(m)]; }

  // Every parameter of m's subtree, in registration order.
  std::vector<int> subtree_params(int m) const {
    std::vector<int> out;
    collect(m, out);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  int find_or_add(const std::string& path) {
    if (path.empty()) return 0;
    if (auto it = index_.find(path); it != index_.end()) return it->second;
    const std::size_t dot = path.rfind('.');
    const int parent = find_or_add(dot == std::string::npos ? std::string() : path.substr(0, dot));
    const int m = static_cast<int>(modules_.size());
    modules_.push_back(Module{path, parent, {}, {}, 0, 0});
    modules_[static_cast<std::size_t>(parent)].children.push_back(m);
    index_.emplace(path, m);
    return m;
  }

  void number(int m, int& next) {
    modules_[static_cast<std::size_t>(m)].preorder = next++;
    for (int c : modules_[static_cast<std::size_t>(m)].children) number(c, next);
  }

  void collect(int m, std::vector<int>& out) const {
    const Module& mod = at(m);
    out.insert(out.end(), mod.params.begin(), mod.params.end());
    for (int c : mod.children) collect(c, out);
  }

  std::vector<Module> modules_;
  std::map<std::string, int> index_;  // lookups only: never iterated
};

// _recursive_wrap over the module tree (torch/distributed/fsdp/wrap.py).
class Wrapper {
 public:
  Wrapper(const ModelSpec& model, const WrapPolicy& policy)
      : model_(model), policy_(policy), tree_(model), assigned_(model.parameters.size(), false) {}

  std::vector<FsdpUnit> run() {
    wrap(0, true);
    add_unit(0, true);
    link_parents();
    return std::move(units_);
  }

 private:
  // Returns the elements of m's subtree that are in a unit once m is done.
  std::int64_t wrap(int m, bool only_children) {
    std::int64_t wrapped = 0;
    for (int c : tree_.at(m).children) wrapped += wrap(c, false);
    const std::int64_t remainder = tree_.at(m).subtree_numel - wrapped;
    if (only_children || !wants(m, remainder)) return wrapped;
    add_unit(m, false);
    return tree_.at(m).subtree_numel;
  }

  bool wants(int m, std::int64_t remainder) const {
    if (policy_.min_num_params) return remainder >= *policy_.min_num_params;
    return std::any_of(policy_.modules.begin(), policy_.modules.end(),
                       [&](const std::string& p) { return module_matches(p, tree_.at(m).path); });
  }

  // A wrapped module with no parameter left to it has no FlatParameter: no unit.
  void add_unit(int m, bool root) {
    FsdpUnit u;
    u.module = tree_.at(m).path;
    u.root = root;
    u.forward_position = tree_.at(m).preorder;
    for (int p : tree_.subtree_params(m)) {
      if (assigned_[static_cast<std::size_t>(p)]) continue;
      assigned_[static_cast<std::size_t>(p)] = true;
      u.params.push_back(p);
      u.numel += model_.parameters[static_cast<std::size_t>(p)].numel();
    }
    if (u.params.empty() && !root) return;
    unit_of_module_.emplace(m, static_cast<int>(units_.size()));
    units_.push_back(std::move(u));
  }

  void link_parents() {
    for (const auto& [m, u] : unit_of_module_) {
      for (int a = tree_.at(m).parent; a >= 0; a = tree_.at(a).parent) {
        if (auto it = unit_of_module_.find(a); it != unit_of_module_.end()) {
          units_[static_cast<std::size_t>(u)].parent = it->second;
          break;
        }
      }
    }
  }

  const ModelSpec& model_;
  const WrapPolicy& policy_;
  ModuleTree tree_;
  std::vector<bool> assigned_;
  std::vector<FsdpUnit> units_;
  std::map<int, int> unit_of_module_;  // module index -> unit index
};

}  // namespace

std::string_view to_string(ShardingStrategy strategy) { return kStrategyNames[static_cast<std::size_t>(strategy)]; }

std::optional<ShardingStrategy> parse_sharding_strategy(std::string_view name) {
  for (std::size_t i = 0; i < kStrategyNames.size(); ++i) {
    if (kStrategyNames[i] == name) return static_cast<ShardingStrategy>(i);
  }
  return std::nullopt;
}

bool is_hybrid(ShardingStrategy strategy) {
  return strategy == ShardingStrategy::kHybridShard || strategy == ShardingStrategy::kHybridShardZero2;
}

bool reshards_after_forward(ShardingStrategy strategy) {
  return strategy == ShardingStrategy::kFullShard || strategy == ShardingStrategy::kHybridShard;
}

std::string_view to_string(BackwardPrefetch prefetch) {
  switch (prefetch) {
    case BackwardPrefetch::kBackwardPre: return "BACKWARD_PRE";
    case BackwardPrefetch::kBackwardPost: return "BACKWARD_POST";
    case BackwardPrefetch::kNone: break;
  }
  return "none";
}

bool module_matches(std::string_view pattern, std::string_view path) {
  while (true) {
    const std::size_t pd = pattern.find('.');
    const std::size_t md = path.find('.');
    const std::string_view pc = pattern.substr(0, pd);
    const std::string_view mc = path.substr(0, md);
    if (pc != "*" && pc != mc) return false;
    if (pd == std::string_view::npos || md == std::string_view::npos) {
      return pd == std::string_view::npos && md == std::string_view::npos;
    }
    pattern.remove_prefix(pd + 1);
    path.remove_prefix(md + 1);
  }
}

std::vector<FsdpUnit> build_units(const ModelSpec& model, const WrapPolicy& policy) {
  if (model.parameters.empty()) throw std::invalid_argument("FSDP needs at least one parameter");
  return Wrapper(model, policy).run();
}

std::vector<int> forward_order(const std::vector<FsdpUnit>& units) {
  std::vector<int> order(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return units[static_cast<std::size_t>(a)].forward_position < units[static_cast<std::size_t>(b)].forward_position;
  });
  return order;
}

std::int64_t padded_numel(std::int64_t numel, int shard_group) {
  if (shard_group < 1) throw std::invalid_argument("a shard group has at least one rank");
  return (numel + shard_group - 1) / shard_group * shard_group;
}

int shard_group_size(ShardingStrategy strategy, int world_size, int gpus_per_node) {
  if (strategy == ShardingStrategy::kNoShard) return 1;
  if (is_hybrid(strategy)) return std::min(world_size, gpus_per_node);
  return world_size;
}

}  // namespace ddpsim::models
