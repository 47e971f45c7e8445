#pragma once
// torch.utils.data.DistributedSampler: which example IDs each rank sees in
// each epoch, and an audit of duplicates, omissions and batch counts.
// Reference: ../shared/reference/ddp_semantics.md section 4.

#include <cstdint>
#include <string>
#include <vector>

namespace ddpsim::models {

struct SamplerConfig {
  std::int64_t dataset_size = 0;  ///< N examples, IDs 0..N-1
  int world_size = 1;
  bool shuffle = true;
  std::uint64_t seed = 0;  ///< the shuffle of epoch e is seeded with seed + e
  bool drop_last = false;  ///< truncate to a multiple of W instead of padding
};

/// ceil(N / W), or floor(N / W) with drop_last.
std::int64_t num_samples(const SamplerConfig& c);
/// num_samples * W.
std::int64_t total_size(const SamplerConfig& c);

/// The epoch's index list before striding: a permutation of 0..N-1 (shuffle)
/// or 0..N-1, padded by repeating from its start, or truncated, to total_size.
/// The permutation is ddpsim's own Fisher-Yates over its seeded generator: the
/// same partition rules as PyTorch, not bit-identical to torch.randperm.
std::vector<std::int64_t> epoch_order(const SamplerConfig& c, std::int64_t epoch);
/// indices[rank : total_size : W]
std::vector<std::int64_t> rank_indices(const SamplerConfig& c, std::int64_t epoch, int rank);

struct RankEpoch {
  std::vector<std::int64_t> ids;  ///< in the order the rank consumes them
  std::int64_t batches = 0;
  std::int64_t last_batch_size = 0;
};

struct EpochAudit {
  std::int64_t epoch_seed = 0;              ///< seed + epoch, or seed without set_epoch
  std::vector<RankEpoch> ranks;
  std::vector<std::int64_t> duplicates;     ///< IDs seen more than once (each listed once)
  std::vector<std::int64_t> omissions;      ///< IDs never seen
  bool same_order_as_previous = false;
};

struct SamplerAudit {
  SamplerConfig config;
  std::int64_t batch_size = 0;
  std::vector<EpochAudit> epochs;
  std::vector<std::string> warnings;
};

/// Simulates `epochs` epochs of DistributedSampler + DataLoader(batch_size).
/// Without set_epoch every epoch reuses epoch 0's shuffle.
SamplerAudit audit_sampler(const SamplerConfig& c, std::int64_t batch_size, int epochs, bool set_epoch);

}  // namespace ddpsim::models
