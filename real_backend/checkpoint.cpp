#include "real_backend/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <cctype>
#include <sstream>

#include "sim/digest.hpp"

namespace ddpsim::real {
namespace {

static_assert(std::endian::native == std::endian::little, "checkpoints are written little-endian");
constexpr std::string_view kMagic = "DDPSIMCK";
constexpr int kVersion = 1;
namespace fs = std::filesystem;

void append_floats(std::string& out, const std::vector<float>& v) {
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::vector<float> take_floats(std::string_view& in, std::size_t n, const std::string& path) {
  if (in.size() < n * sizeof(float)) throw CheckpointError(path + ": truncated tensor data");
  std::vector<float> v(n);
  if (n > 0) std::memcpy(v.data(), in.data(), n * sizeof(float));  // an FSDP manifest holds no tensors
  in.remove_prefix(n * sizeof(float));
  return v;
}

// write(2) until done, fsync, close: a file that is either whole on disk or reported.
void write_durably(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw CheckpointError(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw CheckpointError(fmt::format("cannot write {}: {}", path, std::strerror(err)));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) throw CheckpointError(fmt::format("cannot sync {}: {}", path, std::strerror(errno)));
}

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw CheckpointError(fmt::format("cannot open directory {}: {}", dir, std::strerror(errno)));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw CheckpointError(fmt::format("cannot sync directory {}: {}", dir, std::strerror(errno)));
}

// ckpt-<step>.bin files of `dir`, newest (highest step) first.
std::vector<std::pair<std::int64_t, fs::path>> list_checkpoints(const std::string& dir) {
  return numbered_entries(dir, "ckpt-", ".bin", false);
}

}  // namespace

std::vector<std::pair<std::int64_t, fs::path>> numbered_entries(const std::string& dir, const std::string& prefix,
                                                                const std::string& suffix, bool directories) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() != directories || (!directories && !entry.is_regular_file())) continue;
    if (name.size() <= prefix.size() + suffix.size() || name.size() > prefix.size() + suffix.size() + 18) continue;
    if (name.compare(0, prefix.size(), prefix) != 0 || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) continue;
    found.emplace_back(std::stoll(digits), entry.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  return found;
}

std::string encode_checkpoint(const TrainState& s) {
  nlohmann::ordered_json header = {
      {"version", kVersion},           {"step", s.step},
      {"epoch", s.epoch},              {"steps_in_epoch", s.steps_in_epoch},
      {"elastic_epoch", s.elastic_epoch}, {"world_size", s.world_size},
      {"seed", s.seed},                {"parameters", s.parameters.size()},
      {"momentum", s.momentum.size()}, {"epoch_consumed", s.epoch_consumed}};
  if (!s.shards.empty()) header["shards"] = s.shards;
  const std::string text = header.dump();
  std::string out(kMagic);
  const std::uint64_t length = text.size();
  out.append(reinterpret_cast<const char*>(&length), sizeof length);
  out += text;
  append_floats(out, s.parameters);
  append_floats(out, s.momentum);
  const sim::Sha256 digest = sim::sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

TrainState decode_checkpoint(std::string_view bytes, const std::string& path) {
  constexpr std::size_t kDigest = sizeof(sim::Sha256);
  if (bytes.size() < kMagic.size() + sizeof(std::uint64_t) + kDigest) {
    throw CheckpointError(fmt::format("{}: {} bytes is too short to be a checkpoint", path, bytes.size()));
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) throw CheckpointError(path + ": not a ddpsim checkpoint (bad magic)");
  std::string_view body = bytes.substr(0, bytes.size() - kDigest);
  sim::Sha256 stored{};
  std::memcpy(stored.data(), bytes.data() + body.size(), kDigest);
  const sim::Sha256 actual = sim::sha256(body);
  if (stored != actual) {
    throw CheckpointError(fmt::format("{}: checksum mismatch (stored {}, computed {})", path,
                                      sim::to_hex(stored).substr(0, 16), sim::to_hex(actual).substr(0, 16)));
  }
  body.remove_prefix(kMagic.size());
  std::uint64_t length = 0;
  std::memcpy(&length, body.data(), sizeof length);
  body.remove_prefix(sizeof length);
  if (length > body.size()) throw CheckpointError(path + ": header length past the end of the file");
  TrainState s;
  try {
    const auto h = nlohmann::json::parse(body.substr(0, length));
    if (h.at("version").get<int>() != kVersion) throw CheckpointError(fmt::format("{}: version {} (expected {})", path, h.at("version").dump(), kVersion));
    s.step = h.at("step").get<std::int64_t>();
    s.epoch = h.at("epoch").get<int>();
    s.steps_in_epoch = h.at("steps_in_epoch").get<int>();
    s.elastic_epoch = h.at("elastic_epoch").get<bool>();
    s.world_size = h.at("world_size").get<int>();
    s.seed = h.at("seed").get<std::uint64_t>();
    s.epoch_consumed = h.at("epoch_consumed").get<std::vector<std::int64_t>>();
    if (h.contains("shards")) s.shards = h.at("shards").get<std::vector<std::string>>();
    body.remove_prefix(length);
    s.parameters = take_floats(body, h.at("parameters").get<std::size_t>(), path);
    s.momentum = take_floats(body, h.at("momentum").get<std::size_t>(), path);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(fmt::format("{}: bad header: {}", path, e.what()));
  }
  if (!body.empty()) throw CheckpointError(fmt::format("{}: {} unexpected bytes after the tensors", path, body.size()));
  return s;
}

void write_atomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp";
  write_durably(tmp, bytes);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw CheckpointError(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
  sync_directory(fs::path(path).parent_path().string());
}

std::string write_checkpoint(const std::string& dir, const TrainState& state, int keep) {
  if (keep < 1) throw std::invalid_argument("keep at least one checkpoint");
  fs::create_directories(dir);
  const std::string path = (fs::path(dir) / fmt::format("ckpt-{:08}.bin", state.step)).string();
  write_atomically(path, encode_checkpoint(state));
  std::error_code ec;
  const auto all = list_checkpoints(dir);
  for (std::size_t i = static_cast<std::size_t>(keep); i < all.size(); ++i) fs::remove(all[i].second, ec);
  return path;
}

LoadedCheckpoint load_newest_valid(const std::string& dir) {
  LoadedCheckpoint out;
  for (const auto& [step, path] : list_checkpoints(dir)) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    try {
      out.state = decode_checkpoint(buffer.str(), path.string());
      out.path = path.string();
      out.messages.push_back(fmt::format("resuming from {} (step {}, epoch {}, {} steps into it, written by {} rank(s))",
                                         out.path, out.state->step, out.state->epoch, out.state->steps_in_epoch,
                                         out.state->world_size));
      return out;
    } catch (const CheckpointError& e) {
      out.messages.push_back(fmt::format("skipping {}; falling back to the previous checkpoint", e.what()));
    }
  }
  out.messages.push_back(fmt::format("no valid checkpoint in {}: starting from step 0", dir));
  return out;
}

}  // namespace ddpsim::real
