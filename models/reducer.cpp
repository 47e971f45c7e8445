#include "models/reducer.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace ddpsim::models {

std::vector<Bucket> assign_buckets(const std::vector<Tensor>& params, const std::vector<int>& order,
                                   const std::vector<std::int64_t>& limits, bool sort_by_min_index) {
  if (limits.empty()) throw std::invalid_argument("bucket size limits are empty");
  struct Open {
    DType dtype;
    Bucket bucket;
    std::size_t limit = 0;  // position in `limits`
  };
  std::vector<Open> open;  // one per dtype, in order of first appearance
  std::vector<Bucket> result;
  for (int index : order) {
    const Tensor& t = params.at(static_cast<std::size_t>(index));
    auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) { return o.dtype == t.dtype; });
    if (it == open.end()) it = open.insert(open.end(), Open{t.dtype, Bucket{{}, 0, t.dtype}, 0});
    it->bucket.params.push_back(index);
    it->bucket.bytes += t.bytes();
    if (it->bucket.bytes >= limits[it->limit]) {
      result.push_back(std::move(it->bucket));
      it->bucket = Bucket{{}, 0, t.dtype};
      if (it->limit + 1 < limits.size()) ++it->limit;
    }
  }
  for (Open& o : open) {
    if (!o.bucket.params.empty()) result.push_back(std::move(o.bucket));
  }
  if (sort_by_min_index) {
    std::stable_sort(result.begin(), result.end(), [](const Bucket& a, const Bucket& b) {
      return *std::min_element(a.params.begin(), a.params.end()) < *std::min_element(b.params.begin(), b.params.end());
    });
  }
  return result;
}

std::vector<Bucket> initial_buckets(const ModelSpec& model, const DdpConfig& ddp) {
  std::vector<int> order(model.parameters.size());
  std::iota(order.begin(), order.end(), 0);
  const bool small = ddp.find_unused_parameters && !ddp.static_graph;
  const std::vector<std::int64_t> limits =
      small ? std::vector<std::int64_t>{ddp.first_bucket_bytes, ddp.bucket_cap_bytes}
            : std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max()};
  std::vector<Bucket> buckets = assign_buckets(model.parameters, order, limits, true);
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

std::optional<std::vector<Bucket>> rebuilt_buckets(const ModelSpec& model, const DdpConfig& ddp) {
  if (!rebuild_iteration(ddp)) return std::nullopt;
  return assign_buckets(model.parameters, model.ready_order, {ddp.first_bucket_bytes, ddp.bucket_cap_bytes}, false);
}

std::vector<Bucket> steady_buckets(const ModelSpec& model, const DdpConfig& ddp) {
  auto rebuilt = rebuilt_buckets(model, ddp);
  return rebuilt ? std::move(*rebuilt) : initial_buckets(model, ddp);
}

std::optional<int> rebuild_iteration(const DdpConfig& ddp) {
  if (ddp.static_graph) return 2;
  if (ddp.find_unused_parameters) return std::nullopt;
  return 1;
}

BackwardPlan plan_backward(const ModelSpec& model, const DdpConfig& ddp, const std::vector<Bucket>& buckets) {
  const std::size_t n = model.parameters.size();
  std::vector<char> unused(n, 0);
  for (int p : ddp.unused_parameters) unused.at(static_cast<std::size_t>(p)) = 1;
  const bool marks_unused = ddp.find_unused_parameters || ddp.static_graph;

  // Position (in ready order) at whose end each parameter's gradient is ready.
  std::vector<std::size_t> ready_at(n, 0);
  std::size_t first_used = n;
  for (std::size_t pos = 0; pos < model.ready_order.size(); ++pos) {
    const auto p = static_cast<std::size_t>(model.ready_order[pos]);
    ready_at[p] = pos;
    if (!unused[p] && first_used == n) first_used = pos;
  }
  if (first_used == n) first_used = 0;

  BackwardPlan plan;
  std::vector<std::size_t> bucket_pos(buckets.size(), 0);
  plan.launchable = static_cast<int>(buckets.size());
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    for (int p : buckets[b].params) {
      const auto pi = static_cast<std::size_t>(p);
      if (unused[pi] && !marks_unused) {
        plan.launchable = std::min(plan.launchable, static_cast<int>(b));
        continue;
      }
      bucket_pos[b] = std::max(bucket_pos[b], unused[pi] ? first_used : ready_at[pi]);
    }
  }
  // Cut the backward at every distinct ready position.
  std::vector<std::size_t> cuts(bucket_pos.begin(), bucket_pos.end());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::size_t pos = 0;
  for (std::size_t cut : cuts) {
    sim::Time piece;
    for (; pos <= cut; ++pos) {
      const auto p = static_cast<std::size_t>(model.ready_order[pos]);
      // The hook copies the gradient into its bucket (ddp.bucket_copy_GBps).
      if (!unused[p]) piece += model.backward[p] + ddp.bucket_copy(model.parameters[p].bytes());
    }
    plan.segments.push_back(piece);
  }
  sim::Time tail;
  for (; pos < model.ready_order.size(); ++pos) {
    const auto p = static_cast<std::size_t>(model.ready_order[pos]);
    if (!unused[p]) tail += model.backward[p] + ddp.bucket_copy(model.parameters[p].bytes());
  }
  if (tail > sim::Time::zero() || plan.segments.empty()) plan.segments.push_back(tail);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    plan.bucket_ready_segment.push_back(
        static_cast<int>(std::lower_bound(cuts.begin(), cuts.end(), bucket_pos[b]) - cuts.begin()));
  }
  return plan;
}

}  // namespace ddpsim::models
