#include "real_backend/grad_buckets.hpp"

#include <algorithm>
#include <stdexcept>

namespace ddpsim::real {

std::vector<std::size_t> tensor_sizes(const Mlp& model) {
  std::vector<std::size_t> n;
  const std::size_t tensors = model.spec().parameters.size();
  for (std::size_t t = 0; t < tensors; ++t) n.push_back(model.numel(static_cast<int>(t)));
  return n;
}

BucketTracker::BucketTracker(std::vector<models::Bucket> buckets, const std::vector<std::size_t>& numel)
    : buckets_(std::move(buckets)), bucket_of_(numel.size(), -1), position_(numel.size(), 0) {
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    std::size_t pos = 0;
    for (int t : buckets_[b].params) {
      const auto ut = static_cast<std::size_t>(t);
      if (ut >= numel.size() || bucket_of_[ut] != -1) throw std::invalid_argument("buckets must cover each tensor once");
      bucket_of_[ut] = static_cast<int>(b);
      position_[ut] = pos;
      pos += numel[ut];
    }
    elements_.push_back(pos);
  }
  if (std::find(bucket_of_.begin(), bucket_of_.end(), -1) != bucket_of_.end()) {
    throw std::invalid_argument("buckets must cover every tensor");
  }
  reset();
}

std::vector<int> BucketTracker::mark_ready(int t) {
  --pending_[static_cast<std::size_t>(bucket_of(t))];
  std::vector<int> launch;
  while (next_launch_ < static_cast<int>(buckets_.size()) && pending_[static_cast<std::size_t>(next_launch_)] == 0) {
    launch.push_back(next_launch_++);
  }
  return launch;
}

void BucketTracker::reset() {
  pending_.clear();
  for (const models::Bucket& b : buckets_) pending_.push_back(static_cast<int>(b.params.size()));
  next_launch_ = 0;
}

GradBuckets::GradBuckets(const Mlp& model, std::vector<models::Bucket> buckets, int world_size)
    : model_(model), tracker_(std::move(buckets), tensor_sizes(model)), scale_(1.0f / static_cast<float>(world_size)) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  for (std::size_t b = 0; b < tracker_.size(); ++b) buffers_.emplace_back(tracker_.elements(static_cast<int>(b)), 0.0f);
}

std::vector<int> GradBuckets::mark_ready(int t, const std::vector<float>& grads) {
  const std::size_t n = model_.numel(t);
  const float* src = grads.data() + model_.offset(t);
  float* dst = buffers_[static_cast<std::size_t>(tracker_.bucket_of(t))].data() + tracker_.position(t);
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] * scale_;
  return tracker_.mark_ready(t);
}

void GradBuckets::unpack(int b, std::vector<float>& grads) const {
  for (int t : tracker_.bucket(b).params) {
    std::copy_n(buffers_[static_cast<std::size_t>(b)].data() + tracker_.position(t), model_.numel(t),
                grads.data() + model_.offset(t));
  }
}

}  // namespace ddpsim::real
