#pragma once
// A list whose first N elements live in the list itself, the rest on the
// heap. Per-rank state the engine and the models touch on every event
// (a stream's waiters and wakes, a rank's pending events, the collectives
// of its iteration) holds a few elements at a time: a heap block for each
// would be one more cache miss per event once the ranks outnumber the cache.

#include <array>
#include <cstddef>
#include <vector>

namespace ddpsim::sim {

template <class T, std::size_t N>
class SmallList {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return i < N ? inline_[i] : spill_[i - N]; }
  const T& operator[](std::size_t i) const { return i < N ? inline_[i] : spill_[i - N]; }
  void push_back(const T& value) {
    if (size_ < N) {
      inline_[size_] = value;
    } else {
      spill_.push_back(value);
    }
    ++size_;
  }
  void pop_back() {
    --size_;
    if (size_ >= N) spill_.pop_back();
  }
  void clear() {
    size_ = 0;
    spill_.clear();
  }
  /// Removes the elements `pred` accepts, keeping the others' order.
  template <class Pred>
  void erase_if(Pred pred) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const T value = (*this)[i];
      if (!pred(value)) (*this)[kept++] = value;
    }
    size_ = kept;
    spill_.resize(kept > N ? kept - N : 0);
  }

 private:
  std::size_t size_ = 0;  // first: empty() reads the list's first bytes only
  std::array<T, N> inline_{};
  std::vector<T> spill_;
};

}  // namespace ddpsim::sim
