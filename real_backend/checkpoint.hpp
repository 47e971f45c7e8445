#pragma once
// The trainer's complete state, checkpointed by rank 0 every K steps:
// atomically (temporary file, fsync, rename, fsync of the directory), with a
// SHA-256 checksum, keeping the newest few. Resume takes the newest file that
// passes its checksum and says why it skipped any other (last known good).
//
// File layout (little-endian): "DDPSIMCK", u64 header length, header JSON,
// parameters (fp32), momentum (fp32), SHA-256 of everything before it.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddpsim::real {

struct TrainState {
  std::vector<float> parameters;
  std::vector<float> momentum;               ///< SGD's velocity
  std::int64_t step = 0;                     ///< optimizer steps taken
  int epoch = 0;                             ///< the epoch in progress
  int steps_in_epoch = 0;                    ///< steps taken in it
  bool elastic_epoch = false;                ///< its partition came from an elastic resume
  int world_size = 1;                        ///< of the run that wrote it
  /// The only randomness: the data order is epoch_order(seed, epoch) and example
  /// `id` is synthetic_example(seed, id), so (seed, epoch) is the RNG state.
  std::uint64_t seed = 0;
  std::vector<std::int64_t> epoch_consumed;  ///< example IDs consumed so far in the epoch, all ranks
  /// An FSDP manifest's: the SHA-256 (hex) of each rank's shard file, rank 0
  /// first (fsdp_checkpoint.hpp); empty in every other file.
  std::vector<std::string> shards;
};

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string encode_checkpoint(const TrainState& state);
/// Throws CheckpointError naming `path` and what is wrong (size, magic, checksum, header).
TrainState decode_checkpoint(std::string_view bytes, const std::string& path);

/// Entries of `dir` named `prefix`, a step of 1 to 18 digits, `suffix`:
/// directories, or regular files, as asked; the highest step first.
std::vector<std::pair<std::int64_t, std::filesystem::path>> numbered_entries(const std::string& dir, const std::string& prefix,
                                                                             const std::string& suffix, bool directories);

/// Writes `bytes` to `path` atomically: a temporary file, fsync, rename, fsync of the directory.
void write_atomically(const std::string& path, std::string_view bytes);

/// Writes dir/ckpt-<step>.bin atomically and deletes all but the newest `keep`. Returns the path.
std::string write_checkpoint(const std::string& dir, const TrainState& state, int keep);

struct LoadedCheckpoint {
  std::optional<TrainState> state;    ///< none: no valid checkpoint in the directory
  std::string path;
  std::vector<std::string> messages;  ///< one per checkpoint skipped, and which one was taken
};
/// The newest checkpoint in `dir` that passes its checksum.
LoadedCheckpoint load_newest_valid(const std::string& dir);

}  // namespace ddpsim::real
