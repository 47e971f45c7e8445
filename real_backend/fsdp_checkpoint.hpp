#pragma once
// FSDP's sharded state and its checkpoints. Each unit's flat parameter
// (registration order, unpadded `numel` floats) is padded to a multiple of
// the world size W and split into W shards of ceil(numel / W) floats, as
// FlatParamHandle shards it; a rank holds its shard of every unit,
// concatenated. The optimizer's momentum is sharded the same way.
//
// A checkpoint is a directory dir/fsdp-<step>/ on a file system every rank
// sees (as torch.distributed.checkpoint's FileSystemWriter assumes):
//   rank<r>.bin    rank r's shards (parameters, momentum) and the position,
//                  in checkpoint.hpp's format (magic, header, SHA-256);
//   manifest.bin   written by rank 0 after every shard: the position, the
//                  world size and each shard file's SHA-256 (as many as the
//                  shard group has ranks), in the same format.
// Every file is written atomically. A checkpoint is complete when its
// manifest and every shard it names pass their checksums; resume takes the
// newest complete one and reshards it to the world size it resumes on.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "real_backend/checkpoint.hpp"

namespace ddpsim::real {

/// A unit's flat parameter within the full parameter vector.
struct UnitLayout {
  std::size_t offset = 0;
  std::size_t numel = 0;
};

/// Floats of each rank's shard of a unit of `numel` floats over `world` ranks: ceil(numel / world).
std::size_t shard_size(std::size_t numel, int world);
/// Floats of a rank's shards of every unit, concatenated.
std::size_t shards_size(const std::vector<UnitLayout>& units, int world);
/// Rank `rank`'s shards of every unit of `full`, concatenated; the padding is zero.
std::vector<float> shard_of(const std::vector<float>& full, const std::vector<UnitLayout>& units, int world, int rank);
/// The full vector (`total` floats) from the concatenated shards of each of
/// shards.size() ranks: the inverse of shard_of. std::invalid_argument on a size mismatch.
std::vector<float> unshard(const std::vector<std::vector<float>>& shards, const std::vector<UnitLayout>& units,
                           std::size_t total);

/// Writes dir/fsdp-<step>/rank<r>.bin (`shard`: this rank's tensors and the position).
void write_shard(const std::string& dir, const TrainState& shard, int rank);
/// Rank 0, after write_shard of shards 0 to `shards` - 1 (the shard group's
/// size: W, or a node's ranks under hybrid sharding, whose replicas hold
/// the same shards): reads them back for their digests, writes the manifest
/// (`position`, with the run's world size), and deletes all but the newest
/// `keep` checkpoints. Returns the checkpoint's directory.
std::string write_manifest(const std::string& dir, const TrainState& position, int shards, int keep);

struct ShardedCheckpoint {
  std::string path;           ///< dir/fsdp-<step>
  TrainState manifest;        ///< the position; shards: the digests
  std::vector<TrainState> shards;  ///< rank 0 first
};
/// The checkpoint in `path` with every file checked (CheckpointError naming the file otherwise).
ShardedCheckpoint read_sharded(const std::string& path);

struct LoadedSharded {
  std::optional<ShardedCheckpoint> checkpoint;  ///< none: no complete checkpoint in the directory
  std::vector<std::string> messages;            ///< one per checkpoint skipped, and which one was taken
};
/// The newest complete checkpoint in `dir`.
LoadedSharded load_newest_sharded(const std::string& dir);

}  // namespace ddpsim::real
