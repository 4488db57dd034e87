// The bounded LRU plan cache: counters, eviction order, failed builds, retained bytes, capacity
// changes, pinned values, eviction callbacks, and a randomized comparison with a reference model.
//
// Documented semantics (read from core/lru_cache.hpp):
//  - ensure(): a hit counts a hit and makes the entry most recently used; a miss counts a miss
//    *before* build() runs, so a build that throws counts a miss but inserts nothing and changes
//    nothing else (entries, order, hits, evictions, clears, retained bytes, no on_evict call).
//  - find(): a hit counts a hit and touches the entry; an absent key counts nothing.
//  - eviction (trim after insert, or set_capacity shrinking) counts evictions and calls on_evict;
//    clear() calls on_evict for every entry and counts one clear, but no evictions.
//  - capacity 0 (constructor or set_capacity) is treated as 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/lru_cache.hpp"

namespace {

using key_vec = std::vector<std::int64_t>;

struct plan {
  int id = 0;
  std::size_t bytes = 0;
};

using cache_t = tnrt::lru_cache<plan>;
using plan_ptr = std::shared_ptr<plan>;

key_vec k(std::int64_t a) { return {a}; }

// A builder that records how many times it was called.
struct counting_builder {
  int* calls;
  int id;
  std::size_t bytes = 0;
  plan_ptr operator()() const {
    ++*calls;
    return std::make_shared<plan>(plan{id, bytes});
  }
};

std::vector<int> ids_of(const cache_t& c) {
  std::vector<int> ids;
  for (const auto& v : c.values()) ids.push_back(v->id);
  return ids;
}

TEST(lru_cache, hits_and_misses_are_counted) {
  cache_t c(4);
  int calls = 0;
  auto p1 = c.ensure(k(1), counting_builder{&calls, 1});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(c.stats().misses, 1u);
  EXPECT_EQ(c.stats().hits, 0u);
  auto p1b = c.ensure(k(1), counting_builder{&calls, 99});
  EXPECT_EQ(calls, 1) << "a hit must not build";
  EXPECT_EQ(p1b.get(), p1.get()) << "a hit returns the cached value";
  EXPECT_EQ(p1b->id, 1);
  EXPECT_EQ(c.stats().hits, 1u);
  EXPECT_EQ(c.stats().misses, 1u);

  auto p2 = c.ensure(k(2), counting_builder{&calls, 2});
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(p2->id, 2);
  EXPECT_EQ(c.stats().misses, 2u);

  // find(): hit counts, absent counts nothing
  EXPECT_EQ(c.find(k(2)).get(), p2.get());
  EXPECT_EQ(c.stats().hits, 2u);
  EXPECT_EQ(c.find(k(3)), nullptr);
  EXPECT_EQ(c.stats().hits, 2u);
  EXPECT_EQ(c.stats().misses, 2u);

  const auto s = c.stats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.capacity, 4u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.clears, 0u);
  EXPECT_EQ(s.retained_bytes, 0u) << "no bytes function: nothing accounted";
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.capacity(), 4u);
}

TEST(lru_cache, keys_compare_in_full) {
  cache_t c(16);
  int calls = 0;
  // Keys that are prefixes, permutations or zero-extensions of each other are all distinct.
  const std::vector<key_vec> keys = {{}, {0}, {0, 0}, {1, 2}, {2, 1}, {1, 2, 0}, {1}, {-1}, {1, 2, 3}, {3, 2, 1}};
  for (std::size_t i = 0; i < keys.size(); ++i) c.ensure(keys[i], counting_builder{&calls, static_cast<int>(i)});
  EXPECT_EQ(c.size(), keys.size());
  EXPECT_EQ(calls, static_cast<int>(keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto p = c.find(keys[i]);
    ASSERT_NE(p, nullptr) << i;
    EXPECT_EQ(p->id, static_cast<int>(i));
  }
}

TEST(lru_cache, eviction_is_least_recently_used_and_touching_protects) {
  std::vector<int> evicted;
  cache_t c(3, [&](plan_ptr& v) { evicted.push_back(v->id); });
  int calls = 0;
  for (int i = 1; i <= 3; ++i) c.ensure(k(i), counting_builder{&calls, i});
  EXPECT_EQ(ids_of(c), (std::vector<int>{3, 2, 1}));
  // touch 1 via ensure: now 2 is the least recently used
  c.ensure(k(1), counting_builder{&calls, -1});
  EXPECT_EQ(ids_of(c), (std::vector<int>{1, 3, 2}));
  c.ensure(k(4), counting_builder{&calls, 4});
  EXPECT_EQ(evicted, (std::vector<int>{2}));
  EXPECT_EQ(ids_of(c), (std::vector<int>{4, 1, 3}));
  // touch 3 via find: now 1 is the least recently used
  ASSERT_NE(c.find(k(3)), nullptr);
  c.ensure(k(5), counting_builder{&calls, 5});
  EXPECT_EQ(evicted, (std::vector<int>{2, 1}));
  EXPECT_EQ(ids_of(c), (std::vector<int>{5, 3, 4}));
  // a miss on an absent find does not touch anything
  EXPECT_EQ(c.find(k(1)), nullptr);
  EXPECT_EQ(ids_of(c), (std::vector<int>{5, 3, 4}));
  EXPECT_EQ(c.stats().evictions, 2u);
  EXPECT_EQ(c.size(), 3u);
  // the evicted key is rebuilt on the next ensure
  const int before = calls;
  auto p2 = c.ensure(k(2), counting_builder{&calls, 22});
  EXPECT_EQ(calls, before + 1);
  EXPECT_EQ(p2->id, 22);
  EXPECT_EQ(evicted, (std::vector<int>{2, 1, 4}));
}

TEST(lru_cache, failed_build_counts_a_miss_and_changes_nothing_else) {
  std::vector<int> evicted;
  cache_t c(2, [&](plan_ptr& v) { evicted.push_back(v->id); }, [](const plan& p) { return p.bytes; });
  int calls = 0;
  c.ensure(k(1), counting_builder{&calls, 1, 100});
  c.ensure(k(2), counting_builder{&calls, 2, 20});
  c.ensure(k(1), counting_builder{&calls, -1, 0});  // hit: order is 1, 2
  const auto before = c.stats();
  const auto order_before = ids_of(c);

  // The cache is full: a successful insert would evict; a failed one must not.
  EXPECT_THROW(c.ensure(k(3), []() -> plan_ptr { throw std::runtime_error("build failed"); }), std::runtime_error);
  const auto after = c.stats();
  EXPECT_EQ(after.misses, before.misses + 1) << "a failed build counts its miss";
  EXPECT_EQ(after.hits, before.hits);
  EXPECT_EQ(after.entries, before.entries);
  EXPECT_EQ(after.evictions, before.evictions);
  EXPECT_EQ(after.clears, before.clears);
  EXPECT_EQ(after.retained_bytes, before.retained_bytes);
  EXPECT_EQ(after.retained_bytes, 120u);
  EXPECT_EQ(ids_of(c), order_before);
  EXPECT_TRUE(evicted.empty());
  EXPECT_EQ(c.find(k(3)), nullptr) << "nothing was inserted for the failed key";

  // A failed build for a key is retried (not cached as a failure) on the next ensure.
  auto p3 = c.ensure(k(3), counting_builder{&calls, 3, 3});
  EXPECT_EQ(p3->id, 3);
  EXPECT_EQ(evicted, (std::vector<int>{2}));
  EXPECT_EQ(c.stats().retained_bytes, 103u);
}

TEST(lru_cache, retained_bytes_track_insert_evict_and_clear) {
  std::size_t evict_calls = 0;
  cache_t c(3, [&](plan_ptr&) { ++evict_calls; }, [](const plan& p) { return p.bytes; });
  int calls = 0;
  c.ensure(k(1), counting_builder{&calls, 1, 1000});
  EXPECT_EQ(c.stats().retained_bytes, 1000u);
  c.ensure(k(2), counting_builder{&calls, 2, 200});
  EXPECT_EQ(c.stats().retained_bytes, 1200u);
  c.ensure(k(3), counting_builder{&calls, 3, 30});
  EXPECT_EQ(c.stats().retained_bytes, 1230u);
  c.ensure(k(1), counting_builder{&calls, -1, 7});  // hit: no change
  EXPECT_EQ(c.stats().retained_bytes, 1230u);
  c.ensure(k(4), counting_builder{&calls, 4, 4});  // evicts 2
  EXPECT_EQ(c.stats().retained_bytes, 1034u);
  c.ensure(k(5), counting_builder{&calls, 5, 0});  // evicts 3; zero-byte values are fine
  EXPECT_EQ(c.stats().retained_bytes, 1004u);
  EXPECT_EQ(c.stats().evictions, 2u);
  c.clear();
  EXPECT_EQ(c.stats().retained_bytes, 0u);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.stats().clears, 1u);
  EXPECT_EQ(c.stats().evictions, 2u) << "clear() drops entries without counting evictions";
  EXPECT_EQ(evict_calls, 5u) << "on_evict sees every dropped entry, cleared ones included";
  EXPECT_TRUE(c.values().empty());
  // usable after clear; clearing an empty cache counts a clear and calls nothing
  c.clear();
  EXPECT_EQ(c.stats().clears, 2u);
  EXPECT_EQ(evict_calls, 5u);
  c.ensure(k(1), counting_builder{&calls, 1, 8});
  EXPECT_EQ(c.stats().retained_bytes, 8u);
  EXPECT_EQ(c.stats().misses, 6u);
}

TEST(lru_cache, shrinking_capacity_evicts_oldest_and_reaccounts) {
  std::vector<int> evicted;
  cache_t c(5, [&](plan_ptr& v) { evicted.push_back(v->id); }, [](const plan& p) { return p.bytes; });
  int calls = 0;
  for (int i = 1; i <= 5; ++i) c.ensure(k(i), counting_builder{&calls, i, static_cast<std::size_t>(i) * 10});
  EXPECT_EQ(c.stats().retained_bytes, 150u);
  c.find(k(1));  // order: 1 5 4 3 2
  c.set_capacity(2);
  EXPECT_EQ(c.capacity(), 2u);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(evicted, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(ids_of(c), (std::vector<int>{1, 5}));
  EXPECT_EQ(c.stats().retained_bytes, 60u);
  EXPECT_EQ(c.stats().evictions, 3u);
  // growing evicts nothing and lets the cache fill again
  c.set_capacity(4);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(evicted.size(), 3u);
  c.ensure(k(6), counting_builder{&calls, 6, 60});
  c.ensure(k(7), counting_builder{&calls, 7, 70});
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c.stats().retained_bytes, 190u);
  EXPECT_EQ(evicted.size(), 3u);
  // the same capacity is a no-op
  c.set_capacity(4);
  EXPECT_EQ(c.size(), 4u);
  EXPECT_EQ(c.stats().evictions, 3u);
  // zero is treated as one: keeps the most recently used
  c.set_capacity(0);
  EXPECT_EQ(c.capacity(), 1u);
  EXPECT_EQ(ids_of(c), (std::vector<int>{7}));
  EXPECT_EQ(c.stats().retained_bytes, 70u);
  EXPECT_EQ(c.stats().evictions, 6u);
  EXPECT_EQ(evicted, (std::vector<int>{2, 3, 4, 5, 1, 6})) << "order before: 7 6 1 5";
}

TEST(lru_cache, capacity_zero_is_treated_as_one) {
  std::vector<int> evicted;
  cache_t c(0, [&](plan_ptr& v) { evicted.push_back(v->id); });
  EXPECT_EQ(c.capacity(), 1u);
  EXPECT_EQ(c.stats().capacity, 1u);
  int calls = 0;
  auto p1 = c.ensure(k(1), counting_builder{&calls, 1});
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p1->id, 1) << "the freshly built value is kept and returned";
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.ensure(k(1), counting_builder{&calls, -1}).get(), p1.get());
  EXPECT_EQ(calls, 1);
  auto p2 = c.ensure(k(2), counting_builder{&calls, 2});
  EXPECT_EQ(p2->id, 2);
  EXPECT_EQ(evicted, (std::vector<int>{1}));
  EXPECT_EQ(ids_of(c), (std::vector<int>{2}));
  EXPECT_EQ(c.stats().hits, 1u);
  EXPECT_EQ(c.stats().misses, 2u);
  EXPECT_EQ(c.stats().evictions, 1u);
}

TEST(lru_cache, pinned_values_survive_eviction) {
  std::vector<int> evicted;
  cache_t c(1, [&](plan_ptr& v) { evicted.push_back(v->id); }, [](const plan& p) { return p.bytes; });
  int calls = 0;
  plan_ptr pinned = c.ensure(k(1), counting_builder{&calls, 1, 64});
  std::weak_ptr<plan> weak_pinned = pinned;
  std::weak_ptr<plan> weak_unpinned;
  {
    auto p2 = c.ensure(k(2), counting_builder{&calls, 2, 32});  // evicts 1, still held by `pinned`
    weak_unpinned = p2;
  }
  EXPECT_EQ(evicted, (std::vector<int>{1}));
  ASSERT_FALSE(weak_pinned.expired());
  EXPECT_EQ(pinned->id, 1);
  EXPECT_EQ(pinned->bytes, 64u);
  EXPECT_EQ(pinned.use_count(), 1) << "the cache let go of the evicted value";
  EXPECT_EQ(c.stats().retained_bytes, 32u) << "a pinned value is no longer the cache's bytes";
  EXPECT_EQ(c.size(), 1u) << "pinning does not let the cache grow past its bound";
  EXPECT_FALSE(weak_unpinned.expired()) << "still cached";
  c.ensure(k(3), counting_builder{&calls, 3, 16});
  EXPECT_TRUE(weak_unpinned.expired()) << "an unpinned evicted value is freed";
  // The pinned key is gone from the cache: asking again builds a new value, distinct from the pin.
  auto again = c.ensure(k(1), counting_builder{&calls, 11, 64});
  EXPECT_NE(again.get(), pinned.get());
  EXPECT_EQ(again->id, 11);
  EXPECT_EQ(pinned->id, 1);
  // clear() also lets go without touching held values
  c.clear();
  EXPECT_EQ(again->id, 11);
  EXPECT_EQ(again.use_count(), 1);
}

TEST(lru_cache, on_evict_called_once_per_dropped_entry_before_release) {
  std::map<int, int> evict_count;
  std::vector<long> use_counts_seen;
  cache_t c(2, [&](plan_ptr& v) {
    ASSERT_NE(v, nullptr);
    ++evict_count[v->id];
    use_counts_seen.push_back(v.use_count());
  });
  int calls = 0;
  for (int i = 0; i < 10; ++i) c.ensure(k(i), counting_builder{&calls, i});  // evicts 0..7
  c.set_capacity(1);                                                          // evicts 8
  c.clear();                                                                  // drops 9
  ASSERT_EQ(evict_count.size(), 10u);
  for (const auto& [id, n] : evict_count) EXPECT_EQ(n, 1) << "entry " << id;
  // The callback runs while the cache still holds the value (the only owner here).
  for (long u : use_counts_seen) EXPECT_GE(u, 1);
  EXPECT_EQ(c.stats().evictions, 9u);
  EXPECT_EQ(c.stats().clears, 1u);
  // Hits and failed builds never call it.
  evict_count.clear();
  c.set_capacity(3);
  c.ensure(k(1), counting_builder{&calls, 1});
  c.ensure(k(1), counting_builder{&calls, 1});
  EXPECT_THROW(c.ensure(k(2), []() -> plan_ptr { throw std::logic_error("no"); }), std::logic_error);
  EXPECT_TRUE(evict_count.empty());
}

TEST(lru_cache, on_evict_may_take_ownership) {
  // The callback gets the value by reference: it may move it out (e.g. to a deferred-release list)
  // and the cache must still drop the entry cleanly.
  std::vector<plan_ptr> graveyard;
  cache_t c(1, [&](plan_ptr& v) { graveyard.push_back(std::move(v)); }, [](const plan& p) { return p.bytes; });
  int calls = 0;
  c.ensure(k(1), counting_builder{&calls, 1, 5});
  c.ensure(k(2), counting_builder{&calls, 2, 7});
  ASSERT_EQ(graveyard.size(), 1u);
  ASSERT_NE(graveyard[0], nullptr);
  EXPECT_EQ(graveyard[0]->id, 1);
  EXPECT_EQ(graveyard[0].use_count(), 1);
  EXPECT_EQ(c.stats().retained_bytes, 7u);
  c.clear();
  ASSERT_EQ(graveyard.size(), 2u);
  EXPECT_EQ(graveyard[1]->id, 2);
  EXPECT_EQ(c.stats().retained_bytes, 0u);
}

// Everything hashes to the same bucket: only full-key comparison tells entries apart.
struct colliding_hash {
  std::size_t operator()(const key_vec&) const noexcept { return 0; }
};

TEST(lru_cache, hash_collisions_never_return_a_wrong_value) {
  tnrt::lru_cache<plan, key_vec, colliding_hash> c(64);
  std::mt19937_64 rng(12345);
  std::map<key_vec, int> truth;
  int next_id = 0;
  // Structurally close keys: all words in {0,1}, lengths 0..5 (63 keys), so everything fits.
  std::vector<key_vec> keys;
  for (std::size_t len = 0; len <= 5; ++len)
    for (std::uint32_t bits = 0; bits < (1u << len); ++bits) {
      key_vec key;
      for (std::size_t i = 0; i < len; ++i) key.push_back((bits >> i) & 1u);
      keys.push_back(key);
    }
  ASSERT_EQ(keys.size(), 63u);
  std::uint64_t builds = 0;
  for (int round = 0; round < 2000; ++round) {
    const key_vec& key = keys[rng() % keys.size()];
    auto p = c.ensure(key, [&] {
      ++builds;
      truth[key] = next_id;
      return std::make_shared<plan>(plan{next_id++, 0});
    });
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p->id, truth.at(key)) << "wrong value for a colliding key at round " << round;
  }
  EXPECT_EQ(builds, truth.size()) << "every key built exactly once (capacity holds all keys)";
  EXPECT_EQ(c.stats().evictions, 0u);
  for (const auto& [key, id] : truth) {
    auto p = c.find(key);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->id, id);
  }
  // an absent colliding key is a miss, not somebody else's value
  EXPECT_EQ(c.find(key_vec{0, 0, 0, 0, 0, 0}), nullptr);
  EXPECT_EQ(c.find(key_vec{2}), nullptr);
}

TEST(lru_cache, hash_collisions_with_eviction_match_reference) {
  // Colliding hash and a small capacity: eviction must erase exactly the evicted key.
  std::vector<int> evicted;
  tnrt::lru_cache<plan, key_vec, colliding_hash> c(3, [&](std::shared_ptr<plan>& v) { evicted.push_back(v->id); });
  std::mt19937_64 rng(777);
  std::list<std::pair<key_vec, int>> model;  // front = most recently used
  int next_id = 0;
  for (int round = 0; round < 3000; ++round) {
    const key_vec key = {static_cast<std::int64_t>(rng() % 3), static_cast<std::int64_t>(rng() % 3)};
    auto it = std::find_if(model.begin(), model.end(), [&](const auto& e) { return e.first == key; });
    int expect_id;
    std::vector<int> expect_evicted;
    if (it != model.end()) {
      expect_id = it->second;
      model.splice(model.begin(), model, it);
    } else {
      expect_id = next_id;
      model.emplace_front(key, next_id);
      if (model.size() > 3) {
        expect_evicted.push_back(model.back().second);
        model.pop_back();
      }
    }
    evicted.clear();
    auto p = c.ensure(key, [&] { return std::make_shared<plan>(plan{next_id++, 0}); });
    ASSERT_EQ(p->id, expect_id) << "round " << round;
    ASSERT_EQ(evicted, expect_evicted) << "round " << round;
  }
}

TEST(lru_cache, key_hash_spreads_small_structural_keys) {
  // Not a correctness requirement (collisions are resolved by comparison), but structurally close
  // keys should not collide: permutations, prefixes, trailing zeros, sign flips.
  tnrt::key_hash h;
  std::set<std::size_t> seen;
  std::size_t n = 0;
  for (std::size_t len = 0; len <= 4; ++len) {
    std::size_t combos = 1;
    for (std::size_t i = 0; i < len; ++i) combos *= 7;
    for (std::size_t c = 0; c < combos; ++c) {
      key_vec key;
      std::size_t x = c;
      for (std::size_t i = 0; i < len; ++i) {
        key.push_back(static_cast<std::int64_t>(x % 7) - 3);
        x /= 7;
      }
      seen.insert(h(key));
      ++n;
    }
  }
  EXPECT_EQ(seen.size(), n);
  EXPECT_EQ(h(key_vec{1, 2}), h(key_vec{1, 2})) << "deterministic";
}

// ---- randomized comparison with a reference model -------------------------------------------

struct model_entry {
  std::int64_t key;
  int id;
  std::size_t bytes;
};

struct reference_lru {
  std::size_t capacity;
  std::list<model_entry> order;  // front = most recently used
  std::uint64_t hits = 0, misses = 0, evictions = 0, clears = 0;
  std::vector<int> dropped;  // ids in on_evict order

  std::list<model_entry>::iterator locate(std::int64_t key) {
    return std::find_if(order.begin(), order.end(), [&](const model_entry& e) { return e.key == key; });
  }
  void trim() {
    while (order.size() > capacity) {
      dropped.push_back(order.back().id);
      order.pop_back();
      ++evictions;
    }
  }
  std::size_t bytes() const {
    std::size_t b = 0;
    for (const auto& e : order) b += e.bytes;
    return b;
  }
};

std::string describe_model(const reference_lru& m) {
  std::ostringstream os;
  os << "capacity " << m.capacity << ", order (mru first):";
  for (const auto& e : m.order) os << " " << e.key << "#" << e.id;
  return os.str();
}

void run_random_ops(std::uint64_t seed, std::size_t initial_capacity, std::int64_t key_space, int ops) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", initial capacity " + std::to_string(initial_capacity) +
               ", key space " + std::to_string(key_space));
  std::mt19937_64 rng(seed);
  std::vector<int> dropped;
  cache_t c(
      initial_capacity, [&](plan_ptr& v) { dropped.push_back(v->id); }, [](const plan& p) { return p.bytes; });
  reference_lru m{initial_capacity == 0 ? 1 : initial_capacity, {}, 0, 0, 0, 0, {}};
  std::vector<plan_ptr> pins;  // some values are held outside the cache
  std::map<int, std::size_t> bytes_of_id;
  int next_id = 0;

  for (int op = 0; op < ops; ++op) {
    const std::uint64_t r = rng() % 100;
    const std::int64_t key = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(key_space));
    std::string what;
    if (r < 60) {  // ensure, maybe with a failing build
      const bool fail = rng() % 10 == 0;
      const std::size_t bytes = static_cast<std::size_t>(rng() % 1000);
      what = "ensure " + std::to_string(key) + (fail ? " (failing)" : "");
      auto it = m.locate(key);
      const bool was_absent = it == m.order.end();
      int expect_id = -1;
      bool expect_throw = false;
      if (it != m.order.end()) {
        ++m.hits;
        expect_id = it->id;
        m.order.splice(m.order.begin(), m.order, it);
      } else {
        ++m.misses;
        if (fail) {
          expect_throw = true;
        } else {
          expect_id = next_id;
          m.order.push_front({key, next_id, bytes});
          m.trim();
        }
      }
      bool built = false;
      auto build = [&]() -> plan_ptr {
        built = true;
        if (fail) throw std::runtime_error("injected");
        bytes_of_id[next_id] = bytes;
        return std::make_shared<plan>(plan{next_id++, bytes});
      };
      plan_ptr p;
      if (expect_throw) {
        ASSERT_THROW(c.ensure(k(key), build), std::runtime_error) << "op " << op << ": " << what;
      } else {
        ASSERT_NO_THROW(p = c.ensure(k(key), build)) << "op " << op << ": " << what;
        ASSERT_NE(p, nullptr);
        ASSERT_EQ(p->id, expect_id) << "op " << op << ": " << what;
        if (rng() % 8 == 0) pins.push_back(p);
      }
      ASSERT_EQ(built, was_absent) << "op " << op << ": " << what;
    } else if (r < 80) {  // find
      what = "find " + std::to_string(key);
      auto it = m.locate(key);
      auto p = c.find(k(key));
      if (it == m.order.end()) {
        ASSERT_EQ(p, nullptr) << "op " << op << ": " << what;
      } else {
        ++m.hits;
        ASSERT_NE(p, nullptr) << "op " << op << ": " << what;
        ASSERT_EQ(p->id, it->id) << "op " << op << ": " << what;
        m.order.splice(m.order.begin(), m.order, it);
      }
    } else if (r < 95) {  // set_capacity
      const std::size_t cap = static_cast<std::size_t>(rng() % 9);  // 0..8, 0 means 1
      what = "set_capacity " + std::to_string(cap);
      c.set_capacity(cap);
      m.capacity = cap == 0 ? 1 : cap;
      m.trim();
    } else {  // clear
      what = "clear";
      c.clear();
      for (auto e = m.order.rbegin(); e != m.order.rend(); ++e) m.dropped.push_back(e->id);  // LRU first
      m.order.clear();
      ++m.clears;
    }

    // compare everything after every operation
    const auto s = c.stats();
    ASSERT_EQ(s.entries, m.order.size()) << "op " << op << ": " << what << "; " << describe_model(m);
    ASSERT_EQ(c.size(), m.order.size());
    ASSERT_EQ(s.capacity, m.capacity);
    ASSERT_EQ(c.capacity(), m.capacity);
    ASSERT_LE(s.entries, s.capacity);
    ASSERT_EQ(s.hits, m.hits) << "op " << op << ": " << what;
    ASSERT_EQ(s.misses, m.misses) << "op " << op << ": " << what;
    ASSERT_EQ(s.evictions, m.evictions) << "op " << op << ": " << what;
    ASSERT_EQ(s.clears, m.clears) << "op " << op << ": " << what;
    ASSERT_EQ(s.retained_bytes, m.bytes()) << "op " << op << ": " << what << "; " << describe_model(m);
    std::vector<int> expect_ids;
    for (const auto& e : m.order) expect_ids.push_back(e.id);
    ASSERT_EQ(ids_of(c), expect_ids) << "op " << op << ": " << what << "; " << describe_model(m);
    ASSERT_EQ(dropped, m.dropped) << "op " << op << ": " << what;
  }
  // Pinned values are intact whatever happened to their entries.
  for (const auto& p : pins) {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->bytes, bytes_of_id.at(p->id));
  }
  // Every id was dropped at most once.
  std::set<int> unique(dropped.begin(), dropped.end());
  EXPECT_EQ(unique.size(), dropped.size());
  // Dropped + still cached = everything ever built.
  EXPECT_EQ(dropped.size() + c.size(), static_cast<std::size_t>(next_id));
}

TEST(lru_cache, random_operations_match_reference_model) {
  const std::uint64_t seeds[] = {1, 2, 3, 42, 1234, 99991, 0xC0FFEE, 0xDEADBEEF};
  for (std::uint64_t seed : seeds) {
    for (std::size_t cap : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{8}}) {
      for (std::int64_t key_space : {std::int64_t{4}, std::int64_t{12}, std::int64_t{40}}) {
        run_random_ops(seed, cap, key_space, 1500);
        if (HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
