#include "real_backend/grad_buckets.hpp"

#include <algorithm>
#include <stdexcept>

namespace ddpsim::real {

GradBuckets::GradBuckets(const Mlp& model, std::vector<models::Bucket> buckets, int world_size)
    : model_(model), buckets_(std::move(buckets)), scale_(1.0f / static_cast<float>(world_size)) {
  if (world_size < 1) throw std::invalid_argument("world size must be at least 1");
  const std::size_t tensors = model.spec().parameters.size();
  bucket_of_.assign(tensors, -1);
  position_in_bucket_.assign(tensors, 0);
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    std::size_t pos = 0;
    for (int t : buckets_[b].params) {
      const auto ut = static_cast<std::size_t>(t);
      if (ut >= tensors || bucket_of_[ut] != -1) throw std::invalid_argument("buckets must cover each tensor once");
      bucket_of_[ut] = static_cast<int>(b);
      position_in_bucket_[ut] = pos;
      pos += model.numel(t);
    }
    buffers_.emplace_back(pos, 0.0f);
  }
  if (std::find(bucket_of_.begin(), bucket_of_.end(), -1) != bucket_of_.end()) {
    throw std::invalid_argument("buckets must cover every tensor");
  }
  reset();
}

std::vector<int> GradBuckets::mark_ready(int t, const std::vector<float>& grads) {
  const auto ut = static_cast<std::size_t>(t);
  const auto b = static_cast<std::size_t>(bucket_of_.at(ut));
  const std::size_t n = model_.numel(t);
  const float* src = grads.data() + model_.offset(t);
  float* dst = buffers_[b].data() + position_in_bucket_[ut];
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i] * scale_;
  --pending_[b];
  std::vector<int> launch;
  while (next_launch_ < static_cast<int>(buckets_.size()) && pending_[static_cast<std::size_t>(next_launch_)] == 0) {
    launch.push_back(next_launch_++);
  }
  return launch;
}

void GradBuckets::unpack(int b, std::vector<float>& grads) const {
  const auto ub = static_cast<std::size_t>(b);
  for (int t : buckets_[ub].params) {
    const auto ut = static_cast<std::size_t>(t);
    const std::size_t n = model_.numel(t);
    std::copy_n(buffers_[ub].data() + position_in_bucket_[ut], n, grads.data() + model_.offset(t));
  }
}

void GradBuckets::reset() {
  pending_.clear();
  for (const models::Bucket& b : buckets_) pending_.push_back(static_cast<int>(b.params.size()));
  next_launch_ = 0;
}

}  // namespace ddpsim::real
