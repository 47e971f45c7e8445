#pragma once
// DDP's gradient buckets over a model's flat gradient array, as the Reducer
// keeps them: a contiguous buffer per bucket, each gradient copied in and
// scaled by 1/W as its tensor becomes ready, buckets released for all-reduce
// strictly in index order, results copied back after the sum.

#include <cstddef>
#include <vector>

#include "models/reducer.hpp"
#include "real_backend/mlp.hpp"

namespace ddpsim::real {

class GradBuckets {
 public:
  /// `buckets` index the model's parameter tensors (models::rebuilt_buckets of model.spec()).
  GradBuckets(const Mlp& model, std::vector<models::Bucket> buckets, int world_size);

  std::size_t size() const { return buckets_.size(); }
  const models::Bucket& bucket(int b) const { return buckets_[static_cast<std::size_t>(b)]; }

  /// Tensor `t`'s gradient is final: copy it into its bucket, scaled by 1/W.
  /// Returns the buckets that may now be launched, in index order: every
  /// bucket up to the first one still incomplete.
  std::vector<int> mark_ready(int t, const std::vector<float>& grads);
  std::vector<float>& buffer(int b) { return buffers_[static_cast<std::size_t>(b)]; }
  /// After the all-reduce: copies the bucket's averaged gradients back.
  void unpack(int b, std::vector<float>& grads) const;
  /// Ready for the next backward.
  void reset();

 private:
  const Mlp& model_;
  std::vector<models::Bucket> buckets_;
  float scale_;
  std::vector<std::vector<float>> buffers_;
  std::vector<int> bucket_of_;                 // per tensor
  std::vector<std::size_t> position_in_bucket_;  // per tensor: element offset in its bucket buffer
  std::vector<int> pending_;                   // per bucket: tensors not yet ready
  int next_launch_ = 0;
};

}  // namespace ddpsim::real
