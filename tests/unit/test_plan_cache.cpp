// The structural plan cache over the contraction-library seam, on the fake library: hits, misses,
// LRU order, full-key compare (two keys with one hash), capacity changes, clear, the graveyard
// (bounded, destroyed at destroy_evicted), pinned plans, failed builds, and a randomized run
// against a reference LRU model with the counters balanced after every operation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/lru_cache.hpp"
#include "device/plan_cache.hpp"
#include "support/fake_library.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

using device::plan_cache;
using device::plan_options;
using test::fake_library;

// D() = sum_i A(i): one mode of extent `extent` and stride `stride` (the fake never reads memory).
lowered_step reduction(std::int64_t extent, std::int64_t stride = 1) {
  lowered_step s;
  s.kind = lowered_kind::reduction;
  s.a = {{0}, {extent}, {stride}};
  return s;
}

const fake_library::fake_plan& as_fake(const std::shared_ptr<device::library_plan>& p) {
  return dynamic_cast<const fake_library::fake_plan&>(*p);
}

std::vector<std::int64_t> key_of(const lowered_step& s, dtype t = dtype::f32, const plan_options& o = {}) {
  std::vector<std::int64_t> k;
  plan_cache::key_into(s, t, o, k);
  return k;
}

TEST(PlanCache, MissBuildsThenHitReturnsTheSamePlan) {
  fake_library lib;
  plan_cache cache(lib, 4);
  auto p1 = cache.plan(reduction(3), dtype::f64, {});
  auto p2 = cache.plan(reduction(3), dtype::f64, {});
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(lib.stats().builds, 1U);
  const auto s = cache.stats();
  EXPECT_EQ(s.misses, 1U);
  EXPECT_EQ(s.hits, 1U);
  EXPECT_EQ(s.entries, 1U);
  EXPECT_EQ(s.capacity, 4U);
  EXPECT_EQ(s.retained_bytes, plan_cache::plan_metadata_bytes);
  EXPECT_EQ(as_fake(p1).key(), key_of(reduction(3), dtype::f64));
}

TEST(PlanCache, TypeAndEveryPlanOptionArePartOfTheKey) {
  fake_library lib;
  plan_cache cache(lib, 16);
  const lowered_step s = reduction(5);
  std::vector<std::shared_ptr<device::library_plan>> got;
  got.push_back(cache.plan(s, dtype::f32, {}));
  got.push_back(cache.plan(s, dtype::c64, {}));
  got.push_back(cache.plan(s, dtype::f32, {.jit = true}));
  got.push_back(cache.plan(s, dtype::f32, {.autotune = true}));
  got.push_back(cache.plan(s, dtype::f32, {.algo = -4}));
  got.push_back(cache.plan(s, dtype::f32, {.alignment = 16}));
  got.push_back(cache.plan(s, dtype::f32, {.kernel_rank = 1}));
  got.push_back(cache.plan(reduction(5, 2), dtype::f32, {}));  // strides too
  for (std::size_t i = 0; i < got.size(); ++i)
    for (std::size_t j = i + 1; j < got.size(); ++j) EXPECT_NE(got[i], got[j]) << i << " and " << j << " share a plan";
  EXPECT_EQ(lib.stats().builds, got.size());
  EXPECT_EQ(cache.stats().hits, 0U);
}

TEST(PlanCache, EvictsTheLeastRecentlyUsed) {
  fake_library lib;
  plan_cache cache(lib, 3);
  auto p0 = cache.plan(reduction(1), dtype::f32, {});
  auto p1 = cache.plan(reduction(2), dtype::f32, {});
  auto p2 = cache.plan(reduction(3), dtype::f32, {});
  EXPECT_EQ(cache.plan(reduction(1), dtype::f32, {}), p0);  // p0 most recent: order p0 p2 p1
  auto p3 = cache.plan(reduction(4), dtype::f32, {});       // evicts p1
  EXPECT_EQ(cache.stats().evictions, 1U);
  const std::vector<std::shared_ptr<device::library_plan>> want{p3, p0, p2};
  EXPECT_EQ(cache.plans(), want);
  const auto builds = lib.stats().builds;
  EXPECT_EQ(cache.plan(reduction(3), dtype::f32, {}), p2);
  EXPECT_EQ(cache.plan(reduction(1), dtype::f32, {}), p0);
  EXPECT_EQ(lib.stats().builds, builds) << "a kept entry was rebuilt";
  EXPECT_NE(cache.plan(reduction(2), dtype::f32, {}), p1) << "the evicted entry came back without a build";
  EXPECT_EQ(lib.stats().builds, builds + 1);
}

// The compute precision is part of the key: a TF32 plan never serves a full-precision step.
TEST(PlanCache, PrecisionIsPartOfTheKey) {
  fake_library lib;
  plan_cache cache(lib, 4);
  plan_options full, tf32;
  tf32.precision = 1;
  auto a = cache.plan(reduction(3), dtype::f32, full);
  auto b = cache.plan(reduction(3), dtype::f32, tf32);
  EXPECT_NE(a, b);
  EXPECT_EQ(cache.plan(reduction(3), dtype::f32, full), a);
  EXPECT_EQ(cache.stats().misses, 2U);
}

TEST(PlanCache, KeysWithOneHashStayApart) {
  // FNV-1a with a xor-shift is a bijection per word, so two keys that differ in the extent word
  // collide when the stride word right after it cancels the difference of the running states.
  const lowered_step s1 = reduction(7, 1);
  const std::vector<std::int64_t> k1 = key_of(s1);
  const std::size_t extent_at = 3, stride_at = 4;  // kind, rank, mode, extent, stride, ...
  ASSERT_EQ(k1[extent_at], 7);
  ASSERT_EQ(k1[stride_at], 1);
  const key_hash h;
  auto state_after = [&](std::vector<std::int64_t> k, std::int64_t extent) {
    k.resize(extent_at + 1);
    k[extent_at] = extent;
    return static_cast<std::uint64_t>(h(k));
  };
  const std::int64_t stride2 = static_cast<std::int64_t>(1U ^ state_after(k1, 7) ^ state_after(k1, 9));
  const lowered_step s2 = reduction(9, stride2);
  const std::vector<std::int64_t> k2 = key_of(s2);
  ASSERT_NE(k1, k2);
  ASSERT_EQ(h(k1), h(k2)) << "the constructed keys do not collide; the test proves nothing";

  fake_library lib;
  plan_cache cache(lib, 8);
  auto p1 = cache.plan(s1, dtype::f32, {});
  auto p2 = cache.plan(s2, dtype::f32, {});
  EXPECT_NE(p1, p2) << "two keys with one hash share a plan";
  EXPECT_EQ(as_fake(p1).key(), k1);
  EXPECT_EQ(as_fake(p2).key(), k2);
  EXPECT_EQ(cache.plan(s1, dtype::f32, {}), p1);
  EXPECT_EQ(cache.plan(s2, dtype::f32, {}), p2);
  EXPECT_EQ(cache.stats().misses, 2U);
  EXPECT_EQ(cache.stats().hits, 2U);
}

TEST(PlanCache, CapacityChanges) {
  fake_library lib;
  plan_cache cache(lib, 4);
  std::vector<std::shared_ptr<device::library_plan>> p;
  for (int i = 1; i <= 4; ++i) p.push_back(cache.plan(reduction(i), dtype::f32, {}));
  cache.set_capacity(8);  // growing evicts nothing
  EXPECT_EQ(cache.stats().evictions, 0U);
  EXPECT_EQ(cache.stats().capacity, 8U);
  cache.set_capacity(2);  // shrinking keeps the two most recent
  EXPECT_EQ(cache.stats().evictions, 2U);
  EXPECT_EQ(cache.stats().entries, 2U);
  EXPECT_EQ(cache.stats().retained_bytes, 2 * plan_cache::plan_metadata_bytes);
  EXPECT_EQ(cache.plans(), (std::vector<std::shared_ptr<device::library_plan>>{p[3], p[2]}));
  EXPECT_EQ(cache.evicted_pending(), 2U);
  cache.set_capacity(0);  // 0 means 1
  EXPECT_EQ(cache.stats().capacity, 1U);
  EXPECT_EQ(cache.plans(), (std::vector<std::shared_ptr<device::library_plan>>{p[3]}));
  plan_cache zero(lib, 0);
  EXPECT_EQ(zero.stats().capacity, 1U);
}

TEST(PlanCache, ClearMovesEveryEntryToTheGraveyard) {
  fake_library lib;
  plan_cache cache(lib, 8);
  for (int i = 1; i <= 5; ++i) (void)cache.plan(reduction(i), dtype::f32, {});
  cache.clear();
  auto s = cache.stats();
  EXPECT_EQ(s.entries, 0U);
  EXPECT_EQ(s.clears, 1U);
  EXPECT_EQ(s.evictions, 0U);
  EXPECT_EQ(s.retained_bytes, 0U);
  EXPECT_EQ(cache.evicted_pending(), 5U);
  EXPECT_EQ(lib.stats().destroys, 0U) << "cleared plans were destroyed before destroy_evicted";
  cache.destroy_evicted();
  EXPECT_EQ(lib.stats().destroys, 5U);
  EXPECT_EQ(cache.evicted_pending(), 0U);
  (void)cache.plan(reduction(1), dtype::f32, {});
  EXPECT_EQ(lib.stats().builds, 6U) << "a cleared entry was found again";
}

TEST(PlanCache, GraveyardIsBoundedAndDestroyedOnlyWhenAsked) {
  fake_library lib;
  plan_cache cache(lib, 1);
  const auto limit = static_cast<int>(plan_cache::graveyard_limit);
  for (int i = 0; i <= limit; ++i) (void)cache.plan(reduction(i + 1), dtype::f32, {});
  EXPECT_EQ(cache.stats().evictions, plan_cache::graveyard_limit);
  EXPECT_EQ(cache.evicted_pending(), plan_cache::graveyard_limit);
  EXPECT_EQ(lib.stats().destroys, 0U) << "an evicted plan was destroyed before the graveyard was full";
  (void)cache.plan(reduction(limit + 2), dtype::f32, {});  // one past the bound: all of it goes
  EXPECT_EQ(cache.evicted_pending(), 0U);
  EXPECT_EQ(lib.stats().destroys, plan_cache::graveyard_limit + 1);
  EXPECT_EQ(lib.stats().live(), 1U);
}

TEST(PlanCache, APinnedPlanOutlivesEvictionAndDestroy) {
  fake_library lib;
  plan_cache cache(lib, 1);
  std::shared_ptr<device::library_plan> pinned = cache.plan(reduction(1), dtype::f32, {});
  (void)cache.plan(reduction(2), dtype::f32, {});  // evicts the pinned one
  cache.destroy_evicted();
  EXPECT_EQ(lib.stats().destroys, 0U) << "a plan a program still holds was destroyed";
  lib.enqueue(*pinned, nullptr, nullptr, nullptr, nullptr, pinned->workspace_bytes(), nullptr);
  EXPECT_EQ(lib.last_enqueued(), &as_fake(pinned));
  pinned.reset();
  EXPECT_EQ(lib.stats().destroys, 1U);
}

TEST(PlanCache, WorkspaceComesFromTheLibrary) {
  fake_library lib;
  lib.set_workspace(
      [](const lowered_step& s, dtype t) { return static_cast<std::uint64_t>(s.a.extents[0]) * size_of(t); });
  plan_cache cache(lib, 4);
  EXPECT_EQ(cache.plan(reduction(10), dtype::c128, {})->workspace_bytes(), 160U);
  lib.set_workspace(std::uint64_t{1} << 20);
  EXPECT_EQ(cache.plan(reduction(10), dtype::c128, {})->workspace_bytes(), 160U) << "a hit rebuilt the plan";
  EXPECT_EQ(cache.plan(reduction(11), dtype::c128, {})->workspace_bytes(), std::uint64_t{1} << 20);
}

TEST(PlanCache, AFailedBuildLeavesTheCacheAsItWas) {
  fake_library lib;
  plan_cache cache(lib, 2);
  auto p1 = cache.plan(reduction(1), dtype::f32, {});
  auto p2 = cache.plan(reduction(2), dtype::f32, {});
  const auto before = cache.stats();
  const auto order = cache.plans();

  lib.fail_next(1);
  EXPECT_THROW((void)cache.plan(reduction(3), dtype::f32, {}), device_error);
  cache.inject_failures(1);
  try {
    (void)cache.plan(reduction(3), dtype::f32, {});
    ADD_FAILURE() << "the injected failure did not surface";
  } catch (const device_error& e) {
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lib.stats().failures, 1U) << "an injected failure reached the library";
  EXPECT_EQ(cache.failed_builds(), 2U);

  const auto after = cache.stats();
  EXPECT_EQ(after.entries, before.entries);
  EXPECT_EQ(after.hits, before.hits);
  EXPECT_EQ(after.misses, before.misses + 2);  // a miss is counted before the build
  EXPECT_EQ(after.evictions, before.evictions);
  EXPECT_EQ(after.retained_bytes, before.retained_bytes);
  EXPECT_EQ(cache.plans(), order);
  EXPECT_EQ(cache.evicted_pending(), 0U);

  auto p3 = cache.plan(reduction(3), dtype::f32, {});  // builds now, evicting p1 (the LRU)
  EXPECT_EQ(cache.plans(), (std::vector<std::shared_ptr<device::library_plan>>{p3, p2}));
}

// Random operations against a reference LRU model; after each: the same keys in the same order,
// and the counters balance (misses = builds + failed builds; builds = entries + dropped; destroyed =
// dropped - waiting in the graveyard, nobody else holding a plan).
TEST(PlanCache, RandomOperationsMatchAModelAndCountersBalance) {
  for (std::uint32_t seed : {1U, 2U, 3U}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    fake_library lib;
    std::size_t capacity = 4;
    plan_cache cache(lib, capacity);
    std::list<std::int64_t> model;  // extents, most recent first
    std::uint64_t calls = 0, cleared = 0, model_hits = 0, model_evictions = 0;
    auto trim = [&] {
      while (model.size() > capacity) {
        model.pop_back();
        ++model_evictions;
      }
    };
    for (int step = 0; step < 4000; ++step) {
      const int op = static_cast<int>(rng() % 100);
      if (op < 80) {
        const auto e = static_cast<std::int64_t>(1 + rng() % 12);
        const bool fail = rng() % 10 == 0;
        if (fail) lib.fail_next(1);
        ++calls;
        auto it = std::find(model.begin(), model.end(), e);
        const bool hit = it != model.end();
        try {
          auto p = cache.plan(reduction(e), dtype::f64, {});
          ASSERT_FALSE(fail && !hit) << "a failing build returned a plan";
          EXPECT_EQ(as_fake(p).key(), key_of(reduction(e), dtype::f64));
        } catch (const device_error&) {
          ASSERT_TRUE(fail && !hit) << "unexpected failure";
        }
        if (fail) lib.fail_next(0);
        if (hit) {
          ++model_hits;
          model.splice(model.begin(), model, it);
        } else if (!fail) {
          model.push_front(e);
          trim();
        }
      } else if (op < 90) {
        capacity = rng() % 7;  // 0 means 1
        cache.set_capacity(capacity);
        capacity = std::max<std::size_t>(capacity, 1);
        trim();
      } else if (op < 94) {
        cleared += model.size();
        model.clear();
        cache.clear();
      } else {
        cache.destroy_evicted();
      }
      std::vector<std::int64_t> got;
      for (const auto& p : cache.plans()) got.push_back(as_fake(p).key()[3]);
      ASSERT_EQ(got, std::vector<std::int64_t>(model.begin(), model.end())) << "at step " << step;
      const auto s = cache.stats();
      const auto& l = lib.stats();
      ASSERT_EQ(s.hits, model_hits);
      ASSERT_EQ(s.hits + s.misses, calls);
      ASSERT_EQ(s.misses, l.builds + cache.failed_builds());
      ASSERT_EQ(l.failures, cache.failed_builds());
      ASSERT_EQ(s.evictions, model_evictions);
      ASSERT_EQ(l.builds, s.entries + s.evictions + cleared);
      ASSERT_EQ(l.destroys, s.evictions + cleared - cache.evicted_pending());
      ASSERT_LE(cache.evicted_pending(), plan_cache::graveyard_limit);
      ASSERT_EQ(s.retained_bytes, s.entries * plan_cache::plan_metadata_bytes);
      ASSERT_EQ(s.capacity, capacity);
    }
  }
}

}  // namespace
}  // namespace tnrt
