// Independent steps at once (src/core/step_graph.hpp), on the host:
//  - op_dependencies on random access sets (fixed seeds): every conflicting pair (a write against a
//    read or write of the same bytes, or a barrier) is ordered through the dependencies, and no
//    listed dependency is implied by another (transitive reduction);
//  - schedule_lanes: every conflicting pair is ordered by the capture it describes (lane order plus
//    waits), lanes never exceed the bound, chains take one lane, independent ops spread out;
//  - step_levels by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/step_graph.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

bool overlaps(const std::vector<byte_range>& x, const std::vector<byte_range>& y) {
  for (const auto& a : x)
    for (const auto& b : y)
      if (a.begin < a.end && b.begin < b.end && a.begin < b.end && b.begin < a.end) return true;
  return false;
}

// Independent statement of the rule.
bool must_order(const op_access& i, const op_access& j) {
  return i.barrier || j.barrier || overlaps(i.writes, j.reads) || overlaps(i.writes, j.writes) || overlaps(i.reads, j.writes);
}

std::vector<op_access> random_ops(std::mt19937& rng, int n, int space, double barrier_p) {
  std::uniform_int_distribution<int> pos(0, space - 1), len(0, 8), count(0, 3);
  std::bernoulli_distribution barrier(barrier_p);
  std::vector<op_access> ops(static_cast<std::size_t>(n));
  for (auto& o : ops) {
    for (int k = count(rng); k-- > 0;) {
      const auto b = static_cast<std::uintptr_t>(pos(rng));
      o.reads.push_back({b, b + static_cast<std::uintptr_t>(len(rng))});
    }
    for (int k = 1 + count(rng) / 2; k-- > 0;) {
      const auto b = static_cast<std::uintptr_t>(pos(rng));
      o.writes.push_back({b, b + static_cast<std::uintptr_t>(len(rng))});
    }
    o.barrier = barrier(rng);
  }
  return ops;
}

// reach[i][j]: j runs after i in the graph whose edges are `edges` (edges[j] = its predecessors).
std::vector<std::vector<char>> reachability(const std::vector<std::vector<int>>& edges) {
  const std::size_t n = edges.size();
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (std::size_t j = 0; j < n; ++j) {
    for (int p : edges[j]) {
      reach[static_cast<std::size_t>(p)][j] = 1;
      for (std::size_t i = 0; i < n; ++i)
        if (reach[i][static_cast<std::size_t>(p)] != 0) reach[i][j] = 1;
    }
  }
  return reach;
}

TEST(StepGraph, EveryConflictIsOrderedAndNoDependencyIsImplied) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    const int n = 1 + static_cast<int>(seed % 40);
    const auto ops = random_ops(rng, n, 24 + static_cast<int>(seed % 5) * 40, seed % 7 == 0 ? 0.1 : 0.0);
    const auto deps = op_dependencies(ops);
    ASSERT_EQ(deps.size(), ops.size());
    const auto reach = reachability(deps);
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (must_order(ops[static_cast<std::size_t>(i)], ops[static_cast<std::size_t>(j)])) {
          EXPECT_TRUE(reach[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]) << "seed " << seed << ": op " << j << " not after op " << i;
        }
      }
    }
    for (std::size_t j = 0; j < deps.size(); ++j) {
      for (int d : deps[j]) {
        ASSERT_LT(static_cast<std::size_t>(d), j);
        EXPECT_TRUE(must_order(ops[static_cast<std::size_t>(d)], ops[j])) << "seed " << seed << ": a dependency without a conflict";
        for (int e : deps[j])
          EXPECT_FALSE(e != d && reach[static_cast<std::size_t>(d)][static_cast<std::size_t>(e)])
              << "seed " << seed << ": op " << j << " lists " << d << " though it is implied through " << e;
      }
    }
  }
}

// The capture's own order: each op after the previous op of its lane and after its waits.
std::vector<std::vector<int>> capture_edges(const lane_schedule& s) {
  std::vector<std::vector<int>> edges(s.lane.size());
  std::vector<int> last(static_cast<std::size_t>(s.lanes), -1);
  for (std::size_t j = 0; j < s.lane.size(); ++j) {
    const auto l = static_cast<std::size_t>(s.lane[j]);
    if (last[l] >= 0) edges[j].push_back(last[l]);
    for (int w : s.waits[j]) {
      EXPECT_NE(s.record[static_cast<std::size_t>(w)], 0) << "op " << j << " waits for op " << w << ", which records no event";
      edges[j].push_back(w);
    }
    last[l] = static_cast<int>(j);
  }
  return edges;
}

TEST(StepGraph, LanesKeepEveryConflictOrdered) {
  for (unsigned seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed + 1000);
    const int n = 1 + static_cast<int>(seed % 50);
    const auto ops = random_ops(rng, n, 200, seed % 9 == 0 ? 0.05 : 0.0);
    const auto deps = op_dependencies(ops);
    for (int max_lanes : {1, 2, 3, 8}) {
      const lane_schedule s = schedule_lanes(deps, max_lanes);
      ASSERT_EQ(s.lane.size(), ops.size());
      EXPECT_GE(s.lanes, 1);
      EXPECT_LE(s.lanes, max_lanes);
      const auto reach = reachability(capture_edges(s));
      for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
          if (must_order(ops[static_cast<std::size_t>(i)], ops[static_cast<std::size_t>(j)])) {
            EXPECT_TRUE(reach[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)])
                << "seed " << seed << ", " << max_lanes << " lanes: op " << j << " may run before op " << i;
          }
        }
      }
      if (max_lanes == 1) {
        EXPECT_EQ(s.lanes, 1);
      }
    }
  }
}

TEST(StepGraph, ChainsTakeOneLaneAndBranchesSpread) {
  // A chain: each op reads what the previous wrote.
  std::vector<op_access> chain(6);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    if (i > 0) chain[i].reads.push_back({(i - 1) * 10, (i - 1) * 10 + 4});
    chain[i].writes.push_back({i * 10, i * 10 + 4});
  }
  const auto cd = op_dependencies(chain);
  const lane_schedule cs = schedule_lanes(cd, 8);
  EXPECT_EQ(cs.lanes, 1);
  EXPECT_EQ(cs.critical_ops, 6);
  for (const auto& w : cs.waits) EXPECT_TRUE(w.empty());

  // Two independent branches of three ops, joined by a last op reading both.
  std::vector<op_access> tree(7);
  for (std::size_t b = 0; b < 2; ++b) {
    for (std::size_t k = 0; k < 3; ++k) {
      const std::size_t i = b * 3 + k;
      if (k > 0) tree[i].reads.push_back({(i - 1) * 10, (i - 1) * 10 + 4});
      tree[i].writes.push_back({i * 10, i * 10 + 4});
    }
  }
  tree[6].reads = {{20, 24}, {50, 54}};
  tree[6].writes = {{100, 104}};
  const auto td = op_dependencies(tree);
  EXPECT_EQ(td[6], (std::vector<int>{2, 5}));
  EXPECT_TRUE(td[3].empty());
  const lane_schedule ts = schedule_lanes(td, 8);
  EXPECT_EQ(ts.lanes, 2);
  EXPECT_EQ(ts.critical_ops, 4);
  EXPECT_NE(ts.lane[0], ts.lane[3]);
  EXPECT_EQ(ts.waits[6].size(), 1U);  // the other branch's last op; its own is the lane's order

  // A barrier orders everything around it.
  tree[3].barrier = true;
  const auto bd = op_dependencies(tree);
  EXPECT_EQ(bd[3], (std::vector<int>{2}));  // 0 and 1 through 2
  EXPECT_EQ(bd[4], (std::vector<int>{3}));
  EXPECT_EQ(schedule_lanes(bd, 8).lanes, 1);
}

TEST(StepGraph, LevelsByHand) {
  // steps: 0, 1 of inputs; 2 = (0, 1); 3 of inputs; 4 = (2, 3); 5 = (4)
  EXPECT_EQ(step_levels({{}, {}, {0, 1}, {}, {2, 3}, {4}}), (std::vector<int>{0, 0, 1, 0, 2, 3}));
  EXPECT_THROW(step_levels({{1}, {}}), internal_error);
  EXPECT_THROW(schedule_lanes({{}, {1}}, 2), internal_error);
  EXPECT_THROW(schedule_lanes({{}}, 0), internal_error);
}

}  // namespace
}  // namespace tnrt
