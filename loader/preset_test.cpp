// Presets and the reducer against PyTorch's own numbers
// (../shared/reference/ddp_semantics.md section 1).

#include <doctest/doctest.h>

#include <string>

#include "models/fsdp.hpp"
#include "models/presets.hpp"
#include "models/reducer.hpp"
#include "loader/input_error.hpp"
#include "loader/scenario.hpp"

using namespace ddpsim;

namespace {

scenarios::Scenario with_preset(const std::string& preset, const std::string& extra = "") {
  return scenarios::parse_scenario("world_size: 2\nmodel: {preset: " + preset +
                                       ", forward_ms: 30, backward_ms: 60}\n"
                                       "collective: {latency_us: 5, bandwidth_GBps: 10}\n" + extra,
                                   "p.yaml");
}

std::vector<std::int64_t> sizes(const std::vector<models::Bucket>& buckets) {
  std::vector<std::int64_t> out;
  for (const auto& b : buckets) out.push_back(b.bytes);
  return out;
}

}  // namespace

TEST_CASE("preset parameter totals are PyTorch's") {
  struct Case {
    const char* name;
    std::int64_t params;
    std::size_t tensors;
  };
  for (const Case& c : {Case{"resnet18", 11'689'512, 62}, Case{"resnet50", 25'557'032, 161},
                        Case{"resnet101", 44'549'160, 314}, Case{"resnext50_32x4d", 25'028'904, 161},
                        Case{"resnext101_32x8d", 88'791'336, 314},
                        Case{"bert-base", 109'482'240, 199}, Case{"gpt2-small", 124'439'808, 148},
                        Case{"linear-8-1", 9, 2}}) {
    CAPTURE(c.name);
    const auto s = with_preset(c.name);
    CHECK(s.job.model.parameter_count() == c.params);
    CHECK(s.job.model.parameters.size() == c.tensors);
    CHECK(s.job.model.ready_order.size() == c.tensors);
  }
  CHECK(models::preset_names().size() == 8);
}

TEST_CASE("ResNet-18 buckets: the public test vector (pytorch/pytorch#48880)") {
  const auto at25 = with_preset("resnet18");
  const auto initial = models::initial_buckets(at25.job.model, at25.job.ddp);
  CHECK(sizes(initial) == std::vector<std::int64_t>{46'758'048});
  const auto rebuilt25 = models::rebuilt_buckets(at25.job.model, at25.job.ddp);
  REQUIRE(rebuilt25.has_value());
  CHECK(sizes(*rebuilt25) == std::vector<std::int64_t>{2'052'000, 28'852'224, 15'853'824});
  // PyTorch 1.x's DDP(bucket_cap_mb=35): the first bucket stays 1 MiB (the vector).
  const auto at35_1x = with_preset("resnet18", "ddp: {bucket_cap_mb: 35, first_bucket_mb: 1}\n");
  CHECK(sizes(*models::rebuilt_buckets(at35_1x.job.model, at35_1x.job.ddp)) ==
        std::vector<std::int64_t>{2'052'000, 38'297'600, 6'408'448});
  // PyTorch 2.3+: the cap given caps the first bucket too; torch 2.14.1's DDP reported these
  // rebuilt_bucket_sizes (tests/torch_oracle.py, oracle.torch_buckets).
  const auto at35 = with_preset("resnet18", "ddp: {bucket_cap_mb: 35}\n");
  CHECK(sizes(*models::rebuilt_buckets(at35.job.model, at35.job.ddp)) ==
        std::vector<std::int64_t>{37'988'256, 8'769'792});
}

TEST_CASE("preset ready orders are PyTorch's, not reverse registration") {
  const auto r18 = with_preset("resnet18");
  const auto& p = r18.job.model.parameters;
  const auto name = [&](std::size_t pos) { return p[static_cast<std::size_t>(r18.job.model.ready_order[pos])].name; };
  CHECK(name(0) == "fc.bias");
  CHECK(name(1) == "fc.weight");
  CHECK(name(2) == "layer4.1.bn2.weight");  // BatchNorm before the convolution feeding it
  CHECK(name(4) == "layer4.1.conv2.weight");
  const auto gpt2 = with_preset("gpt2-small");
  const auto& g = gpt2.job.model;
  CHECK(g.parameters[static_cast<std::size_t>(g.ready_order.back())].name == "transformer.wte.weight");  // tied: last
  CHECK(g.parameters[static_cast<std::size_t>(g.ready_order.front())].name == "transformer.ln_f.weight");
}

TEST_CASE("buffers come with the preset") {
  const auto r50 = with_preset("resnet50");
  CHECK(r50.job.model.buffers.size() == 159);  // running_mean, running_var, num_batches_tracked per BatchNorm
  CHECK(with_preset("linear-8-1").job.model.buffers.empty());
}

TEST_CASE("whole-model times are spread over the tensors in proportion to their size") {
  const auto s = with_preset("linear-8-1");  // weight 8, bias 1
  CHECK(s.job.model.backward[0] == sim::Time::ns(53'333'333));
  CHECK(s.job.model.backward[1] == sim::Time::ns(6'666'667));
  CHECK(s.job.model.backward_total() == sim::Time::from_ms(60));
}

TEST_CASE("an unknown preset is an error listing the presets") {
  try {
    with_preset("resnet51");
    FAIL("no error");
  } catch (const scenarios::InputError& e) {
    CHECK(std::string(e.what()).find("key 'model.preset': value 'resnet51': expected one of: bert-base, gpt2-small, "
                                     "linear-8-1, resnet101, resnet18, resnet50, resnext101_32x8d, resnext50_32x4d") != std::string::npos);
  }
}

TEST_CASE("FSDP units on GPT-2 small: one per transformer block, the embeddings in the root") {
  const scenarios::Scenario s = with_preset("gpt2-small");
  const auto units = models::build_units(s.job.model, models::WrapPolicy{std::nullopt, {"transformer.h.*"}});
  REQUIRE(units.size() == 13);
  // 12 x 7,087,872 in the blocks; wte (50257 x 768), wpe (1024 x 768) and ln_f in the root: 124,439,808 in all.
  for (std::size_t i = 0; i < 12; ++i) CHECK(units[i].numel == 7'087'872);
  CHECK(units[12].root);
  CHECK(units[12].numel == 50257 * 768 + 1024 * 768 + 2 * 768);
  // The size policy at 10 M parameters leaves every block to the root but wte.
  const auto sized = models::build_units(s.job.model, models::WrapPolicy{10'000'000, {}});
  REQUIRE(sized.size() == 3);
  CHECK(sized[0].module == "transformer.wte");
  CHECK(sized[1].module == "transformer.h");
}
