#include "models/collective_library.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ddpsim::models {

namespace {

// Paired collectives that send different things never complete (the
// base's on_mismatch); a peer's death leaves the others waiting.
class Nccl final : public sim::CollectiveLibrary {
 public:
  // ProcessGroupNCCL::barrier all-reduces a one-element tensor.
  sim::Collective as_sent(sim::Collective c) const override { return priced_as(c); }
};

class Gloo final : public sim::CollectiveLibrary {
 public:
  // A gloo barrier moves no bytes (its cost model prices it as priced_as says).
  sim::Collective as_sent(sim::Collective c) const override {
    if (c.kind == sim::CollectiveKind::kBarrier) c.bytes = 0;
    return c;
  }
  sim::Verdict on_mismatch(std::uint64_t seq, const std::vector<int>& members,
                           const std::vector<sim::Collective>& issued) const override {
    if (sends_alike(issued)) return {sim::Verdict::kRuns, {}};
    const bool all_reduces = std::all_of(issued.begin(), issued.end(), [this](const sim::Collective& c) {
      return as_sent(c).kind == sim::CollectiveKind::kAllReduce;
    });
    if (!all_reduces) return {};  // e.g. a barrier facing an all-reduce: both sides wait
    // Each gloo rank checks the peer's message against its own buffer: the
    // ranks with the smaller buffer abort, then their peers see the connection close.
    std::int64_t largest = 0;
    for (const sim::Collective& c : issued) largest = std::max(largest, as_sent(c).bytes);
    sim::Verdict v{sim::Verdict::kFails, {}};
    for (std::size_t p = 0; p < members.size(); ++p) {
      if (issued[p].bytes >= largest) continue;
      v.failures.push_back({members[p], fmt::format("RuntimeError: [gloo] op.preamble.length <= op.nbytes. {} vs {} "
                                                    "(all_reduce, collective_seq_id {}: a peer sent a larger buffer than this "
                                                    "rank's)",
                                                    largest, issued[p].bytes, seq + 1)});
    }
    return v;
  }
  std::optional<std::string> peer_died(int dead) const override {
    return fmt::format("RuntimeError: [gloo] Connection closed by peer (rank {} exited)", dead);
  }
};

// TORCH_DISTRIBUTED_DEBUG=DETAIL around a backend: the fingerprint
// all-gather before each collective, and the check that compares what each
// rank calls, before any backend rewriting.
class Fingerprinted final : public sim::CollectiveLibrary {
 public:
  Fingerprinted(std::unique_ptr<sim::CollectiveLibrary> inner, std::int64_t bytes, ContentReader reads)
      : inner_(std::move(inner)), bytes_(bytes), reads_(std::move(reads)) {}
  sim::Collective as_sent(sim::Collective c) const override { return inner_->as_sent(c); }
  std::optional<sim::Collective> check_before(int members) const override {
    return sim::Collective{sim::CollectiveKind::kAllGather, bytes_ * members};
  }
  sim::Verdict on_mismatch(std::uint64_t seq, const std::vector<int>& members,
                           const std::vector<sim::Collective>& issued) const override {
    for (std::size_t p = 1; p < issued.size(); ++p) {
      if (issued[0].kind == issued[p].kind && issued[0].bytes == issued[p].bytes) continue;
      const auto describe = [&](std::size_t pos) {
        return fmt::format("CollectiveFingerPrint(SequenceNumber={}, OpType={}, TensorBytes={})", seq,
                           sim::to_string(issued[pos].kind), issued[pos].bytes);
      };
      const std::string message = fmt::format(
          "RuntimeError: Detected mismatch between collectives on ranks. Rank {} is running collective: {}, but Rank {} "
          "is running collective: {}.",
          members[0], describe(0), members[p], describe(p));
      sim::Verdict v{sim::Verdict::kFails, {}};
      for (int m : members) v.failures.push_back({m, message});
      return v;
    }
    return inner_->on_mismatch(seq, members, issued);
  }
  // FSDP's _ExecOrderData._check_order, first iteration: the all-gathered
  // handle indices differ; every rank raises.
  std::optional<sim::Verdict> on_label_mismatch(std::uint64_t seq, const std::vector<int>& members,
                                                const std::vector<sim::OpLabel>& labels) const override {
    if (!reads_ || labels.empty()) return inner_->on_label_mismatch(seq, members, labels);
    const std::optional<std::string> first = reads_(labels[0]);
    for (std::size_t p = 1; p < labels.size() && first; ++p) {
      const std::optional<std::string> other = reads_(labels[p]);
      if (!other || *other == *first) continue;
      const std::string message =
          fmt::format("RuntimeError: Forward order differs across ranks: rank {} is all-gathering parameters for {} while "
                      "rank {} is all-gathering parameters for {}",
                      members[0], *first, members[p], *other);
      sim::Verdict v{sim::Verdict::kFails, {}};
      for (int m : members) v.failures.push_back({m, message});
      return v;
    }
    return inner_->on_label_mismatch(seq, members, labels);
  }
  std::optional<std::string> peer_died(int dead) const override { return inner_->peer_died(dead); }

 private:
  std::unique_ptr<sim::CollectiveLibrary> inner_;
  std::int64_t bytes_;
  ContentReader reads_;
};

}  // namespace

sim::Collective priced_as(sim::Collective c) {
  return c.kind == sim::CollectiveKind::kBarrier ? sim::Collective{sim::CollectiveKind::kAllReduce, kBarrierBytes} : c;
}

std::unique_ptr<sim::CollectiveLibrary> collective_library(Backend backend, std::int64_t fingerprint_bytes,
                                                           ContentReader reads) {
  std::unique_ptr<sim::CollectiveLibrary> lib;
  if (backend == Backend::kGloo) {
    lib = std::make_unique<Gloo>();
  } else {
    lib = std::make_unique<Nccl>();
  }
  if (fingerprint_bytes > 0) lib = std::make_unique<Fingerprinted>(std::move(lib), fingerprint_bytes, std::move(reads));
  return lib;
}

}  // namespace ddpsim::models
