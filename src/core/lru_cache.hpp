#pragma once
// A bounded LRU map keyed by a structural key (never a pointer), with hit/miss/eviction counters.
// Values are held by shared_ptr: a compiled program that holds an entry keeps it alive even after
// the LRU drops it, so "pinned" plans survive eviction without the cache growing past its bound.
// A failed build leaves the cache unchanged. Not thread-safe: the owner serializes access (the
// CUDA backend already serializes host enqueue).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace tnrt {

/// FNV-1a over the words of a structural key.
struct key_hash {
  std::size_t operator()(const std::vector<std::int64_t>& k) const noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    for (std::int64_t w : k) {
      h ^= static_cast<std::uint64_t>(w);
      h *= 1099511628211ULL;
      h ^= h >> 29;
    }
    return static_cast<std::size_t>(h);
  }
};

struct lru_stats {
  std::size_t entries = 0, capacity = 0;
  std::uint64_t hits = 0, misses = 0, evictions = 0, clears = 0;
  std::size_t retained_bytes = 0;
};

template <class Value, class Key = std::vector<std::int64_t>, class Hash = key_hash>
class lru_cache {
 public:
  using value_ptr = std::shared_ptr<Value>;
  /// Called with each entry the cache drops (eviction, shrink, clear), before the cache lets go.
  using evict_fn = std::function<void(value_ptr&)>;
  using bytes_fn = std::function<std::size_t(const Value&)>;

  explicit lru_cache(std::size_t capacity, evict_fn on_evict = {}, bytes_fn bytes = {})
      : capacity_(capacity == 0 ? 1 : capacity), on_evict_(std::move(on_evict)), bytes_(std::move(bytes)) {}

  /// The value for `key`, built by `build()` (returning value_ptr) on a miss. The hit path hashes
  /// the key once and compares it in full.
  template <class Build>
  value_ptr ensure(const Key& key, Build&& build) {
    if (auto it = map_.find(key); it != map_.end()) {
      ++hits_;
      order_.splice(order_.begin(), order_, it->second);
      return it->second->value;
    }
    ++misses_;
    value_ptr v = build();  // may throw: nothing changed yet
    order_.push_front(node{key, v});
    try {
      map_.emplace(key, order_.begin());
    } catch (...) {
      order_.pop_front();
      throw;
    }
    if (bytes_) retained_bytes_ += bytes_(*v);
    trim();
    return v;
  }

  /// Lookup without building (does not count a miss when absent).
  value_ptr find(const Key& key) {
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    ++hits_;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->value;
  }

  void set_capacity(std::size_t capacity) {
    capacity_ = capacity == 0 ? 1 : capacity;
    trim();
  }
  void clear() {
    while (!order_.empty()) drop_back();
    ++clears_;
  }

  [[nodiscard]] lru_stats stats() const noexcept {
    return {map_.size(), capacity_, hits_, misses_, evictions_, clears_, retained_bytes_};
  }
  [[nodiscard]] std::size_t size() const noexcept { return map_.size(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  /// Values from most to least recently used.
  [[nodiscard]] std::vector<value_ptr> values() const {
    std::vector<value_ptr> v;
    for (const auto& n : order_) v.push_back(n.value);
    return v;
  }

 private:
  struct node {
    Key key;
    value_ptr value;
  };
  void trim() {
    while (map_.size() > capacity_) {
      drop_back();
      ++evictions_;
    }
  }
  void drop_back() {
    node& n = order_.back();
    if (bytes_) retained_bytes_ -= bytes_(*n.value);
    if (on_evict_) on_evict_(n.value);
    map_.erase(n.key);
    order_.pop_back();
  }

  std::size_t capacity_;
  evict_fn on_evict_;
  bytes_fn bytes_;
  std::list<node> order_;
  std::unordered_map<Key, typename std::list<node>::iterator, Hash> map_;
  std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0, clears_ = 0;
  std::size_t retained_bytes_ = 0;
};

}  // namespace tnrt
