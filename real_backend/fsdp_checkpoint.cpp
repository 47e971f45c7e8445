#include "real_backend/fsdp_checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/digest.hpp"

namespace ddpsim::real {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(fmt::format("{}: missing", path.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

fs::path checkpoint_path(const std::string& dir, std::int64_t step) { return fs::path(dir) / fmt::format("fsdp-{:08}", step); }
fs::path shard_path(const fs::path& checkpoint, int rank) { return checkpoint / fmt::format("rank{}.bin", rank); }

// fsdp-<step> directories of `dir`, newest first.
std::vector<std::pair<std::int64_t, fs::path>> list_sharded(const std::string& dir) {
  return numbered_entries(dir, "fsdp-", "", true);
}

}  // namespace

std::size_t shard_size(std::size_t numel, int world) {
  const auto w = static_cast<std::size_t>(world);
  return (numel + w - 1) / w;
}

std::size_t shards_size(const std::vector<UnitLayout>& units, int world) {
  std::size_t n = 0;
  for (const UnitLayout& u : units) n += shard_size(u.numel, world);
  return n;
}

std::vector<float> shard_of(const std::vector<float>& full, const std::vector<UnitLayout>& units, int world, int rank) {
  std::vector<float> out;
  out.reserve(shards_size(units, world));
  for (const UnitLayout& u : units) {
    const std::size_t s = shard_size(u.numel, world), begin = s * static_cast<std::size_t>(rank);
    for (std::size_t i = begin; i < begin + s; ++i) out.push_back(i < u.numel ? full.at(u.offset + i) : 0.0f);
  }
  return out;
}

std::vector<float> unshard(const std::vector<std::vector<float>>& shards, const std::vector<UnitLayout>& units,
                           std::size_t total) {
  const int world = static_cast<int>(shards.size());
  std::vector<float> full(total, 0.0f);
  for (int r = 0; r < world; ++r) {
    const std::vector<float>& mine = shards[static_cast<std::size_t>(r)];
    if (mine.size() != shards_size(units, world)) {
      throw std::invalid_argument(fmt::format("rank {}'s shards hold {} floats; {} units over {} ranks need {}", r,
                                              mine.size(), units.size(), world, shards_size(units, world)));
    }
    std::size_t at = 0;
    for (const UnitLayout& u : units) {
      const std::size_t s = shard_size(u.numel, world), begin = s * static_cast<std::size_t>(r);
      for (std::size_t i = begin; i < begin + s && i < u.numel; ++i) full.at(u.offset + i) = mine[at + i - begin];
      at += s;
    }
  }
  return full;
}

void write_shard(const std::string& dir, const TrainState& shard, int rank) {
  const fs::path path = checkpoint_path(dir, shard.step);
  fs::create_directories(path);
  write_atomically(shard_path(path, rank).string(), encode_checkpoint(shard));
}

std::string write_manifest(const std::string& dir, const TrainState& position, int shards, int keep) {
  if (keep < 1) throw std::invalid_argument("keep at least one checkpoint");
  const fs::path path = checkpoint_path(dir, position.step);
  TrainState manifest = position;
  manifest.parameters.clear();
  manifest.momentum.clear();
  manifest.shards.clear();
  for (int r = 0; r < shards; ++r) manifest.shards.push_back(sim::to_hex(sim::sha256(read_bytes(shard_path(path, r)))));
  write_atomically((path / "manifest.bin").string(), encode_checkpoint(manifest));
  const auto all = list_sharded(dir);
  std::error_code ec;
  for (std::size_t i = static_cast<std::size_t>(keep); i < all.size(); ++i) fs::remove_all(all[i].second, ec);
  return path.string();
}

ShardedCheckpoint read_sharded(const std::string& path) {
  ShardedCheckpoint out;
  out.path = path;
  const fs::path manifest_file = fs::path(path) / "manifest.bin";
  out.manifest = decode_checkpoint(read_bytes(manifest_file), manifest_file.string());
  const TrainState& m = out.manifest;
  if (m.shards.empty() || m.shards.size() > static_cast<std::size_t>(std::max(m.world_size, 0))) {
    throw CheckpointError(fmt::format("{}: names {} shard(s) for world size {}", manifest_file.string(), m.shards.size(),
                                      m.world_size));
  }
  for (int r = 0; r < static_cast<int>(m.shards.size()); ++r) {
    const fs::path file = shard_path(path, r);
    const std::string bytes = read_bytes(file);
    const std::string digest = sim::to_hex(sim::sha256(bytes));
    if (digest != m.shards[static_cast<std::size_t>(r)]) {
      throw CheckpointError(fmt::format("{}: SHA-256 {} is not the manifest's {}", file.string(), digest.substr(0, 16),
                                        m.shards[static_cast<std::size_t>(r)].substr(0, 16)));
    }
    out.shards.push_back(decode_checkpoint(bytes, file.string()));
    if (out.shards.back().step != m.step) {
      throw CheckpointError(fmt::format("{}: step {}, the manifest's {}", file.string(), out.shards.back().step, m.step));
    }
  }
  return out;
}

LoadedSharded load_newest_sharded(const std::string& dir) {
  LoadedSharded out;
  for (const auto& [step, path] : list_sharded(dir)) {
    try {
      out.checkpoint = read_sharded(path.string());
      const TrainState& m = out.checkpoint->manifest;
      out.messages.push_back(fmt::format("resuming from {} (step {}, epoch {}, {} steps into it, {} shard(s) of {} rank(s))",
                                         path.string(), m.step, m.epoch, m.steps_in_epoch, m.shards.size(), m.world_size));
      return out;
    } catch (const CheckpointError& e) {
      out.messages.push_back(fmt::format("skipping {}; falling back to the previous checkpoint", e.what()));
    }
  }
  out.messages.push_back(fmt::format("no complete FSDP checkpoint in {}: starting from step 0", dir));
  return out;
}

}  // namespace ddpsim::real
