#include "tnrt/memory_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

std::size_t checked_add(std::size_t a, std::size_t b) {
  if (a > size_max - b) throw out_of_memory("memory plan: the arena would exceed the address space");
  return a + b;
}

std::size_t round_up(std::size_t x, std::size_t alignment) {
  const std::size_t rem = x % alignment;
  return rem == 0 ? x : checked_add(x, alignment - rem);
}

// Live bytes at every step where some request starts. The live set only grows at a start, so the
// maximum over any interval of steps is reached at one of these points.
struct start_profile {
  std::vector<int> steps;                 // distinct first_step values, ascending
  std::vector<std::size_t> live_bytes;    // sum of bytes live at steps[k]
};

start_profile profile_of(std::span<const buffer_request> requests) {
  start_profile prof;
  for (const auto& r : requests) prof.steps.push_back(r.first_step);
  std::sort(prof.steps.begin(), prof.steps.end());
  prof.steps.erase(std::unique(prof.steps.begin(), prof.steps.end()), prof.steps.end());
  // Difference array over the start points: a request adds its bytes from the first start point
  // >= first_step (its own) up to the last start point <= last_step.
  std::vector<std::size_t> add(prof.steps.size() + 1, 0), sub(prof.steps.size() + 1, 0);
  for (const auto& r : requests) {
    const auto begin = std::lower_bound(prof.steps.begin(), prof.steps.end(), r.first_step) - prof.steps.begin();
    const auto end = std::upper_bound(prof.steps.begin(), prof.steps.end(), r.last_step) - prof.steps.begin();
    add[static_cast<std::size_t>(begin)] = checked_add(add[static_cast<std::size_t>(begin)], r.bytes);
    sub[static_cast<std::size_t>(end)] = checked_add(sub[static_cast<std::size_t>(end)], r.bytes);
  }
  prof.live_bytes.resize(prof.steps.size());
  std::size_t live = 0;
  for (std::size_t k = 0; k < prof.steps.size(); ++k) {
    live = checked_add(live, add[k]) - sub[k];  // every subtracted request was added earlier
    prof.live_bytes[k] = live;
  }
  return prof;
}

struct placement {
  std::vector<std::size_t> offsets;
  std::size_t arena_bytes = 0;
};

enum class fit {
  best,       // the smallest gap that holds the request (TFLite's "greedy by size")
  first,      // the lowest gap that holds it
  two_ended,  // the lowest gap, but when only the space above everything is left, the top of that
              // space under the cap (the lower bound): neighbours then alternate between the two
              // ends of the arena, which is what packs a chain of lifetimes into the bound exactly
};

// Places the requests one at a time in `order`. Each goes to an aligned offset that clears every
// already-placed request whose lifetime overlaps its own, in a gap between such requests chosen by
// `how`, or else just above them. Placed requests are kept sorted by offset so one pass finds the
// gaps.
placement place(std::span<const buffer_request> requests, const std::vector<std::size_t>& order,
                std::size_t alignment, fit how, std::size_t cap) {
  // What the scan needs of a placed request, contiguous so the O(n) scan per request stays cheap.
  struct placed {
    int first_step, last_step;
    std::size_t start, padded_end;  // padded_end: where the next aligned request could start
  };
  placement out;
  out.offsets.assign(requests.size(), 0);
  std::vector<placed> by_offset;  // ascending start
  by_offset.reserve(requests.size());
  for (std::size_t r : order) {
    const buffer_request& req = requests[r];
    if (req.bytes == 0) continue;  // occupies nothing, so it can sit at 0 beside anything
    std::size_t cursor = 0;        // lowest aligned offset above the conflicts seen so far
    std::size_t chosen = size_max, chosen_gap = size_max;
    for (const placed& other : by_offset) {
      if (other.first_step > req.last_step || req.first_step > other.last_step) continue;  // never live together
      if (other.start >= cursor && other.start - cursor >= req.bytes) {
        const std::size_t gap = other.start - cursor;
        if (how != fit::best) {
          chosen = cursor;
          break;
        }
        if (gap < chosen_gap) {
          chosen = cursor;
          chosen_gap = gap;
        }
      }
      cursor = std::max(cursor, other.padded_end);
    }
    if (chosen == size_max) {
      chosen = cursor;
      if (how == fit::two_ended && cap >= req.bytes && cap - req.bytes >= cursor)
        chosen = (cap - req.bytes) / alignment * alignment;  // >= cursor, which is aligned
    }
    out.offsets[r] = chosen;
    const std::size_t end = checked_add(chosen, req.bytes);
    out.arena_bytes = std::max(out.arena_bytes, end);
    const auto at = std::upper_bound(by_offset.begin(), by_offset.end(), chosen,
                                     [](std::size_t off, const placed& q) { return off < q.start; });
    by_offset.insert(at, placed{req.first_step, req.last_step, chosen, round_up(end, alignment)});
  }
  return out;
}

}  // namespace

std::size_t live_bytes_bound(std::span<const buffer_request> requests) {
  if (requests.empty()) return 0;
  const start_profile prof = profile_of(requests);
  return *std::max_element(prof.live_bytes.begin(), prof.live_bytes.end());
}

memory_plan plan_memory(std::span<const buffer_request> requests, std::size_t alignment) {
  if (alignment == 0) throw internal_error("memory plan: alignment must be positive");
  for (std::size_t i = 0; i < requests.size(); ++i)
    if (requests[i].first_step > requests[i].last_step)
      throw internal_error("memory plan: request " + std::to_string(i) + " ends (step " + std::to_string(requests[i].last_step) +
                           ") before it starts (step " + std::to_string(requests[i].first_step) + ")");

  memory_plan plan;
  plan.offsets.assign(requests.size(), 0);
  if (requests.empty()) return plan;

  const start_profile prof = profile_of(requests);
  plan.lower_bound_bytes = *std::max_element(prof.live_bytes.begin(), prof.live_bytes.end());

  // Contention of a request: the most bytes live at any step of its lifetime. Placing the requests
  // of the busiest steps first packs the steps that decide the arena size before the rest.
  std::vector<std::size_t> contention(requests.size(), 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto begin = std::lower_bound(prof.steps.begin(), prof.steps.end(), requests[i].first_step) - prof.steps.begin();
    const auto end = std::upper_bound(prof.steps.begin(), prof.steps.end(), requests[i].last_step) - prof.steps.begin();
    contention[i] = *std::max_element(prof.live_bytes.begin() + begin, prof.live_bytes.begin() + end);
  }

  // Ties broken by index last, so the plan is deterministic across standard libraries.
  auto by_size = [&](std::size_t a, std::size_t b) {
    const auto &x = requests[a], &y = requests[b];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    if (x.first_step != y.first_step) return x.first_step < y.first_step;
    return a < b;
  };
  auto by_start = [&](std::size_t a, std::size_t b) {
    const auto &x = requests[a], &y = requests[b];
    if (x.first_step != y.first_step) return x.first_step < y.first_step;
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    return a < b;
  };
  auto by_contention = [&](std::size_t a, std::size_t b) {
    if (contention[a] != contention[b]) return contention[a] > contention[b];
    return by_size(a, b);
  };

  std::vector<std::size_t> identity(requests.size());
  std::iota(identity.begin(), identity.end(), std::size_t{0});
  struct ordering {
    const char* name;
    std::vector<std::size_t> order;
  };
  std::vector<ordering> orderings{{"size", identity}, {"contention", identity}, {"start", identity}};
  std::sort(orderings[0].order.begin(), orderings[0].order.end(), by_size);
  std::sort(orderings[1].order.begin(), orderings[1].order.end(), by_contention);
  std::sort(orderings[2].order.begin(), orderings[2].order.end(), by_start);

  bool have = false;
  for (const auto& o : orderings) {
    for (fit how : {fit::best, fit::first, fit::two_ended}) {
      placement p = place(requests, o.order, alignment, how, plan.lower_bound_bytes);
      if (!have || p.arena_bytes < plan.arena_bytes) {
        have = true;
        plan.offsets = std::move(p.offsets);
        plan.arena_bytes = p.arena_bytes;
        plan.heuristic = std::string(o.name) + (how == fit::best ? "/best-fit" : how == fit::first ? "/first-fit" : "/two-ended");
      }
      if (plan.arena_bytes == plan.lower_bound_bytes) return plan;  // optimal: nothing can beat it
    }
  }
  return plan;
}

tree_buffers tree_liveness(const problem& p, bool inputs_in_arena, std::size_t alignment) {
  if (alignment == 0) throw internal_error("tree_liveness: alignment must be positive");
  const std::size_t n = p.net.inputs.size();
  const auto& steps = p.tree.steps;
  const std::size_t total = n + steps.size();
  const int end_step = static_cast<int>(steps.size());  // "after the last step": the result is read back
  const std::string where = p.source.empty() ? std::string() : " in " + p.source;

  // The step consuming each operand; the final result is consumed by the read-back at end_step.
  std::vector<int> consumer(total, -1);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    for (int id : {steps[k].lhs, steps[k].rhs}) {
      if (id == steps[k].rhs && id < 0) continue;  // unary step
      if (id < 0 || static_cast<std::size_t>(id) >= n + k)
        throw path_error("step " + std::to_string(k) + where + ": operand " + std::to_string(id) + " is not defined before this step");
      if (consumer[static_cast<std::size_t>(id)] >= 0)
        throw path_error("step " + std::to_string(k) + where + ": operand " + std::to_string(id) + " is used more than once");
      consumer[static_cast<std::size_t>(id)] = static_cast<int>(k);
    }
  }
  if (total == 0) throw path_error("the network has no operands" + where);
  const int result = p.tree.result_id(n);
  consumer[static_cast<std::size_t>(result)] = end_step;
  for (std::size_t id = 0; id < total; ++id)
    if (consumer[id] < 0) throw path_error("operand " + std::to_string(id) + where + " is never consumed");

  const auto labels = operand_labels(p.net, p.tree);
  tree_buffers out;
  out.request_of_operand.assign(total, -1);
  for (std::size_t id = inputs_in_arena ? 0 : n; id < total; ++id) {
    std::size_t bytes = size_of(p.type);
    for (std::int64_t e : p.net.shape_of(labels[id])) {
      if (e <= 0) throw shape_error("operand " + std::to_string(id) + where + " has extent " + std::to_string(e) + " (must be positive)");
      const auto extent = static_cast<std::size_t>(e);
      if (bytes > size_max / extent) throw out_of_memory("operand " + std::to_string(id) + where + " is larger than the address space");
      bytes *= extent;
    }
    const int first = id < n ? -1 : static_cast<int>(id - n);
    out.request_of_operand[id] = static_cast<int>(out.requests.size());
    out.requests.push_back({round_up(bytes, alignment), first, consumer[id]});
    out.operand_of_request.push_back(static_cast<int>(id));
  }
  return out;
}

}  // namespace tnrt
