#include "models/sampler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace ddpsim::models;

TEST_CASE("num_samples and total_size") {
  CHECK(num_samples({10, 4, true, 0, false}) == 3);
  CHECK(total_size({10, 4, true, 0, false}) == 12);
  CHECK(num_samples({10, 4, true, 0, true}) == 2);
  CHECK(total_size({10, 4, true, 0, true}) == 8);
  CHECK(num_samples({12, 4, true, 0, true}) == 3);
}

TEST_CASE("without shuffle: rank-strided indices, padding repeats from the start") {
  const SamplerConfig c{10, 4, false, 0, false};
  CHECK(rank_indices(c, 0, 0) == std::vector<std::int64_t>{0, 4, 8});
  CHECK(rank_indices(c, 0, 1) == std::vector<std::int64_t>{1, 5, 9});
  CHECK(rank_indices(c, 0, 2) == std::vector<std::int64_t>{2, 6, 0});  // padded: 0 and 1 again
  CHECK(rank_indices(c, 0, 3) == std::vector<std::int64_t>{3, 7, 1});
  const SamplerConfig dropped{10, 4, false, 0, true};
  CHECK(rank_indices(dropped, 0, 3) == std::vector<std::int64_t>{3, 7});
  // Padding tiles when N < W.
  CHECK(epoch_order({2, 5, false, 0, false}, 0) == std::vector<std::int64_t>{0, 1, 0, 1, 0});
}

TEST_CASE("the shuffle is a permutation, seeded by seed + epoch") {
  const SamplerConfig c{1000, 8, true, 42, false};
  auto e0 = epoch_order(c, 0);
  auto e1 = epoch_order(c, 1);
  CHECK(e0 != e1);
  CHECK(e0 == epoch_order(c, 0));
  CHECK(epoch_order({1000, 8, true, 41, false}, 1) == e0);  // seed 41, epoch 1 = seed 42, epoch 0
  std::sort(e0.begin(), e0.end());
  for (std::int64_t i = 0; i < 1000; ++i) CHECK(e0[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("audit: every example once per epoch, or the documented padding duplicates") {
  // The seed chapter's fixture: 128 examples, batch 8, on 3 ranks (128 % 3 = 2: pad by 1).
  const SamplerAudit a = audit_sampler({128, 3, true, 0, false}, 8, 3, true);
  REQUIRE(a.epochs.size() == 3);
  for (const EpochAudit& e : a.epochs) {
    CHECK(e.duplicates.size() == 1);
    CHECK(e.omissions.empty());
    CHECK(e.ranks[0].ids.size() == 43);
    CHECK(e.ranks[0].batches == 6);
    CHECK(e.ranks[0].last_batch_size == 3);
  }
  // The duplicate is the first index of the epoch's order, and lands on rank 128 % 3 = 2.
  const auto order = epoch_order({128, 3, true, 0, false}, 0);
  CHECK(a.epochs[0].duplicates[0] == order[0]);
  CHECK(a.epochs[0].ranks[2].ids.back() == order[0]);
  CHECK_FALSE(a.epochs[1].same_order_as_previous);
  CHECK(a.warnings.size() == 1);  // the padding note
  // Exactly once when W divides N.
  const SamplerAudit even = audit_sampler({128, 4, true, 0, false}, 8, 2, true);
  std::set<std::int64_t> seen;
  for (const RankEpoch& r : even.epochs[0].ranks) seen.insert(r.ids.begin(), r.ids.end());
  CHECK(seen.size() == 128);
  CHECK(even.epochs[0].duplicates.empty());
  CHECK(even.warnings.empty());
}

TEST_CASE("audit: drop_last omits, and a missing set_epoch repeats the order") {
  const SamplerAudit a = audit_sampler({10, 4, true, 3, true}, 4, 2, false);
  CHECK(a.epochs[0].omissions.size() == 2);
  CHECK(a.epochs[1].same_order_as_previous);
  bool warned = false;
  for (const auto& w : a.warnings) warned |= w.find("set_epoch() is never called") != std::string::npos;
  CHECK(warned);
}
