#include "formats/measured_run.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace ddpsim;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "ddpsim_formats_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("ddpsim-real's files read back and write out byte for byte (an H200 run and its sweep)") {
  const std::string train = std::string(DDPSIM_H200_DIR) + "/train_w1.rank0.json";
  const formats::RankLog log = formats::read_rank_log(train);
  CHECK(log.world_size == 1);
  CHECK(log.device.find("H200") != std::string::npos);
  REQUIRE(!log.steps.empty());
  CHECK(log.steps[0].compute_ms.has_value());
  CHECK(log.steps[0].backward_end_clock_ms.has_value());
  CHECK(formats::to_json(log) == slurp(train));
  const std::string sweep_path = std::string(DDPSIM_H200_DIR) + "/sweep_w1.json";
  const auto sweep = std::get<formats::CollectiveSweep>(formats::read_measured_file(sweep_path));
  CHECK(sweep.world_size == 1);
  REQUIRE(!sweep.rows.empty());
  CHECK(formats::to_json(sweep) == slurp(sweep_path));
}

TEST_CASE("ddpsim_torch measure's log: the ready order DDP saw reads back, and the file writes out again") {
  const std::string path = std::string(DDPSIM_MEASURED_DIR) + "/torch_mlp_w2.rank0.json";
  const formats::RankLog log = formats::read_rank_log(path);
  CHECK(log.gradient_ready_order ==
        std::vector<std::string>{"4.bias", "4.weight", "2.bias", "2.weight", "0.bias", "0.weight"});
  const formats::RankLog again = formats::read_rank_log(write_temp("torch.rank0.json", formats::to_json(log)));
  CHECK(again.gradient_ready_order == log.gradient_ready_order);
  // ddpsim-real's logs have none.
  CHECK(formats::read_rank_log(std::string(DDPSIM_MEASURED_DIR) + "/skew_w2.rank0.json").gradient_ready_order.empty());
}

TEST_CASE("fields later versions added are optional, and asking for an absent one names it") {
  const std::string path = std::string(DDPSIM_MEASURED_DIR) + "/skew_w2.rank0.json";
  const formats::RankLog log = formats::read_rank_log(path);
  CHECK(log.world_size == 2);
  CHECK(log.steps[1].backward_end_clock_ms == 100.0);
  CHECK_FALSE(log.steps[1].compute_ms.has_value());
  try {
    (void)log.need(&formats::MeasuredStep::compute_ms, "compute_ms", 1);
    FAIL("an absent field was given a value");
  } catch (const formats::FormatError& e) {
    CHECK(e.file() == path);
    CHECK(e.key() == "steps[1].compute_ms");
  }
  const std::vector<formats::RankLog> run = formats::read_run(std::string(DDPSIM_MEASURED_DIR) + "/skew_w2");
  REQUIRE(run.size() == 2);
  CHECK(run[1].rank == 1);
}

TEST_CASE("what is not a measured run is refused, naming the file and what is wrong") {
  const auto error_of = [](const std::string& text) -> std::string {
    const std::string path = write_temp("bad.json", text);
    try {
      (void)formats::read_measured_file(path);
    } catch (const formats::FormatError& e) {
      CHECK(e.file() == path);
      return e.what();
    }
    return "";
  };
  CHECK(error_of("{").find("JSON from ddpsim-real") == 0);
  CHECK(error_of("[1, 2]").find("an all-reduce sweep") == 0);
  CHECK(error_of(R"({"steps": []})").find("'world_size' not found") != std::string::npos);
  CHECK(error_of(R"({"world_size": 0, "steps": []})").find("a world size >= 1") != std::string::npos);
  CHECK(error_of(R"({"world_size": 1, "steps": [{"iteration": 0, "skipped": false}]})").find("'step_ms' not found") !=
        std::string::npos);
  CHECK(error_of(R"({"world_size": 2, "sweep": [{"bytes": 8}]})").find("'time_us' not found") != std::string::npos);
  CHECK(error_of(R"({"world_size": 1, "steps": [{"iteration": "x", "skipped": false, "step_ms": 1}]})")
            .find("ddpsim-real's JSON") == 0);
  // Integers out of range are refused, not converted (a fuzzer's 1e78-byte sweep row: undefined behaviour before).
  const std::string integer = "ddpsim-real's JSON: expected an integer from";
  CHECK(error_of(R"({"world_size": 1, "sweep": [{"bytes": 1e78, "time_us": 2}]})").find(integer) == 0);
  CHECK(error_of(R"({"world_size": 1e78, "steps": []})").find(integer) == 0);
  CHECK(error_of(R"({"world_size": 1, "steps": [{"iteration": 2.5, "skipped": false, "step_ms": 1}]})").find(integer) == 0);
  CHECK(error_of(R"({"world_size": 1, "steps": [], "epochs": [{"epoch": 0, "ids": [1, -1e300]}]})").find(integer) == 0);
  CHECK_THROWS_AS(formats::read_measured_file(std::string(DDPSIM_MEASURED_DIR) + "/sweep_huge_bytes.json"),
                  formats::FormatError);
  CHECK_THROWS_AS(formats::read_rank_log(std::string(DDPSIM_MEASURED_DIR) + "/sweep_w1_only.json"), formats::FormatError);
  CHECK_THROWS_AS(formats::read_rank_log("/nonexistent/run.rank0.json"), formats::FormatError);
}

TEST_CASE("a run on an emulated network keeps the network's check: each link's measured rate") {
  // ddpsim_torch measure --network 400mbit --slow-rank 1:0.5 (docs/emulated-network.md).
  const std::string path = std::string(DDPSIM_MEASURED_DIR) + "/torch_mlp_network_w2.rank0.json";
  const formats::RankLog log = formats::read_rank_log(path);
  REQUIRE(!log.network.empty());
  const nlohmann::json network = nlohmann::json::parse(log.network);
  CHECK(network.at("rate_bps").get<double>() == 4e8);
  REQUIRE(network.at("links").size() == 2);
  CHECK(network.at("links")[1].at("cap_bps").get<double>() == 2e8);
  CHECK(network.at("links")[1].at("measured_bps").get<double>() > 0);
  // Written out and read back, the check stays whole; a run without one writes none.
  const formats::RankLog again = formats::read_rank_log(write_temp("network.rank0.json", formats::to_json(log)));
  CHECK(nlohmann::json::parse(again.network) == network);
  CHECK(formats::to_json(formats::read_rank_log(std::string(DDPSIM_MEASURED_DIR) + "/torch_mlp_w2.rank0.json"))
            .find("\"network\"") == std::string::npos);
}

TEST_CASE("a run under a comm hook names it (ddpsim_torch measure --comm-hook), and writes it out again") {
  const std::string path = std::string(DDPSIM_MEASURED_DIR) + "/torch_mlp_fp16_w2.rank0.json";
  const formats::RankLog log = formats::read_rank_log(path);
  CHECK(log.comm_hook == "fp16_compress");
  CHECK(formats::read_rank_log(write_temp("hook.rank0.json", formats::to_json(log))).comm_hook == "fp16_compress");
  CHECK(formats::read_rank_log(std::string(DDPSIM_MEASURED_DIR) + "/torch_mlp_w2.rank0.json").comm_hook.empty());
  std::string text = formats::to_json(log);
  text.replace(text.find("\"name\": \"fp16_compress\""), 23, "\"nome\": \"fp16_compress\"");
  CHECK_THROWS_AS(formats::read_rank_log(write_temp("bad_hook.rank0.json", text)), formats::FormatError);
}
