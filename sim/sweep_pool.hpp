#pragma once
// Internal to sim/engine.cpp: the threads of a rank-major sweep and the
// barrier they meet at.

#ifndef DDPSIM_SIM_ENGINE_CPP
#error "internal to sim/engine.cpp: its types have internal linkage, for one translation unit"
#endif

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace ddpsim::sim {
namespace {  // internal linkage: see engine_core.hpp

// A barrier for a sweep's threads, which meet every few hundred
// microseconds: waiting spins a while before it sleeps (std::barrier's
// futex wake-up alone costs tens of microseconds in a virtual machine).
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n), left_(n) {}
  void arrive_and_wait() {
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      left_.store(n_, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);
      phase_.notify_all();
      return;
    }
    for (int spin = 0; spin < kSpins; ++spin) {
      if (phase_.load(std::memory_order_acquire) != phase) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    while (phase_.load(std::memory_order_acquire) == phase) phase_.wait(phase, std::memory_order_acquire);
  }

 private:
  static constexpr int kSpins = 1 << 14;
  const int n_;
  std::atomic<int> left_;
  std::atomic<unsigned> phase_{0};
};

// Runs body(0) .. body(n - 1) at once: body(0) on the calling thread, the
// others on threads kept for the pool's life. `body` must not throw.
class SweepPool {
 public:
  explicit SweepPool(int n) : start_(n), done_(n) {
    for (int i = 1; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
  }
  ~SweepPool() {
    stop_ = true;
    start_.arrive_and_wait();
    for (std::thread& t : threads_) t.join();
  }
  SweepPool(const SweepPool&) = delete;
  SweepPool& operator=(const SweepPool&) = delete;
  void run(const std::function<void(int)>& body) {
    body_ = &body;
    start_.arrive_and_wait();
    body(0);
    done_.arrive_and_wait();
  }

 private:
  void loop(int i) {
    for (;;) {
      start_.arrive_and_wait();
      if (stop_) return;
      (*body_)(i);
      done_.arrive_and_wait();
    }
  }
  SpinBarrier start_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* body_ = nullptr;  // written before start_, read after it
  bool stop_ = false;                                // likewise
};

}  // namespace
}  // namespace ddpsim::sim
