#pragma once
// Random chains of large x small steps (src/core/chain.hpp) for the host and GPU tests: a state
// tensor meets one small tensor after another (one- and two-label gates, diagonal gates, sums of a
// label on either side only, outer products), its labels growing and shrinking.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tnrt/network.hpp"

namespace tnrt::chaintest {

struct chain_shape {
  int min_labels = 6, max_labels = 9;  // the first state's labels (extent 2, or odd_extent one time in four)
  double grow_until = 3000;            // no new labels past this many elements
  double shrink_after = 200;           // no summed labels under this many elements
  std::int64_t odd_extent = 3;
};

// A random chain: a state tensor meets one small tensor after another.
inline problem random_chain(std::mt19937& rng, int steps, const chain_shape& shape = {}) {
  problem p;
  network& net = p.net;
  auto fresh = [&](std::int64_t e) {
    net.extents.push_back(e);
    net.label_names.push_back(std::to_string(net.extents.size() - 1));
    return static_cast<label_t>(net.extents.size() - 1);
  };
  auto pick_extent = [&] { return std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? shape.odd_extent : 2; };
  std::vector<label_t> state;
  const int n0 = std::uniform_int_distribution<int>(shape.min_labels, shape.max_labels)(rng);
  for (int i = 0; i < n0; ++i) state.push_back(fresh(pick_extent()));
  std::shuffle(state.begin(), state.end(), rng);
  net.inputs.push_back(state);
  // Operand ids: the state, one small tensor a step, then each step's result.
  const int n_inputs = steps + 1;
  int cur = 0;  // operand id of the state
  auto size_of = [&](const std::vector<label_t>& l) { return net.elements_of(l); };
  for (int s = 0; s < steps; ++s) {
    std::vector<label_t> small, out = state;
    auto any = [&] { return state[std::uniform_int_distribution<std::size_t>(0, state.size() - 1)(rng)]; };
    int kind = std::uniform_int_distribution<int>(0, 7)(rng);
    if (size_of(state) > shape.grow_until && (kind == 5 || kind == 6)) kind = 4;
    if (size_of(state) < shape.shrink_after && (kind == 4 || kind == 7)) kind = 5;
    switch (kind) {
      case 0:
      case 1: {  // one-label gate: a -> a'
        const label_t a = any(), a2 = fresh(net.extents[static_cast<std::size_t>(a)]);
        small = {a2, a};
        std::replace(out.begin(), out.end(), a, a2);
        break;
      }
      case 2: {  // two-label gate: a, b -> a', b'
        label_t a = any(), b = any();
        while (b == a) b = any();
        const label_t a2 = fresh(net.extents[static_cast<std::size_t>(a)]), b2 = fresh(net.extents[static_cast<std::size_t>(b)]);
        small = {a2, b2, a, b};
        std::replace(out.begin(), out.end(), a, a2);
        std::replace(out.begin(), out.end(), b, b2);
        break;
      }
      case 3: {  // diagonal gate on a (batch), two-label diagonal with a second label changed
        label_t a = any(), b = any();
        if (b == a) {
          small = {a};
        } else {
          const label_t b2 = fresh(pick_extent());
          small = {b, a, b2};
          std::replace(out.begin(), out.end(), b, b2);
        }
        break;
      }
      case 4: {  // sum a label against a vector
        const label_t a = any();
        small = {a};
        out.erase(std::find(out.begin(), out.end(), a));
        break;
      }
      case 5: {  // outer product: a new label
        const label_t c = fresh(pick_extent());
        small = {c};
        out.push_back(c);
        break;
      }
      case 6: {  // a new label and one summed on the small side only
        const label_t c = fresh(2), z = fresh(3);
        small = {z, c};
        out.insert(out.begin(), c);
        break;
      }
      default: {  // a label of the state summed on its side only, a new one from the small side
        const label_t a = any(), c = fresh(pick_extent());
        small = {c};
        out.erase(std::find(out.begin(), out.end(), a));
        out.push_back(c);
        break;
      }
    }
    std::shuffle(small.begin(), small.end(), rng);
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) std::shuffle(out.begin(), out.end(), rng);
    net.inputs.push_back(small);
    const int sid = static_cast<int>(net.inputs.size()) - 1;
    step st;
    const bool small_lhs = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    st.lhs = small_lhs ? sid : cur;
    st.rhs = small_lhs ? cur : sid;
    st.out = out;
    p.tree.steps.push_back(st);
    cur = n_inputs + s;
    state = out;
  }
  net.output = p.tree.steps.back().out;
  return p;
}

}  // namespace tnrt::chaintest
