#include "models/comm_hook.hpp"

#include <doctest/doctest.h>

#include "models/reducer.hpp"

using namespace ddpsim;
using models::Bucket;
using models::CommHook;
using models::CommHookKind;
using models::HookStage;

namespace {

// A weight [64, 32] (compressible at rank 1..10), its bias [64] (never: a vector).
models::ModelSpec two_tensors() {
  models::ModelSpec m;
  m.parameters = {{"w", {64, 32}, models::DType::kFloat32}, {"b", {64}, models::DType::kFloat32}};
  return m;
}

Bucket whole(const models::ModelSpec& /*the two tensors*/) { return {{0, 1}, (64 * 32 + 64) * 4, models::DType::kFloat32}; }

// Round rates, so every term is easy to check by hand.
CommHook hook(CommHookKind kind, int rank = 1) {
  CommHook h;
  h.kind = kind;
  h.powersgd.matrix_approximation_rank = rank;
  h.cost = {1e9, 2e9, 1e12, 0, sim::Time::from_us(1), true};
  return h;
}

std::vector<std::int64_t> collectives(const models::BucketHookPlan& p) {
  std::vector<std::int64_t> out;
  for (const HookStage& s : p.chain) {
    if (s.collective) out.push_back(s.bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("fp16_compress: half the bytes on the wire, a cast at the hook and one back after the all-reduce") {
  const auto m = two_tensors();
  const Bucket b = whole(m);
  const auto p = models::plan_bucket_hook(hook(CommHookKind::kFp16Compress), m, b, true, false);
  CHECK(collectives(p) == std::vector<std::int64_t>{b.bytes / 2});
  CHECK(p.wire_bytes == b.bytes / 2);
  // to(float16) and div_ at the hook, copy_ in decompress: 8448 bytes at 1 GB/s plus 1 us a call.
  CHECK(p.at_hook == sim::Time::ns(8448 + 2000));
  REQUIRE(p.chain.size() == 2);
  CHECK_FALSE(p.chain[1].collective);
  CHECK(p.chain[1].time == sim::Time::ns(8448 + 1000));
  // On a CPU the fp16 tensor is fresh memory each step: its first touch at alloc_bytes_per_s.
  CommHook cpu = hook(CommHookKind::kFp16Compress);
  cpu.cost.alloc_bytes_per_s = 0.5e9;
  CHECK(models::plan_bucket_hook(cpu, m, b, true, false).at_hook == p.at_hook + sim::Time::ns(4224 * 2));  // 2112 halves, 4224 bytes at 0.5 GB/s
  // A step that does not compress (or the allreduce hook): the bucket as it is, nothing added.
  const auto plain = models::plan_bucket_hook(hook(CommHookKind::kFp16Compress), m, b, false, false);
  CHECK(collectives(plain) == std::vector<std::int64_t>{b.bytes});
  CHECK(plain.compute() == sim::Time{});
}

TEST_CASE("powerSGD: the bias all-reduced as it is, then P and Q; rank capped by the matrix") {
  const auto m = two_tensors();
  const Bucket b = whole(m);
  const auto p1 = models::plan_bucket_hook(hook(CommHookKind::kPowerSgd, 1), m, b, true, false);
  // _should_compress: (64 + 32) x 1 x 2 < 64 x 32 for the weight; the bias (64 x 1) never.
  CHECK(collectives(p1) == std::vector<std::int64_t>{64 * 4, 64 * 1 * 4, 32 * 1 * 4});
  CHECK(p1.wire_bytes == (64 + 64 + 32) * 4);
  CHECK(p1.chain.size() == 6);  // all-reduce, callback, P, callback, Q, decompress
  const auto p4 = models::plan_bucket_hook(hook(CommHookKind::kPowerSgd, 4), m, b, true, false);
  CHECK(collectives(p4) == std::vector<std::int64_t>{64 * 4, 64 * 4 * 4, 32 * 4 * 4});
  CHECK(p4.compute() > p1.compute());  // more columns to orthogonalise, wider products
  // Rank 20: (64 + 32) x 20 x 2 >= 64 x 32, so the weight is left alone too.
  const auto p20 = models::plan_bucket_hook(hook(CommHookKind::kPowerSgd, 20), m, b, true, false);
  CHECK(collectives(p20) == std::vector<std::int64_t>{b.bytes, 0, 0});
  // min_compression_rate 0.1 compresses both (the bias too: 65 x 0.1 < 64), and
  // the uncompressed all-reduce still runs, on an empty tensor.
  CommHook loose = hook(CommHookKind::kPowerSgd, 20);
  loose.powersgd.min_compression_rate = 0.1;
  CHECK(collectives(models::plan_bucket_hook(loose, m, b, true, false)) ==
        std::vector<std::int64_t>{0, (64 * 20 + 64) * 4, (32 * 20 + 1) * 4});
  // Without error feedback, no bucket-sized add, clone and subtraction.
  CommHook no_feedback = hook(CommHookKind::kPowerSgd, 1);
  no_feedback.powersgd.use_error_feedback = false;
  CHECK(models::plan_bucket_hook(no_feedback, m, b, true, false).compute() ==
        p1.compute() - sim::Time::ns(3 * b.bytes / 2) - sim::Time::from_us(1));
  // The first compressed step draws Q instead of reusing it.
  CHECK(models::plan_bucket_hook(hook(CommHookKind::kPowerSgd, 1), m, b, true, true).at_hook > p1.at_hook);
}

TEST_CASE("batched_powerSGD: one square of side ceil(sqrt(length)), two side x rank all-reduces") {
  const auto m = two_tensors();
  const Bucket b = whole(m);  // 2112 elements: side 46
  const auto p = models::plan_bucket_hook(hook(CommHookKind::kBatchedPowerSgd, 2), m, b, true, false);
  CHECK(collectives(p) == std::vector<std::int64_t>{46 * 2 * 4, 46 * 2 * 4});
  CHECK(p.chain.size() == 4);
}

TEST_CASE("PowerSGD compresses from start_powerSGD_iter; the casts always; allreduce never") {
  CommHook p = hook(CommHookKind::kPowerSgd);
  p.powersgd.start_powerSGD_iter = 3;
  CHECK_FALSE(p.compresses(2));
  CHECK(p.compresses(3));
  CHECK(hook(CommHookKind::kBf16Compress).compresses(0));
  CHECK_FALSE(hook(CommHookKind::kAllReduce).compresses(5));
  CHECK(models::parse_comm_hook("batched_powerSGD") == CommHookKind::kBatchedPowerSgd);
  CHECK_FALSE(models::parse_comm_hook("powersgd"));
}

TEST_CASE("PowerSGD's state: an error buffer a bucket and the warm-started P and Q") {
  const auto m = two_tensors();
  const std::vector<Bucket> buckets{whole(m)};
  CHECK(models::comm_hook_state_bytes(hook(CommHookKind::kPowerSgd, 2), m, buckets) == whole(m).bytes + (64 + 32) * 2 * 4);
  CommHook cold = hook(CommHookKind::kPowerSgd, 2);
  cold.powersgd.warm_start = false;
  cold.powersgd.use_error_feedback = false;
  CHECK(models::comm_hook_state_bytes(cold, m, buckets) == 0);
  CHECK(models::comm_hook_state_bytes(hook(CommHookKind::kBatchedPowerSgd, 2), m, buckets) == 46 * 46 * 4 + 2 * 46 * 2 * 4);
  CHECK(models::comm_hook_state_bytes(hook(CommHookKind::kFp16Compress), m, buckets) == 0);
}
