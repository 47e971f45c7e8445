#pragma once
// DDP's gradient buckets over a model's flat gradient array, as the Reducer
// keeps them: a contiguous buffer per bucket, each gradient copied in and
// scaled by 1/W as its tensor becomes ready, buckets released for all-reduce
// strictly in index order, results copied back after the sum.
// BucketTracker is the bookkeeping, shared by the CPU and GPU replicas;
// GradBuckets adds the host buffers.

#include <cstddef>
#include <vector>

#include "models/reducer.hpp"
#include "real_backend/mlp.hpp"

namespace ddpsim::real {

class BucketTracker {
 public:
  /// `buckets` index tensors 0..numel.size()-1, each exactly once.
  BucketTracker(std::vector<models::Bucket> buckets, const std::vector<std::size_t>& numel);

  std::size_t size() const { return buckets_.size(); }
  const models::Bucket& bucket(int b) const { return buckets_[static_cast<std::size_t>(b)]; }
  int bucket_of(int t) const { return bucket_of_[static_cast<std::size_t>(t)]; }
  /// Element offset of tensor t in its bucket's buffer.
  std::size_t position(int t) const { return position_[static_cast<std::size_t>(t)]; }
  std::size_t elements(int b) const { return elements_[static_cast<std::size_t>(b)]; }
  /// Tensor t is ready: the buckets that may now be launched, in index order
  /// (every bucket up to the first one still incomplete).
  std::vector<int> mark_ready(int t);
  /// Ready for the next backward.
  void reset();

 private:
  std::vector<models::Bucket> buckets_;
  std::vector<int> bucket_of_;          // per tensor
  std::vector<std::size_t> position_;   // per tensor
  std::vector<std::size_t> elements_;   // per bucket
  std::vector<int> pending_;            // per bucket: tensors not yet ready
  int next_launch_ = 0;
};

class GradBuckets {
 public:
  /// `buckets` index the model's parameter tensors (models::rebuilt_buckets of model.spec()).
  GradBuckets(const Mlp& model, std::vector<models::Bucket> buckets, int world_size);

  std::size_t size() const { return tracker_.size(); }
  const models::Bucket& bucket(int b) const { return tracker_.bucket(b); }
  /// Tensor `t`'s gradient is final: copy it into its bucket, scaled by 1/W;
  /// returns the buckets that may now be launched (BucketTracker::mark_ready).
  std::vector<int> mark_ready(int t, const std::vector<float>& grads);
  std::vector<float>& buffer(int b) { return buffers_[static_cast<std::size_t>(b)]; }
  /// After the all-reduce: copies the bucket's averaged gradients back.
  void unpack(int b, std::vector<float>& grads) const;
  /// Ready for the next backward.
  void reset() { tracker_.reset(); }

 private:
  const Mlp& model_;
  BucketTracker tracker_;
  float scale_;
  std::vector<std::vector<float>> buffers_;
};

/// Element counts of the model's tensors, in registration order.
std::vector<std::size_t> tensor_sizes(const Mlp& model);

}  // namespace ddpsim::real
