// The watchdog's report from the ranks' answers, for the seed's hang: rank 1
// skips backward in iteration 3 of a 3-bucket model, so its iteration-4
// buckets pair with the others' iteration-3 ones; at the end ranks 0, 2, 3
// wait in a bucket all-reduce rank 1 never issues.

#include "real_backend/hang_report.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace ddpsim::real;
using Kind = CollectiveLabel::Kind;
using Phase = RankProgress::Phase;

namespace {

std::vector<CollectiveLabel> history(int iterations, int buckets, int skipped_iteration) {
  std::vector<CollectiveLabel> h = {{Kind::kBroadcast, -1, -1}};
  for (int i = 0; i < iterations; ++i) {
    if (i == skipped_iteration) continue;
    for (int b = 0; b < buckets; ++b) h.push_back({Kind::kBucketAllReduce, i, b});
  }
  return h;
}

std::vector<RankProgress> seed_hang() {
  std::vector<RankProgress> p(4);
  for (int r = 0; r < 4; ++r) {
    p[r].rank = r;
    p[r].history = history(8, 3, r == 1 ? 3 : -1);
    p[r].phase = Phase::kInCollective;
  }
  for (int r : {0, 2, 3}) {  // in iteration 7's bucket 0: the 1 + 7*3 + 1 = 23rd collective, #22
    p[r].history.resize(23);
    p[r].current = p[r].history.back();
  }
  p[1].phase = Phase::kInBarrier;
  p[1].current = {Kind::kBarrier, -1, -1};
  return p;
}

}  // namespace

TEST_CASE("the report names the hung collective, who waits, who is missing, and the culprit") {
  const std::vector<RankProgress> p = seed_hang();
  const std::string report = hang_report(p, 2);
  INFO(report);
  CHECK(report.find("collective #22 (all_reduce of bucket 0, iteration 7): ranks 0, 2, 3 entered it and wait") != std::string::npos);
  CHECK(report.find("missing from #22: rank 1 has left the training loop after collective #21 (all_reduce of bucket 2, "
                    "iteration 7) and waits in the end-of-training barrier") != std::string::npos);
  CHECK(report.find("first misaligned collective: #10") != std::string::npos);  // 1 + 3*3: iteration 3's bucket 0
  CHECK(report.find("rank 1 ran all_reduce of bucket 0, iteration 4") != std::string::npos);
  CHECK(report.find("ranks 0, 2, 3 ran all_reduce of bucket 0, iteration 3") != std::string::npos);
  CHECK(report.find("culprit: rank 1: it skipped collectives of iteration 3") != std::string::npos);
  CHECK(report.find("--symmetric-skip") != std::string::npos);
  CHECK(reporting_rank(p) == 0);
}

TEST_CASE("at W = 2 the culprit is the rank that skipped, whichever it is (a tie in count: the one ahead)") {
  for (const int skipper : {0, 1}) {
    std::vector<RankProgress> p(2);
    for (int r = 0; r < 2; ++r) {
      p[r].rank = r;
      p[r].history = history(8, 3, r == skipper ? 3 : -1);
      p[r].phase = Phase::kInCollective;
    }
    p[1 - skipper].history.resize(23);
    p[1 - skipper].current = p[1 - skipper].history.back();
    p[skipper].phase = Phase::kInBarrier;
    p[skipper].current = {Kind::kBarrier, -1, -1};
    const std::string report = hang_report(p, 2);
    INFO(report);
    CHECK(report.find(fmt::format("culprit: rank {}: it skipped collectives of iteration 3", skipper)) != std::string::npos);
  }
}

TEST_CASE("a rank that does not answer is reported as such, and histories that agree say so") {
  std::vector<RankProgress> p(2);
  p[0] = {0, Phase::kInCollective, {Kind::kBucketAllReduce, 5, 1}, history(6, 2, -1)};
  p[1].rank = 1;  // never answered
  const std::string report = hang_report(p, 30);
  INFO(report);
  CHECK(report.find("missing from #12: rank 1 did not answer") != std::string::npos);
  CHECK(report.find("histories agree") != std::string::npos);
  CHECK(report.find("culprit") == std::string::npos);
}

TEST_CASE("progress survives the wire") {
  const RankProgress p = seed_hang()[1];
  const RankProgress q = decode_progress(encode_progress(p), 1);
  CHECK(q.phase == p.phase);
  CHECK(q.current == p.current);
  CHECK(q.history == p.history);
  CHECK_THROWS(decode_progress({0, 1}, 0));
}
