#include "real_backend/checkpoint.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using ddpsim::real::CheckpointError;
using ddpsim::real::TrainState;
namespace fs = std::filesystem;

TrainState sample_state(std::int64_t step) {
  TrainState s;
  s.parameters = {1.5f, -2.25f, 3.0e-8f, static_cast<float>(step)};
  s.momentum = {0.125f, 0.0f, -1.0f, 7.0f};
  s.step = step;
  s.epoch = 2;
  s.steps_in_epoch = 3;
  s.elastic_epoch = true;
  s.world_size = 4;
  s.seed = 0xfeedULL;
  s.epoch_consumed = {5, 9, 1};
  return s;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ddpsim_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

void flip_byte(const fs::path& file, std::streamoff at) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.get(c);
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x20));
}

}  // namespace

TEST_CASE("a checkpoint round-trips every field bit for bit") {
  const TrainState s = sample_state(12);
  const TrainState t = ddpsim::real::decode_checkpoint(ddpsim::real::encode_checkpoint(s), "mem");
  CHECK(t.parameters == s.parameters);
  CHECK(t.momentum == s.momentum);
  CHECK(t.step == 12);
  CHECK(t.epoch == 2);
  CHECK(t.steps_in_epoch == 3);
  CHECK(t.elastic_epoch);
  CHECK(t.world_size == 4);
  CHECK(t.seed == 0xfeedULL);
  CHECK(t.epoch_consumed == s.epoch_consumed);
}

TEST_CASE("damaged checkpoints are rejected with the reason") {
  const std::string good = ddpsim::real::encode_checkpoint(sample_state(1));
  SUBCASE("one flipped bit in the tensors") {
    std::string bad = good;
    bad[bad.size() - 40] = static_cast<char>(bad[bad.size() - 40] ^ 1);
    CHECK_THROWS_WITH_AS(ddpsim::real::decode_checkpoint(bad, "f"), doctest::Contains("checksum mismatch"), CheckpointError);
  }
  SUBCASE("truncated") {
    CHECK_THROWS_WITH_AS(ddpsim::real::decode_checkpoint(good.substr(0, good.size() - 1), "f"),
                         doctest::Contains("checksum mismatch"), CheckpointError);
    CHECK_THROWS_WITH_AS(ddpsim::real::decode_checkpoint(good.substr(0, 10), "f"), doctest::Contains("too short"),
                         CheckpointError);
  }
  SUBCASE("not a checkpoint") {
    std::string bad = good;
    bad[0] = 'X';
    CHECK_THROWS_WITH_AS(ddpsim::real::decode_checkpoint(bad, "f"), doctest::Contains("bad magic"), CheckpointError);
  }
}

TEST_CASE("write_checkpoint keeps the newest K and leaves no temporary file") {
  const fs::path dir = fresh_dir("keep");
  for (int step = 2; step <= 10; step += 2) ddpsim::real::write_checkpoint(dir.string(), sample_state(step), 3);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"ckpt-00000006.bin", "ckpt-00000008.bin", "ckpt-00000010.bin"});
  fs::remove_all(dir);
}

TEST_CASE("resume takes the newest valid checkpoint and falls back past a corrupt one") {
  const fs::path dir = fresh_dir("fallback");
  SUBCASE("empty directory: start from scratch, and say so") {
    const auto loaded = ddpsim::real::load_newest_valid(dir.string());
    CHECK_FALSE(loaded.state);
    REQUIRE(loaded.messages.size() == 1);
    CHECK(loaded.messages[0].find("no valid checkpoint") != std::string::npos);
  }
  SUBCASE("newest corrupt") {
    ddpsim::real::write_checkpoint(dir.string(), sample_state(4), 3);
    const std::string newest = ddpsim::real::write_checkpoint(dir.string(), sample_state(8), 3);
    flip_byte(newest, 30);
    const auto loaded = ddpsim::real::load_newest_valid(dir.string());
    REQUIRE(loaded.state);
    CHECK(loaded.state->step == 4);
    REQUIRE(loaded.messages.size() == 2);
    CHECK(loaded.messages[0].find("ckpt-00000008.bin: checksum mismatch") != std::string::npos);
    CHECK(loaded.messages[0].find("falling back") != std::string::npos);
    CHECK(loaded.messages[1].find("resuming from") != std::string::npos);
  }
  SUBCASE("all intact: the newest wins") {
    ddpsim::real::write_checkpoint(dir.string(), sample_state(4), 3);
    ddpsim::real::write_checkpoint(dir.string(), sample_state(8), 3);
    CHECK(ddpsim::real::load_newest_valid(dir.string()).state->step == 8);
  }
  fs::remove_all(dir);
}
