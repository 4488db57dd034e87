// The chains plan_chains finds on a network's step plan (compiled's eligibility: library and tiled
// steps, not absorbed into the fused launch), with the steps they hold and the bytes they save
// (X_1..X_{m-1} written and read back) and what each chain moves once, beside the network's steps and the bytes of all its binary
// steps (each step's operands and result, once). Host only.
#include <cstdio>
#include <string>

#include "core/chain.hpp"
#include "core/step_plan.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"
using namespace tnrt;
int main(int argc, char** argv) {
  load_options lo;
  const problem p = load_file(argv[1], lo);
  options o;
  const std::string lay = argc > 2 ? argv[2] : "column";
  o.intermediate_layout = layout_named(lay).value_or(layout_policy::column_major);
  const step_plan sp = plan_steps(p, o);
  std::vector<std::uint8_t> el(p.tree.steps.size());
  for (std::size_t k = 0; k < el.size(); ++k) el[k] = sp.kernel[k] == step_kernel::library || sp.kernel[k] == step_kernel::tiled ? 1 : 0;
  const std::size_t eb = size_of(p.type);
  const auto chains = plan_chains(p, sp.strides, el, eb);
  double saved = 0, all = 0;
  int steps = 0;
  const std::vector<std::vector<label_t>> labels = operand_labels(p.net, p.tree);
  auto bytes_of = [&](int id) { return p.net.elements_of(labels[static_cast<std::size_t>(id)]) * static_cast<double>(eb); };
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const step& s = p.tree.steps[k];
    all += bytes_of(s.lhs) + (s.rhs >= 0 ? bytes_of(s.rhs) : 0) + bytes_of(static_cast<int>(p.net.inputs.size() + k));
  }
  for (const chain_plan& c : chains) {
    saved += c.bytes_saved;
    steps += static_cast<int>(c.steps.size());
  }
  std::printf("%s (%s, layout %s): %zu steps, %zu chains holding %d steps; binary steps move %.0f MB, the chains save %.0f MB (%.0f%%)\n",
              argv[1], std::string(name_of(p.type)).c_str(), lay.c_str(), p.tree.steps.size(), chains.size(), steps, all / 1e6, saved / 1e6,
              all > 0 ? 100 * saved / all : 0.0);
  if (argc > 3)
    for (const chain_plan& c : chains) {
      // What the chain kernel moves once: X_0 and the small tensors read, X_m written.
      double once = bytes_of(c.big_id) + bytes_of(static_cast<int>(p.net.inputs.size()) + c.steps.back());
      for (int id : c.small_ids) once += bytes_of(id);
      std::printf("  steps %d..%d (%zu): %.1f MB once; slab %d elements, tables %d, tiles %lld;", c.steps.front(), c.steps.back(), c.steps.size(),
                  once / 1e6, c.rec.slab_max, c.rec.sd_elems, static_cast<long long>(c.rec.tile_count));
      for (int i = 0; i < c.rec.steps; ++i) std::printf(" [rows %d k %d n %d]", c.rec.step[i].rows, c.rec.step[i].k_count, c.rec.step[i].n_count);
      std::printf("\n");
    }
}
