#pragma once
// Independent steps at once: which ops of a compiled program must wait for which, and on which of a
// few streams ("lanes") each op is captured so that the CUDA graph keeps the tree's branches apart
// instead of one chain. Pure functions of the ops' memory accesses, without a GPU.
//
// Correctness comes from the accesses alone: op j waits (directly or through a chain) for every
// earlier op i whose bytes it reads where i writes, or writes where i reads or writes. The program
// order is one valid sequential execution; any execution that keeps those pairs ordered computes
// the same result, whatever the memory plan reused. How much can overlap is the memory plan's
// business: a plan over levels (step_levels) lets steps of one level share no bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tnrt {

/// Bytes [begin, end) of one address space.
struct byte_range {
  std::uintptr_t begin = 0, end = 0;
};

/// What one op reads and writes. A barrier waits for every earlier op and every later op waits for
/// it (an op whose accesses are not listed, e.g. the fused launch of many small steps).
struct op_access {
  std::vector<byte_range> reads, writes;
  bool barrier = false;
};

/// For each op, the earlier ops it must wait for, transitively reduced (an op reached through
/// another listed one is left out), in increasing order.
std::vector<std::vector<int>> op_dependencies(std::span<const op_access> ops);

/// The capture of ops on lanes (streams): op j is enqueued on lane[j] after every earlier op of that
/// lane, once the ops in waits[j] (on other lanes) have recorded their event (record[i] != 0).
/// Lane 0 is the capturing stream; every other lane forks from it before its first op and joins it
/// at the end.
struct lane_schedule {
  std::vector<int> lane;
  std::vector<std::vector<int>> waits;
  std::vector<char> record;
  int lanes = 1;            // lanes used
  int critical_ops = 0;     // ops on the longest chain of dependencies
};

/// Lanes for `deps` (op_dependencies), at most max_lanes (>= 1): an op continues the lane of a
/// dependency that is that lane's last op; otherwise it takes a lane whose last op it already
/// depends on (directly or not), else a new lane while fewer than max_lanes are used, else the lane
/// whose last op is oldest (an extra ordering, never a missing one). Deterministic.
lane_schedule schedule_lanes(const std::vector<std::vector<int>>& deps, int max_lanes);

/// Each step's level (1 + the largest level among the steps producing its operands; 0 for a step of
/// inputs only), given each step's producers (step indices; inputs omitted). Producers come first.
std::vector<int> step_levels(const std::vector<std::vector<int>>& producers);

}  // namespace tnrt
