// The plan cache on a real GPU: a one-entry cache evicting between two contractions, results equal
// to the CPU engine's, no host synchronization until engine.synchronize(), and workspaces retired
// behind an event (deferred) or with a stream barrier (retire_mode::barrier, the old cure). With
// workspace_cap 0 the shared workspace retains nothing: every step's workspace is a temporary,
// retired right after its use, so every execute that needs one retires a block.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/step_lowering.hpp"
#include "tnrt/cpu.hpp"

namespace tnrt {
namespace {

using cuda::engine;
using gputest::download;
using gputest::upload;

// One binary step with its host data, its device buffers and its CPU reference.
struct device_step {
  std::string name;
  network net;  // labels, extents
  std::vector<label_t> a, b, d;
  host_tensor ha, hb, want;
  void* da = nullptr;
  void* db = nullptr;
  void* dd = nullptr;
  lowered_step low;

  [[nodiscard]] double length() const {
    double len = 1;
    for (label_t l : a)
      if (std::find(d.begin(), d.end(), l) == d.end()) len *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
    return len;
  }
};

// "ab,bc->ac"-style step from label strings over single letters; extents by letter.
device_step make_step(const std::string& name, const std::string& a, const std::string& b, const std::string& d,
                      const std::vector<std::pair<char, std::int64_t>>& extents, dtype t, std::uint64_t seed) {
  device_step s;
  s.name = name;
  auto id_of = [&](char c) -> label_t {
    for (std::size_t i = 0; i < extents.size(); ++i)
      if (extents[i].first == c) return static_cast<label_t>(i);
    throw internal_error(std::string("make_step: no extent for ") + c);
  };
  for (const auto& [c, e] : extents) {
    s.net.extents.push_back(e);
    s.net.label_names.emplace_back(1, c);
  }
  for (char c : a) s.a.push_back(id_of(c));
  for (char c : b) s.b.push_back(id_of(c));
  for (char c : d) s.d.push_back(id_of(c));
  s.ha = host_tensor(t, s.net.shape_of(s.a));
  s.hb = host_tensor(t, s.net.shape_of(s.b));
  fill_random(s.ha, seed, 0, -1.0, 1.0);
  fill_random(s.hb, seed, 1, -1.0, 1.0);
  s.want = cpu::contract_step(s.ha, s.a, &s.hb, s.b, s.d, s.net.extents);
  const labelled_layout la{&s.a, row_major_strides(s.ha.shape())};
  const labelled_layout lb{&s.b, row_major_strides(s.hb.shape())};
  const labelled_layout ld{&s.d, row_major_strides(s.net.shape_of(s.d))};
  s.low = lower_step(la, &lb, ld, s.net.extents);
  std::printf("[step] %s: %s,%s->%s dtype %s seed %llu\n", name.c_str(), a.c_str(), b.c_str(), d.c_str(),
              std::string(name_of(t)).c_str(), static_cast<unsigned long long>(seed));
  return s;
}

void to_device(engine& eng, device_step& s) {
  s.da = upload(eng, s.ha);
  s.db = upload(eng, s.hb);
  s.dd = eng.pool().allocate(static_cast<std::size_t>(s.want.bytes()), eng.stream_handle());
}

void release(engine& eng, device_step& s) {
  for (void* p : {s.da, s.db, s.dd})
    if (p != nullptr) eng.pool().deallocate(p, eng.stream_handle());
  s.da = s.db = s.dd = nullptr;
}

void expect_result(engine& eng, const device_step& s, double tol) {
  const host_tensor got = download(eng, s.dd, s.want.type(), s.want.shape());
  const double err = gputest::rel_error(got, s.want);
  std::printf("[check] %s: rel error %.3e (tol %.1e)\n", s.name.c_str(), err, tol);
  EXPECT_LE(err, tol) << s.name;
}

double tol_for(dtype t) { return is_double(t) ? 1e-12 : 1e-4; }

class PlanCache : public ::testing::TestWithParam<dtype> {
 protected:
  void SetUp() override { TNRT_SKIP_WITHOUT_GPU(); }
};

TEST_P(PlanCache, OneEntryCacheEvictsWithoutSynchronizing) {
  const dtype t = GetParam();
  cuda::options opt;
  opt.plan_cache_entries = 1;
  engine eng(opt);
  device_step s1 = make_step("64x64 matmul", "ab", "bc", "ac", {{'a', 64}, {'b', 64}, {'c', 64}}, t, 101);
  device_step s2 = make_step("65x64 matmul", "ab", "bc", "ac", {{'a', 65}, {'b', 64}, {'c', 64}}, t, 102);
  to_device(eng, s1);
  to_device(eng, s2);

  const auto syncs0 = eng.runtime().counts().stream_syncs;
  const auto events0 = eng.runtime().counts().event_syncs;
  eng.execute(s1.low, t, s1.da, s1.db, s1.dd);
  eng.execute(s2.low, t, s2.da, s2.db, s2.dd);
  const cuda::counters c = eng.stats();
  std::printf("[stats] misses %llu hits %llu evictions %llu entries %zu; stream syncs %llu -> %llu\n",
              static_cast<unsigned long long>(c.plan_cache.misses), static_cast<unsigned long long>(c.plan_cache.hits),
              static_cast<unsigned long long>(c.plan_cache.evictions), c.plan_cache.entries,
              static_cast<unsigned long long>(syncs0), static_cast<unsigned long long>(eng.runtime().counts().stream_syncs));
  EXPECT_EQ(c.plan_cache.misses, 2U);
  EXPECT_GE(c.plan_cache.evictions, 1U);
  EXPECT_EQ(c.plan_cache.entries, 1U);
  EXPECT_EQ(eng.runtime().counts().stream_syncs, syncs0) << "execute() synchronized the stream";
  EXPECT_EQ(eng.runtime().counts().event_syncs, events0) << "execute() waited on an event";

  // The same step again: evicted, so a third miss (and still no synchronization).
  eng.execute(s1.low, t, s1.da, s1.db, s1.dd);
  EXPECT_EQ(eng.stats().plan_cache.misses, 3U);
  EXPECT_EQ(eng.runtime().counts().stream_syncs, syncs0);

  eng.synchronize();
  EXPECT_GT(eng.runtime().counts().stream_syncs, syncs0) << "synchronize() made no stream synchronization";
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  expect_result(eng, s1, tol_for(t));
  expect_result(eng, s2, tol_for(t));
  release(eng, s1);
  release(eng, s2);
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

std::string dtype_param_name(const ::testing::TestParamInfo<dtype>& p) { return std::string(name_of(p.param)); }
INSTANTIATE_TEST_SUITE_P(Dtypes, PlanCache, ::testing::Values(dtype::f32, dtype::f64), dtype_param_name);

// Candidates for a plan that needs workspace: cuTENSOR may need none for small GEMM-like problems.
struct candidate {
  const char* name;
  const char* a;
  const char* b;
  const char* d;
  std::vector<std::pair<char, std::int64_t>> extents;
};

std::vector<candidate> candidates() {
  return {
      {"1024^3 matmul", "ab", "bc", "ac", {{'a', 1024}, {'b', 1024}, {'c', 1024}}},
      {"permuted 4-mode", "abcd", "cbef", "fead", {{'a', 32}, {'b', 24}, {'c', 32}, {'d', 24}, {'e', 32}, {'f', 24}}},
      {"transposed matmul", "ba", "cb", "ca", {{'a', 1024}, {'b', 2048}, {'c', 512}}},
      {"long contraction", "ab", "cb", "ac", {{'a', 64}, {'b', 262144}, {'c', 64}}},
      {"batched permuted", "zabk", "zkbc", "cza", {{'z', 16}, {'a', 64}, {'b', 48}, {'k', 64}, {'c', 64}}},
  };
}

// Probes the candidates on a separate engine (so the cache statistics of the test engine stay
// clean); returns the first two with distinct keys, the first needing workspace.
std::optional<std::pair<candidate, candidate>> pick_workspace_pair(dtype t) {
  cuda::options opt;
  engine probe(opt);
  std::vector<std::pair<candidate, std::uint64_t>> found;
  for (const candidate& c : candidates()) {
    device_step s = make_step(c.name, c.a, c.b, c.d, c.extents, t, 7);
    const auto ws = probe.plan(s.low, t)->workspace_bytes();
    std::printf("[workspace] %-20s %s: %llu bytes\n", c.name, std::string(name_of(t)).c_str(), static_cast<unsigned long long>(ws));
    found.emplace_back(c, ws);
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i].second == 0) continue;
    const std::size_t j = (i + 1) % found.size();
    return std::make_pair(found[i].first, found[j].first);
  }
  return std::nullopt;
}

TEST(PlanCacheWorkspace, TemporaryWorkspaceRetiresDeferred) {
  TNRT_SKIP_WITHOUT_GPU();
  const dtype t = dtype::f32;
  const auto pair = pick_workspace_pair(t);
  if (!pair) GTEST_SKIP() << "cuTENSOR needed no workspace for any candidate contraction (sizes printed above)";
  cuda::options opt;
  opt.plan_cache_entries = 1;
  opt.workspace_cap = 0;  // every workspace a temporary, retired after its use
  opt.retire = device::retire_mode::deferred;
  engine eng(opt);
  device_step s1 = make_step(pair->first.name, pair->first.a, pair->first.b, pair->first.d, pair->first.extents, t, 201);
  device_step s2 = make_step(pair->second.name, pair->second.a, pair->second.b, pair->second.d, pair->second.extents, t, 202);
  to_device(eng, s1);
  to_device(eng, s2);
  const auto syncs0 = eng.runtime().counts().stream_syncs;
  const auto r0 = eng.stats().retirement;
  eng.execute(s1.low, t, s1.da, s1.db, s1.dd);
  eng.execute(s2.low, t, s2.da, s2.db, s2.dd);  // s1's temporary workspace retired after s1
  const auto r1 = eng.stats().retirement;
  std::printf("[retire] deferred %llu immediate %llu in_flight %llu released %llu\n", static_cast<unsigned long long>(r1.deferred),
              static_cast<unsigned long long>(r1.immediate), static_cast<unsigned long long>(r1.in_flight),
              static_cast<unsigned long long>(r1.released));
  EXPECT_GE(r1.deferred - r0.deferred, 1U) << "the temporary workspace was not retired behind an event";
  EXPECT_EQ(r1.immediate, r0.immediate) << "deferred mode fell back to a barrier";
  EXPECT_EQ(eng.runtime().counts().stream_syncs, syncs0) << "deferred retirement synchronized the stream";
  EXPECT_EQ(r1.leaked, 0U);
  eng.synchronize();
  const auto r2 = eng.stats().retirement;
  EXPECT_EQ(r2.in_flight, 0U);
  EXPECT_EQ(r2.released + r2.leaked + r2.in_flight, r2.deferred + r2.immediate);
  EXPECT_GE(r2.released, r1.deferred - r0.deferred);
  expect_result(eng, s1, gputest::tolerance(t, s1.length()));
  expect_result(eng, s2, gputest::tolerance(t, s2.length()));
  release(eng, s1);
  release(eng, s2);
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

TEST(PlanCacheWorkspace, BarrierModeSynchronizesPerRetire) {
  TNRT_SKIP_WITHOUT_GPU();
  const dtype t = dtype::f32;
  const auto pair = pick_workspace_pair(t);
  if (!pair) GTEST_SKIP() << "cuTENSOR needed no workspace for any candidate contraction (sizes printed above)";
  cuda::options opt;
  opt.plan_cache_entries = 1;
  opt.workspace_cap = 0;  // every workspace a temporary, retired after its use
  opt.retire = device::retire_mode::barrier;
  engine eng(opt);
  device_step s1 = make_step(pair->first.name, pair->first.a, pair->first.b, pair->first.d, pair->first.extents, t, 301);
  device_step s2 = make_step(pair->second.name, pair->second.a, pair->second.b, pair->second.d, pair->second.extents, t, 302);
  to_device(eng, s1);
  to_device(eng, s2);
  const auto syncs0 = eng.runtime().counts().stream_syncs;
  const auto r0 = eng.stats().retirement;
  constexpr int rounds = 4;  // s1, s2, s1, s2, ...: every execute after the first evicts
  for (int i = 0; i < rounds; ++i) {
    eng.execute(s1.low, t, s1.da, s1.db, s1.dd);
    eng.execute(s2.low, t, s2.da, s2.db, s2.dd);
  }
  const auto r1 = eng.stats().retirement;
  const auto syncs1 = eng.runtime().counts().stream_syncs;
  const auto retires = r1.immediate - r0.immediate;
  std::printf("[barrier] retires %llu, stream syncs %llu -> %llu, queue stream_syncs %llu\n", static_cast<unsigned long long>(retires),
              static_cast<unsigned long long>(syncs0), static_cast<unsigned long long>(syncs1),
              static_cast<unsigned long long>(r1.stream_syncs - r0.stream_syncs));
  // s1's plan needs workspace, so every execute of s1 (rounds of them) retires a temporary block.
  EXPECT_GE(retires, static_cast<std::uint64_t>(rounds));
  EXPECT_EQ(r1.deferred, r0.deferred) << "barrier mode queued an event";
  EXPECT_GE(syncs1 - syncs0, retires) << "barrier mode must synchronize the stream on every retire";
  EXPECT_EQ(r1.stream_syncs - r0.stream_syncs, retires);
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  expect_result(eng, s1, gputest::tolerance(t, s1.length()));
  expect_result(eng, s2, gputest::tolerance(t, s2.length()));
  release(eng, s1);
  release(eng, s2);
  eng.synchronize();
}

// Shared workspace (the default): growing the scratch retires the old buffer behind an event, no
// synchronization on the way.
TEST(PlanCacheWorkspace, SharedWorkspaceGrowthRetiresDeferred) {
  TNRT_SKIP_WITHOUT_GPU();
  const dtype t = dtype::f32;
  cuda::options opt;
  opt.plan_cache_entries = 1;
  engine eng(opt);
  std::vector<device_step> steps;
  std::uint64_t seed = 401;
  for (const candidate& c : candidates()) steps.push_back(make_step(c.name, c.a, c.b, c.d, c.extents, t, seed++));
  for (auto& s : steps) to_device(eng, s);
  const auto syncs0 = eng.runtime().counts().stream_syncs;
  for (auto& s : steps) eng.execute(s.low, t, s.da, s.db, s.dd);
  const auto c = eng.stats();
  std::printf("[shared] grows %llu retained %zu high-water request %zu deferred %llu\n", static_cast<unsigned long long>(c.workspace.grows),
              c.workspace.retained_bytes, c.workspace.high_water_request, static_cast<unsigned long long>(c.retirement.deferred));
  EXPECT_EQ(eng.runtime().counts().stream_syncs, syncs0);
  EXPECT_EQ(c.plan_cache.misses, steps.size());
  if (c.workspace.grows > 1) {
    EXPECT_GE(c.retirement.deferred, c.workspace.grows - 1) << "old scratch buffers must retire behind events";
  }
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  for (auto& s : steps) expect_result(eng, s, gputest::tolerance(t, s.length()));
  for (auto& s : steps) release(eng, s);
  eng.synchronize();
}

}  // namespace
}  // namespace tnrt
