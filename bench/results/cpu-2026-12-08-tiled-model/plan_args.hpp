#pragma once
// The probes' shared start: a network file and an intermediate layout name (column, row, follow,
// planned) from the command line, planned as eager's rule plans it (core/step_plan).
#include <string>

#include "core/step_plan.hpp"
#include "core/tiled.hpp"
#include "tnrt/formats.hpp"

namespace probe {

inline tnrt::layout_policy layout_named(const std::string& lay) {
  using tnrt::layout_policy;
  return lay == "row" ? layout_policy::row_major : lay == "follow" ? layout_policy::follow : lay == "planned" ? layout_policy::planned : layout_policy::column_major;
}

struct planned {
  tnrt::problem p;
  tnrt::options o;
  tnrt::step_plan pl;
};

/// The steps eager's rule puts on the tiled kernel: fn(step index, its rule's record, element bytes).
template <class F>
void each_tiled_step(const planned& x, F&& fn) {
  const std::size_t es = tnrt::size_of(x.p.type);
  for (std::size_t k = 0; k < x.pl.lowered.size(); ++k) {
    tnrt::tiled_record r;
    if (tnrt::describe_tiled_for(x.o, x.pl.lowered[k], es, nullptr, nullptr, nullptr, r)) fn(k, r, es);
  }
}

inline planned plan_of(const char* file, const char* layout) {
  tnrt::load_options lo;
  planned x{tnrt::load_file(file, lo), {}, {}};
  x.o.intermediate_layout = layout_named(layout);
  x.pl = tnrt::plan_steps(x.p, x.o);
  return x;
}

}  // namespace probe
