#include "models/sampler.hpp"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

#include "sim/random.hpp"

namespace ddpsim::models {
namespace {

// Keeps sampler draws apart from any other consumer of the seed.
constexpr std::uint64_t kSamplerStream = 0x53414d504c455253ULL;  // "SAMPLERS"

void check(const SamplerConfig& c) {
  if (c.dataset_size < 1) throw std::invalid_argument("dataset size must be at least 1");
  if (c.world_size < 1) throw std::invalid_argument("world size must be at least 1");
}

}  // namespace

std::int64_t num_samples(const SamplerConfig& c) {
  check(c);
  const std::int64_t w = c.world_size;
  if (c.drop_last && c.dataset_size % w != 0) return c.dataset_size / w;
  return (c.dataset_size + w - 1) / w;
}

std::int64_t total_size(const SamplerConfig& c) { return num_samples(c) * c.world_size; }

std::vector<std::int64_t> epoch_order(const SamplerConfig& c, std::int64_t epoch) {
  const std::int64_t n = c.dataset_size;
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), std::int64_t{0});
  if (c.shuffle) {
    sim::Rng rng = sim::Rng::for_stream(c.seed + static_cast<std::uint64_t>(epoch), {kSamplerStream});
    for (std::int64_t i = n - 1; i > 0; --i) {
      // Unbiased bounded draw: reject the top sliver that would favour small values.
      const auto bound = static_cast<std::uint64_t>(i + 1);
      const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
      std::uint64_t x;
      do {
        x = rng.next_u64();
      } while (x >= limit);
      const auto j = static_cast<std::size_t>(x % bound);
      std::swap(idx[static_cast<std::size_t>(i)], idx[j]);
    }
  }
  const auto total = static_cast<std::size_t>(total_size(c));
  if (total <= idx.size()) {
    idx.resize(total);  // drop_last: truncate
  } else {
    for (std::size_t k = 0; idx.size() < total; ++k) idx.push_back(idx[k]);  // pad by tiling from the start
  }
  return idx;
}

std::vector<std::int64_t> rank_indices(const SamplerConfig& c, std::int64_t epoch, int rank) {
  if (rank < 0 || rank >= c.world_size) throw std::out_of_range("rank out of range");
  const std::vector<std::int64_t> all = epoch_order(c, epoch);
  std::vector<std::int64_t> out;
  for (std::size_t i = static_cast<std::size_t>(rank); i < all.size(); i += static_cast<std::size_t>(c.world_size)) {
    out.push_back(all[i]);
  }
  return out;
}

SamplerAudit audit_sampler(const SamplerConfig& c, std::int64_t batch_size, int epochs, bool set_epoch) {
  check(c);
  if (batch_size < 1) throw std::invalid_argument("batch size must be at least 1");
  if (epochs < 1) throw std::invalid_argument("at least one epoch is needed");
  SamplerAudit audit{c, batch_size, {}, {}};
  std::vector<std::int64_t> previous;
  for (int e = 0; e < epochs; ++e) {
    const std::int64_t effective = set_epoch ? e : 0;
    const std::vector<std::int64_t> order = epoch_order(c, effective);
    EpochAudit ea;
    ea.epoch_seed = static_cast<std::int64_t>(c.seed) + effective;
    std::vector<int> seen(static_cast<std::size_t>(c.dataset_size), 0);
    for (int r = 0; r < c.world_size; ++r) {
      RankEpoch re;
      for (std::size_t i = static_cast<std::size_t>(r); i < order.size(); i += static_cast<std::size_t>(c.world_size)) {
        re.ids.push_back(order[i]);
        ++seen[static_cast<std::size_t>(order[i])];
      }
      const auto n = static_cast<std::int64_t>(re.ids.size());
      re.batches = (n + batch_size - 1) / batch_size;
      re.last_batch_size = n == 0 ? 0 : n - (re.batches - 1) * batch_size;
      ea.ranks.push_back(std::move(re));
    }
    for (std::int64_t id = 0; id < c.dataset_size; ++id) {
      if (seen[static_cast<std::size_t>(id)] > 1) ea.duplicates.push_back(id);
      if (seen[static_cast<std::size_t>(id)] == 0) ea.omissions.push_back(id);
    }
    ea.same_order_as_previous = e > 0 && order == previous;
    previous = order;
    audit.epochs.push_back(std::move(ea));
  }
  if (!set_epoch && c.shuffle && epochs > 1) {
    audit.warnings.push_back(
        "set_epoch() is never called: every epoch repeats epoch 0's order. Call sampler.set_epoch(epoch) at the "
        "start of each epoch.");
  }
  const EpochAudit& first = audit.epochs.front();
  for (const RankEpoch& re : first.ranks) {
    if (re.batches != first.ranks.front().batches) {
      audit.warnings.push_back(
          "ranks get different numbers of batches: the rank with more blocks in an all-reduce the others never "
          "issue (hang). Use drop_last, or torch.distributed.algorithms.Join.");
      break;
    }
  }
  if (!first.duplicates.empty()) {
    audit.warnings.push_back(fmt::format(
        "{} example(s) are seen twice per epoch: padding to a multiple of {} ranks (drop_last=false) repeats them on "
        "ranks {}..{}.",
        first.duplicates.size(), c.world_size, c.dataset_size % c.world_size, c.world_size - 1));
  }
  if (!first.omissions.empty()) {
    audit.warnings.push_back(fmt::format("{} example(s) are never seen per epoch: drop_last truncates to {}.",
                                         first.omissions.size(), total_size(c)));
  }
  return audit;
}

}  // namespace ddpsim::models
