// Independent steps at once (core/step_graph.hpp).
#include "core/step_graph.hpp"

#include <algorithm>

#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

bool overlap(const std::vector<byte_range>& x, const std::vector<byte_range>& y) {
  for (const byte_range& a : x) {
    if (a.begin >= a.end) continue;
    for (const byte_range& b : y)
      if (b.begin < b.end && a.begin < b.end && b.begin < a.end) return true;
  }
  return false;
}

bool conflict(const op_access& earlier, const op_access& later) {
  return earlier.barrier || later.barrier || overlap(earlier.writes, later.reads) || overlap(earlier.writes, later.writes) ||
         overlap(earlier.reads, later.writes);
}

// Ancestor sets as bitsets over op indices.
class bitsets {
 public:
  bitsets(std::size_t sets, std::size_t bits) : words_((bits + 63) / 64), bits_(sets * words_, 0) {}
  [[nodiscard]] bool test(std::size_t set, std::size_t bit) const { return ((bits_[set * words_ + bit / 64] >> (bit % 64)) & 1U) != 0; }
  void set(std::size_t set, std::size_t bit) { bits_[set * words_ + bit / 64] |= std::uint64_t{1} << (bit % 64); }
  void merge(std::size_t into, std::size_t from) {
    for (std::size_t w = 0; w < words_; ++w) bits_[into * words_ + w] |= bits_[from * words_ + w];
  }

 private:
  std::size_t words_;
  std::vector<std::uint64_t> bits_;
};

// ancestors(j) = the union over deps(j) of ancestors(d) and d.
bitsets ancestors_of(const std::vector<std::vector<int>>& deps) {
  const std::size_t n = deps.size();
  bitsets anc(n, n);
  for (std::size_t j = 0; j < n; ++j) {
    for (int d : deps[j]) {
      if (d < 0 || static_cast<std::size_t>(d) >= j) throw internal_error("step graph: a dependency on a later op");
      anc.merge(j, static_cast<std::size_t>(d));
      anc.set(j, static_cast<std::size_t>(d));
    }
  }
  return anc;
}

}  // namespace

std::vector<std::vector<int>> op_dependencies(std::span<const op_access> ops) {
  const std::size_t n = ops.size();
  std::vector<std::vector<int>> deps(n);
  bitsets anc(n, n);
  for (std::size_t j = 0; j < n; ++j) {
    // Latest first: an earlier conflict reached through a later one is implied.
    for (std::size_t i = j; i-- > 0;) {
      if (anc.test(j, i) || !conflict(ops[i], ops[j])) continue;
      deps[j].push_back(static_cast<int>(i));
      anc.merge(j, i);
      anc.set(j, i);
    }
    std::reverse(deps[j].begin(), deps[j].end());
  }
  return deps;
}

lane_schedule schedule_lanes(const std::vector<std::vector<int>>& deps, int max_lanes) {
  if (max_lanes < 1) throw internal_error("step graph: max_lanes must be at least 1");
  const std::size_t n = deps.size();
  const bitsets anc = ancestors_of(deps);
  lane_schedule s;
  s.lane.assign(n, 0);
  s.waits.assign(n, {});
  s.record.assign(n, 0);
  std::vector<int> tail{-1};  // last op of each lane used so far
  std::vector<int> depth(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    int lane = -1;
    for (auto it = deps[j].rbegin(); it != deps[j].rend() && lane < 0; ++it)  // continue a dependency's lane
      if (tail[static_cast<std::size_t>(s.lane[static_cast<std::size_t>(*it)])] == *it) lane = s.lane[static_cast<std::size_t>(*it)];
    for (std::size_t l = 0; l < tail.size() && lane < 0; ++l)  // a lane whose work j waits for anyway
      if (tail[l] < 0 || anc.test(j, static_cast<std::size_t>(tail[l]))) lane = static_cast<int>(l);
    if (lane < 0 && static_cast<int>(tail.size()) < max_lanes) {
      lane = static_cast<int>(tail.size());
      tail.push_back(-1);
    }
    if (lane < 0) lane = static_cast<int>(std::min_element(tail.begin(), tail.end()) - tail.begin());  // an extra ordering
    s.lane[j] = lane;
    for (int d : deps[j]) {
      depth[j] = std::max(depth[j], depth[static_cast<std::size_t>(d)]);
      if (s.lane[static_cast<std::size_t>(d)] == lane) continue;  // ordered by the lane itself
      s.waits[j].push_back(d);
      s.record[static_cast<std::size_t>(d)] = 1;
    }
    depth[j] += 1;
    s.critical_ops = std::max(s.critical_ops, depth[j]);
    tail[static_cast<std::size_t>(lane)] = static_cast<int>(j);
  }
  s.lanes = static_cast<int>(tail.size());
  return s;
}

std::vector<int> step_levels(const std::vector<std::vector<int>>& producers) {
  std::vector<int> level(producers.size(), 0);
  for (std::size_t k = 0; k < producers.size(); ++k) {
    for (int q : producers[k]) {
      if (q < 0 || static_cast<std::size_t>(q) >= k) throw internal_error("step_levels: a producer that does not come first");
      level[k] = std::max(level[k], level[static_cast<std::size_t>(q)] + 1);
    }
  }
  return level;
}

}  // namespace tnrt
