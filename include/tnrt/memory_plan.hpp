#pragma once
// The static memory plan behind compiled execution: every buffer of a contraction tree gets a fixed
// offset in one device arena, chosen once on the host, so a replay allocates nothing.
//
// Time is measured in steps. A request is live over the closed interval [first_step, last_step];
// two requests whose intervals share a step never share bytes. Because a step reads its operands
// while it writes its result, the result's interval starts at its step and each operand's interval
// ends at that same step: the closed intervals meet there, so the result never aliases an operand.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tnrt/network.hpp"

namespace tnrt {

struct buffer_request {
  std::size_t bytes = 0;
  int first_step = 0;
  int last_step = 0;  // inclusive; first_step <= last_step
};

struct memory_plan {
  /// Offset of each request in the arena, a multiple of the alignment. Zero-byte requests get 0.
  std::vector<std::size_t> offsets;
  /// Bytes the arena needs: the maximum of offset + bytes over all requests (0 when there are none).
  std::size_t arena_bytes = 0;
  /// The largest sum of the sizes of requests live at one step. No plan can use less.
  std::size_t lower_bound_bytes = 0;
  /// Which placement heuristic produced the offsets (for logs and `inspect`).
  std::string heuristic;
};

/// The largest sum of the sizes of requests live at one step (memory_plan::lower_bound_bytes of
/// these requests, without placing them). 0 for none.
std::size_t live_bytes_bound(std::span<const buffer_request> requests);

/// Places every request at an aligned offset so that no two requests with overlapping lifetimes
/// overlap in memory. Runs a few greedy heuristics (largest first, earliest first, most-contended
/// first; each with best-fit, first-fit and two-ended gap choice) and keeps the smallest arena,
/// stopping early at the lower bound. O(n^2) per heuristic, 9 at most: a few milliseconds for a
/// thousand requests.
/// Throws internal_error for alignment 0 or a request with first_step > last_step, and
/// out_of_memory when the arena would not fit in std::size_t.
memory_plan plan_memory(std::span<const buffer_request> requests, std::size_t alignment = 256);

/// The device buffers a problem needs and when each lives. Steps are numbered 0 .. S-1 as in the
/// tree; step -1 is "before the first step" (inputs uploaded) and step S "after the last" (result
/// read back).
///   input k:        [-1, the step consuming it]      (only when inputs_in_arena)
///   step i result:  [i, the step consuming it]       (the final result: [i, S])
/// With no steps and inputs_in_arena the single input is the result and lives over [-1, 0].
/// bytes = elements * size_of(p.type), rounded up to a multiple of `alignment` (1: exact).
struct tree_buffers {
  std::vector<buffer_request> requests;
  /// operand id (0..n-1 inputs, n+i step i's result) of each request.
  std::vector<int> operand_of_request;
  /// request index of each operand id, -1 for an operand that is not planned (a user input).
  std::vector<int> request_of_operand;
};

/// Throws path_error if an operand id is out of range, used before it is defined, consumed twice, or
/// never consumed (the result excepted); out_of_memory if an operand's size overflows std::size_t.
tree_buffers tree_liveness(const problem& p, bool inputs_in_arena, std::size_t alignment = 256);

}  // namespace tnrt
