#include "formats/overlap_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/measured_run.hpp"

using namespace ddpsim;

namespace {

std::string write_overlap(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "ddpsim_overlap_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string overlap_doc(const std::string& contention, const std::string& format = "ddpsim-overlap-1") {
  return R"({"format": ")" + format +
         R"(", "backend": "gloo", "device": "cpu", "world_size": 2, "threads": 1, "sizes": [{"bytes": 1048576, "chunk_ms": 0.03, "allreduce_ms": 1, "both_ms": 2, "chunks_beside": 40}], )"
         R"("contention": )" +
         contention + "}";
}

// The FormatError's key, or "none" when the file reads.
std::string refused_key(const std::string& text) {
  try {
    formats::read_overlap(write_overlap("bad.json", text));
  } catch (const formats::FormatError& e) {
    return e.key();
  }
  return "none";
}

}  // namespace

TEST_CASE("an overlap measurement: the one ddpsim_torch overlap wrote here reads back") {
  const formats::OverlapMeasurement m = formats::read_overlap(std::string(DDPSIM_MEASURED_DIR) + "/overlap_gloo_w2.json");
  CHECK(m.backend == "gloo");
  CHECK(m.device == "cpu");
  CHECK(m.world_size == 2);
  CHECK(m.threads == 1);
  CHECK(m.sizes.size() == 2);
  CHECK(m.compute_slowdown > 0);
  CHECK(m.comm_slowdown > 0);
}

TEST_CASE("an overlap measurement: the figures in the file, or refused naming the key") {
  const formats::OverlapMeasurement m =
      formats::read_overlap(write_overlap("ok.json", overlap_doc(R"({"compute_slowdown": 0.25, "comm_slowdown": 1.5})")));
  CHECK(m.compute_slowdown == 0.25);
  CHECK(m.comm_slowdown == 1.5);
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": 0.25, "comm_slowdown": -1})")) == "contention.comm_slowdown");
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": 2000, "comm_slowdown": 1})")) == "contention.compute_slowdown");
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": 0, "comm_slowdown": 2000})")) == "none");
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": 0, "comm_slowdown": 2e6})")) == "contention.comm_slowdown");
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": "x", "comm_slowdown": 1})")) == "contention.compute_slowdown");
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": 0.25})")) == "comm_slowdown");
  CHECK(refused_key(overlap_doc(R"({"compute_slowdown": 0, "comm_slowdown": 0})", "ddpsim-sweep")) == "format");
  CHECK(refused_key("{") == "");
  CHECK_THROWS_AS(formats::read_overlap("/nonexistent/overlap.json"), formats::FormatError);
}

TEST_CASE("an overlap measurement: the pair pools the sizes, as the Python writer pools them") {
  // The case python/tests/test_pure.py pools: c = (4 + 30 + 12) / (1 + 20 + 10) - 1, s = (4 + 30) / (2 + 20) - 1.
  const std::vector<formats::OverlapSize> sizes = {{1 << 20, 1, 1, 4, 2}, {20 << 20, 1, 20, 30, 20}, {10 << 20, 1, 10, 12, 0}};
  const auto pair = formats::pooled_slowdowns(sizes);
  REQUIRE(pair);
  CHECK(pair->compute == doctest::Approx(34.0 / 22 - 1));
  CHECK(pair->comm == doctest::Approx(46.0 / 31 - 1));
  CHECK_FALSE(formats::pooled_slowdowns({sizes[2]}));
  // The file ddpsim_torch overlap wrote: its pair is the one pooled from its sizes.
  const formats::OverlapMeasurement m = formats::read_overlap(std::string(DDPSIM_MEASURED_DIR) + "/overlap_gloo_w2.json");
  const auto again = formats::pooled_slowdowns(m.sizes);
  REQUIRE(again);
  CHECK(again->compute == doctest::Approx(m.compute_slowdown).epsilon(1e-9));
  CHECK(again->comm == doctest::Approx(m.comm_slowdown).epsilon(1e-9));
  // Written and read back.
  formats::OverlapMeasurement w = m;
  w.backend = "mpi";
  const formats::OverlapMeasurement back = formats::read_overlap(write_overlap("w.json", formats::to_json(w, "here")));
  CHECK(back.backend == "mpi");
  CHECK(back.sizes.size() == m.sizes.size());
  CHECK(back.sizes[1].both_ms == m.sizes[1].both_ms);
  CHECK(back.comm_slowdown == m.comm_slowdown);
}
