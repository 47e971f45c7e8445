// FSDP's shards and sharded checkpoints (fsdp_checkpoint.hpp), by hand.

#include "real_backend/fsdp_checkpoint.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

using ddpsim::real::TrainState;
using ddpsim::real::UnitLayout;
namespace fs = std::filesystem;

// Two units: 5 floats (weights 0..4) and 2 (5, 6).
const std::vector<UnitLayout> kUnits = {{0, 5}, {5, 2}};
const std::vector<float> kFull = {0, 1, 2, 3, 4, 5, 6};

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ddpsim_fsdp_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

// Writes a complete checkpoint of kFull at `step` over `world` ranks.
std::string write_all(const fs::path& dir, std::int64_t step, int world, int keep = 3) {
  TrainState position;
  position.step = step;
  position.world_size = world;
  position.seed = 7;
  for (int r = 0; r < world; ++r) {
    TrainState shard = position;
    shard.parameters = ddpsim::real::shard_of(kFull, kUnits, world, r);
    shard.momentum = shard.parameters;
    ddpsim::real::write_shard(dir.string(), shard, r);
  }
  return ddpsim::real::write_manifest(dir.string(), position, world, keep);
}

}  // namespace

TEST_CASE("each unit is padded to a multiple of W and split in rank order, as FlatParamHandle shards") {
  // W = 2: unit 0 pads 5 to 6 (shards of 3), unit 1 is 2 (shards of 1).
  CHECK(ddpsim::real::shard_of(kFull, kUnits, 2, 0) == std::vector<float>{0, 1, 2, 5});
  CHECK(ddpsim::real::shard_of(kFull, kUnits, 2, 1) == std::vector<float>{3, 4, 0, 6});
  // W = 3: 5 -> 6 (2 each), 2 -> 3 (1 each): rank 2 holds unit 0's 4 and a pad, unit 1's pad.
  CHECK(ddpsim::real::shard_of(kFull, kUnits, 3, 2) == std::vector<float>{4, 0, 0});
  CHECK(ddpsim::real::shards_size(kUnits, 4) == 3);
}

TEST_CASE("unsharding inverts sharding on any world size, so a checkpoint reshards") {
  for (int world = 1; world <= 8; ++world) {
    std::vector<std::vector<float>> shards;
    for (int r = 0; r < world; ++r) shards.push_back(ddpsim::real::shard_of(kFull, kUnits, world, r));
    CHECK(ddpsim::real::unshard(shards, kUnits, kFull.size()) == kFull);
  }
  std::vector<std::vector<float>> wrong = {{0, 1, 2}, {3, 4, 0, 6}};
  CHECK_THROWS_AS(ddpsim::real::unshard(wrong, kUnits, kFull.size()), std::invalid_argument);
}

TEST_CASE("a sharded checkpoint: the newest complete one is taken, an incomplete or damaged one skipped") {
  const fs::path dir = fresh_dir("resume");
  SUBCASE("complete: every shard, the manifest naming their digests") {
    write_all(dir, 4, 2);
    const auto loaded = ddpsim::real::load_newest_sharded(dir.string());
    REQUIRE(loaded.checkpoint);
    CHECK(loaded.checkpoint->manifest.step == 4);
    CHECK(loaded.checkpoint->manifest.shards.size() == 2);
    REQUIRE(loaded.checkpoint->shards.size() == 2);
    CHECK(loaded.checkpoint->shards[1].parameters == std::vector<float>{3, 4, 0, 6});
  }
  SUBCASE("a shard changed after the manifest was written: the previous checkpoint") {
    write_all(dir, 4, 2);
    const std::string newest = write_all(dir, 8, 2);
    TrainState other;
    other.step = 8;
    other.world_size = 2;
    other.seed = 7;
    other.parameters = {9, 9, 9, 9};
    other.momentum = other.parameters;
    ddpsim::real::write_shard(dir.string(), other, 1);  // valid on its own, not the one the manifest names
    const auto loaded = ddpsim::real::load_newest_sharded(dir.string());
    REQUIRE(loaded.checkpoint);
    CHECK(loaded.checkpoint->manifest.step == 4);
    REQUIRE(loaded.messages.size() == 2);
    CHECK(loaded.messages[0].find("rank1.bin: SHA-256") != std::string::npos);
    CHECK(loaded.messages[0].find("falling back") != std::string::npos);
  }
  SUBCASE("shards without a manifest (killed before it): skipped") {
    write_all(dir, 4, 2);
    TrainState shard;
    shard.step = 6;
    shard.world_size = 2;
    shard.parameters = {1, 2, 3, 4};
    shard.momentum = shard.parameters;
    ddpsim::real::write_shard(dir.string(), shard, 0);
    const auto loaded = ddpsim::real::load_newest_sharded(dir.string());
    REQUIRE(loaded.checkpoint);
    CHECK(loaded.checkpoint->manifest.step == 4);
    CHECK(loaded.messages[0].find("manifest.bin: missing") != std::string::npos);
  }
  SUBCASE("a flipped byte in a shard: its own checksum and the manifest's both catch it") {
    write_all(dir, 4, 2);
    const std::string newest = write_all(dir, 8, 2);
    {
      std::fstream f(fs::path(newest) / "rank0.bin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(40);
      f.put('\x7f');
    }
    const auto loaded = ddpsim::real::load_newest_sharded(dir.string());
    REQUIRE(loaded.checkpoint);
    CHECK(loaded.checkpoint->manifest.step == 4);
  }
  SUBCASE("none: start from scratch, and say so") {
    const auto loaded = ddpsim::real::load_newest_sharded(dir.string());
    CHECK_FALSE(loaded.checkpoint);
    CHECK(loaded.messages.back().find("no complete FSDP checkpoint") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("write_manifest keeps the newest K checkpoints") {
  const fs::path dir = fresh_dir("keep");
  for (int step = 2; step <= 10; step += 2) write_all(dir, step, 2, 2);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"fsdp-00000008", "fsdp-00000010"});
  fs::remove_all(dir);
}
