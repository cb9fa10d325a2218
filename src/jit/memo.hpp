#pragma once
// The in-process memos' one key and one container. Every memo of loaded or chosen kernels (loaded
// modules, ready kernels, an Attention's per-call choices) is keyed by MemoKey: the CUDA context's
// id (cuCtxGetId, unique for the life of the process, unlike the CUcontext pointer a re-created
// context may reuse) and a key text (for kernels: the disk cache's key, kernel_key() of the
// rendered source, options and arch; for the tuner's config choices: the autotune key, which
// names the device, with context id 0). Each memo is a bounded LRU: an evicted entry is rebuilt on
// its next use (from the disk cache, or by loading the module again), never used stale.
#include <cuda.h>

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace flexjit::jit {

// The id of `context` (cuCtxGetId); the pointer's value where the driver lacks cuCtxGetId.
unsigned long long context_id(CUcontext context);
// context_id(ensure_context()).
unsigned long long current_context_id();

struct MemoKey {
  unsigned long long context = 0;
  std::string text;
  bool operator==(const MemoKey& o) const { return context == o.context && text == o.text; }
};

struct MemoKeyHash {
  size_t operator()(const MemoKey& k) const noexcept {
    return std::hash<std::string>()(k.text) ^ (std::hash<unsigned long long>()(k.context) * 0x9E3779B97F4A7C15ull);
  }
};

// A thread-safe least-recently-used map of at most `capacity` entries.
template <typename Value>
class LruMemo {
 public:
  explicit LruMemo(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value of `key` (now the most recently used), or a default-constructed Value.
  Value find(const MemoKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return Value();
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Inserts `value` unless `key` is present; returns the value now stored (the first one wins, so
  // two threads that built the same entry end up sharing one).
  Value insert(const MemoKey& key, Value value) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

  // Calls f(key, value) for every entry, most recently used first.
  template <typename F>
  void for_each(F&& f) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [k, v] : order_) f(k, v);
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    index_.clear();
    order_.clear();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return order_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<std::pair<MemoKey, Value>> order_;
  std::unordered_map<MemoKey, typename std::list<std::pair<MemoKey, Value>>::iterator, MemoKeyHash> index_;
};

}  // namespace flexjit::jit
