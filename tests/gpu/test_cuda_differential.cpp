// Differential tests of the CUDA backend against the CPU engine, on the same data:
//  - single einsum steps, lowered (lower_step) and run through engine::execute, in all four dtypes,
//    over every form the lowering must handle (contracted and batch labels, hyperedges, outer
//    products, rank-0 operands, size-1 modes, diagonals, labels summed out of one operand only,
//    unary reductions/permutations/traces) and random mixtures, with operands and results in
//    row-major, column-major, permuted and padded (a view into a larger buffer) layouts. Padding is
//    NaN on input (reading outside a view shows up) and D is pre-filled with NaN bytes (every
//    element of D must be written).
//    A form cuTENSOR rejects (tnrt::not_supported) is RECORDED and listed at the end, and the test
//    fails naming every such form: those need a fallback kernel.
//  - whole random trees through contract_eager vs cpu::contract;
//  - compiled_program vs contract_eager on random networks (same results), and compiled with
//    use_graph = false vs true;
//  - compiled with every GEMM-shaped step through cuBLAS (gemm_lowering = always) and timed
//    (automatic) vs cpu::contract, on random networks and on batched matrix chains.
// Seeds are fixed and printed; tolerances scale with the dtype's eps and the contraction length.
#include "gpu_test_util.hpp"  // first: fails the build when the CUDA/cuTENSOR headers are not reachable

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/full_dot.hpp"
#include "core/mode_orders.hpp"
#include "core/step_lowering.hpp"
#include "core/step_plan.hpp"
#include "cuda/compiled.hpp"
#include "cuda/eager.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/formats.hpp"
#include "support/chain_random.hpp"

namespace tnrt {
namespace {

using cuda::engine;
using gputest::layout;

constexpr dtype all_dtypes[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};

// One einsum step over single letters: "aab", "bc", "ac"; rhs "-" means unary.
struct form {
  std::string name;
  std::string a, b, d;
};

std::vector<form> fixed_forms() {
  return {
      {"matmul", "ab", "bc", "ac"},
      {"batch label", "zab", "zbc", "zac"},
      {"hyperedge Hadamard (label in A, B and D)", "ab", "ab", "ab"},
      {"hyperedge with contraction", "abk", "bkc", "abc"},
      {"outer product", "ab", "cd", "acbd"},
      {"outer product of vectors", "a", "b", "ba"},
      {"full contraction to scalar", "abc", "cab", ""},
      {"rank-0 lhs", "", "ab", "ba"},
      {"rank-0 rhs", "ab", "", "ab"},
      {"rank-0 both", "", "", ""},
      {"rank-0 times vector summed", "", "a", ""},
      {"size-1 modes", "axb", "bxyc", "yxac"},
      {"size-1 contracted only", "ax", "xb", "ab"},
      {"diagonal in lhs", "aab", "bc", "ac"},
      {"diagonal kept in output", "aab", "bc", "abc"},
      {"diagonals in both", "aba", "bcc", "ac"},
      {"summed out of one operand only", "abc", "cd", "ad"},
      {"summed out of each operand separately", "abc", "cde", "ae"},
      {"summed out of rhs only, rest batch", "ab", "abc", "ab"},
      {"unary reduction", "abc", "-", "ac"},
      {"unary permutation", "abc", "-", "cab"},
      {"unary trace", "aab", "-", "b"},
      {"unary full sum", "ab", "-", ""},
      {"unary diagonal extraction", "aa", "-", "a"},
      {"unary rank-0 copy", "", "-", ""},
      {"unary size-1 squeeze", "axb", "-", "ba"},
  };
}

// A random mixture: 2..6 labels, each with a random role, a chance of a diagonal in A or B.
form random_form(std::mt19937_64& rng, int index) {
  const std::string letters = "abcdefgh";
  const int n = 2 + static_cast<int>(rng() % 5);
  std::string a, b, d;
  for (int i = 0; i < n; ++i) {
    const char c = letters[static_cast<std::size_t>(i)];
    switch (rng() % 7) {
      case 0: a += c; d += c; break;           // free in A
      case 1: b += c; d += c; break;           // free in B
      case 2: a += c; b += c; d += c; break;   // batch / hyperedge
      case 3: a += c; b += c; break;           // contracted
      case 4: a += c; break;                   // summed out of A only
      case 5: b += c; break;                   // summed out of B only
      default: a += c; a += c; b += c; break;  // diagonal in A, contracted with B
    }
  }
  std::shuffle(a.begin(), a.end(), rng);
  std::shuffle(b.begin(), b.end(), rng);
  std::shuffle(d.begin(), d.end(), rng);
  return {"random mixture #" + std::to_string(index), a, b, d};
}

struct layout_combo {
  layout a, b, d;
};
constexpr layout_combo combos[] = {
    {layout::row_major, layout::row_major, layout::row_major},
    {layout::column_major, layout::column_major, layout::column_major},
    {layout::permuted, layout::permuted, layout::permuted},
    {layout::padded, layout::padded, layout::padded},
    {layout::row_major, layout::padded, layout::column_major},
    {layout::column_major, layout::permuted, layout::padded},
};

struct outcome_log {
  // form -> "dtype layouts: message" for each rejection
  std::map<std::string, std::vector<std::string>> unsupported;
  std::map<std::string, std::vector<std::string>> errors;  // other exceptions
  int runs = 0, passed = 0;
};

std::string combo_name(const layout_combo& c, bool unary) {
  std::string s = std::string("A:") + gputest::name_of(c.a);
  if (!unary) s += std::string(" B:") + gputest::name_of(c.b);
  return s + " D:" + gputest::name_of(c.d);
}

// "contraction A{modes/extents/strides} B{...} -> D{...}": what cuTENSOR was given.
std::string describe(const strided_operand& o) {
  std::ostringstream s;
  s << "{";
  for (std::size_t i = 0; i < o.modes.size(); ++i)
    s << (i ? " " : "") << "m" << o.modes[i] << ":" << o.extents[i] << "/" << o.strides[i];
  s << "}";
  return s.str();
}
std::string describe(const lowered_step& l) {
  if (l.a.modes.empty() && l.d.modes.empty()) return "(not lowered)";
  if (l.kind == lowered_kind::reduction) return "reduction A" + describe(l.a) + " -> D" + describe(l.d);
  return "contraction A" + describe(l.a) + " B" + describe(l.b) + " -> D" + describe(l.d);
}

// Runs one form in one dtype and layout combination; records the outcome.
void run_form(engine& eng, const form& f, dtype t, const layout_combo& lc, std::uint64_t seed, outcome_log& log) {
  std::mt19937_64 rng(seed);
  const bool unary = f.b == "-";
  network net;
  std::map<char, label_t> ids;
  auto id_of = [&](char c) {
    auto [it, inserted] = ids.emplace(c, static_cast<label_t>(net.extents.size()));
    if (inserted) {
      // x, y: size-1 modes; others 1..4 (mostly 2..4).
      const std::int64_t e = (c == 'x' || c == 'y') ? 1 : (rng() % 8 == 0 ? 1 : 2 + static_cast<std::int64_t>(rng() % 3));
      net.extents.push_back(e);
      net.label_names.emplace_back(1, c);
    }
    return it->second;
  };
  std::vector<label_t> la, lb, ld;
  for (char c : f.a) la.push_back(id_of(c));
  if (!unary)
    for (char c : f.b) lb.push_back(id_of(c));
  for (char c : f.d) ld.push_back(id_of(c));

  host_tensor ha(t, net.shape_of(la));
  fill_random(ha, seed, 0, -1.0, 1.0);
  host_tensor hb;
  if (!unary) {
    hb = host_tensor(t, net.shape_of(lb));
    fill_random(hb, seed, 1, -1.0, 1.0);
  }
  const std::string where = f.name + " [" + f.a + (unary ? "" : "," + f.b) + "->" + f.d + "] " + std::string(name_of(t)) + " " +
                            combo_name(lc, unary) + " seed " + std::to_string(seed);
  ++log.runs;
  host_tensor want;
  try {
    want = cpu::contract_step(ha, la, unary ? nullptr : &hb, lb, ld, net.extents);
  } catch (const std::exception& e) {
    log.errors[f.name].push_back(where + ": CPU engine threw: " + e.what());
    return;
  }
  if (gputest::max_abs(want) == 0) {  // never compare on all-zero data
    log.errors[f.name].push_back(where + ": reference is all zero (bad test data)");
    return;
  }
  double length = 1;
  for (std::size_t i = 0; i < net.extents.size(); ++i)
    if (std::find(ld.begin(), ld.end(), static_cast<label_t>(i)) == ld.end()) length *= static_cast<double>(net.extents[i]);

  const auto bufa = gputest::make_layout(ha.shape(), lc.a, rng);
  const auto bufb = unary ? gputest::strided_buffer{} : gputest::make_layout(hb.shape(), lc.b, rng);
  const std::vector<std::int64_t> dshape = net.shape_of(ld);
  const auto bufd = gputest::make_layout(dshape, lc.d, rng);
  const std::size_t es = size_of(t);
  const auto host_a = gputest::scatter(ha, bufa);
  const auto host_b = unary ? std::vector<unsigned char>{} : gputest::scatter(hb, bufb);
  const device::stream_handle s = eng.stream_handle();
  void* da = eng.pool().allocate(host_a.size(), s);
  void* db = unary ? nullptr : eng.pool().allocate(host_b.size(), s);
  const std::size_t dbytes = static_cast<std::size_t>(bufd.span) * es;
  void* dd = eng.pool().allocate(dbytes, s);
  gputest::upload_bytes(eng, da, host_a.data(), host_a.size());
  if (!unary) gputest::upload_bytes(eng, db, host_b.data(), host_b.size());
  gputest::check_cuda(cudaMemsetAsync(dd, 0xff, dbytes, eng.stream()), "cudaMemsetAsync");  // NaN everywhere

  const labelled_layout lla{&la, bufa.strides};
  const labelled_layout llb{&lb, bufb.strides};
  const labelled_layout lld{&ld, bufd.strides};
  bool ran = false;
  lowered_step low;
  try {
    low = lower_step(lla, unary ? nullptr : &llb, lld, net.extents);
    eng.execute(low, t, da, db, dd);
    ran = true;
  } catch (const not_supported& e) {
    log.unsupported[f.name].push_back(where + ": " + e.what() + "\n      lowered: " + describe(low));
  } catch (const std::exception& e) {
    log.errors[f.name].push_back(where + ": " + e.what() + "\n      lowered: " + describe(low));
  }
  if (ran) {
    std::vector<unsigned char> host_d(dbytes);
    gputest::download_bytes(eng, host_d.data(), dd, dbytes);
    const host_tensor got = gputest::gather(host_d, t, dshape, bufd);
    const double err = gputest::rel_error(got, want);
    const double tol = gputest::tolerance(t, length);
    if (err <= tol) {
      ++log.passed;
    } else {
      ADD_FAILURE() << where << ": rel error " << err << " > tol " << tol << "\n  lowered: " << describe(low);
    }
  }
  eng.pool().deallocate(da, s);
  if (db != nullptr) eng.pool().deallocate(db, s);
  eng.pool().deallocate(dd, s);
}

void report(const outcome_log& log) {
  std::printf("[differential] %d runs, %d passed\n", log.runs, log.passed);
  for (const auto& [name, list] : log.unsupported) {
    std::printf("[UNSUPPORTED FORM] %s: %zu rejections, e.g.\n", name.c_str(), list.size());
    for (std::size_t i = 0; i < list.size() && i < 3; ++i) std::printf("    %s\n", list[i].c_str());
  }
  for (const auto& [name, list] : log.errors) {
    std::printf("[ERROR] %s: %zu failures, e.g.\n", name.c_str(), list.size());
    for (std::size_t i = 0; i < list.size() && i < 3; ++i) std::printf("    %s\n", list[i].c_str());
  }
  std::ostringstream forms;
  for (const auto& [name, list] : log.unsupported) forms << "\n  - " << name << " (" << list.size() << " runs)";
  EXPECT_TRUE(log.unsupported.empty()) << "cuTENSOR rejected these lowered forms (need a fallback kernel):" << forms.str();
  std::ostringstream errs;
  for (const auto& [name, list] : log.errors) errs << "\n  - " << name << ": " << list.front();
  EXPECT_TRUE(log.errors.empty()) << "steps that threw:" << errs.str();
}

class Differential : public ::testing::Test {
 protected:
  void SetUp() override { TNRT_SKIP_WITHOUT_GPU(); }
};

TEST_F(Differential, FixedFormsAllDtypesAllLayouts) {
  engine eng(cuda::options{});
  outcome_log log;
  std::uint64_t seed = 1000;
  for (const form& f : fixed_forms())
    for (dtype t : all_dtypes)
      for (const layout_combo& lc : combos) run_form(eng, f, t, lc, seed++, log);
  report(log);
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

TEST_F(Differential, RandomMixturesAllDtypes) {
  engine eng(cuda::options{});
  outcome_log log;
  const std::uint64_t base = 20240601;
  std::printf("[random forms] generator seed %llu\n", static_cast<unsigned long long>(base));
  std::mt19937_64 gen(base);
  for (int i = 0; i < 60; ++i) {
    const form f = random_form(gen, i);
    const dtype t = all_dtypes[static_cast<std::size_t>(i) % 4];
    const layout_combo& lc = combos[static_cast<std::size_t>(i / 4) % std::size(combos)];
    run_form(eng, f, t, lc, base + 1 + static_cast<std::uint64_t>(i), log);
  }
  report(log);
  eng.synchronize();
}

// A small plan cache: the same forms with evictions in between still give the same answers.
TEST_F(Differential, FixedFormsWithTinyPlanCache) {
  cuda::options opt;
  opt.plan_cache_entries = 2;
  engine eng(opt);
  outcome_log log;
  std::uint64_t seed = 5000;
  for (const form& f : fixed_forms()) run_form(eng, f, dtype::f64, combos[3], seed++, log);
  report(log);
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

// ---------------------------------------------------------------------------------------------
// Whole trees.

host_tensor run_eager(engine& eng, const problem& p, const std::vector<host_tensor>& in) {
  std::vector<void*> d;
  for (const auto& t : in) d.push_back(gputest::upload(eng, t));
  cuda::device_operand r = cuda::contract_eager(eng, p, d);
  host_tensor out = gputest::download(eng, r.ptr, p.type, p.net.shape_of(p.net.output));
  eng.pool().deallocate(r.ptr, eng.stream_handle());
  for (void* x : d) eng.pool().deallocate(x, eng.stream_handle());
  return out;
}

// Uploads the inputs into a program, runs it once and downloads its result.
host_tensor run_program(engine& eng, cuda::compiled_program& prog, const problem& p, const std::vector<host_tensor>& in) {
  for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
  prog.run();
  return gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
}

// Runs `prog` through launch_io `runs` times on buffers of the test's own (the second launch on the
// same buffers builds the in-place graph): run r uploads inputs(r) and compares the result with
// want(r) within `tol`.
template <class Inputs, class Want>
void check_launch_io(engine& eng, cuda::compiled_program& prog, const problem& p, int runs, double tol, Inputs&& inputs, Want&& want,
                     const std::string& what) {
  const std::size_t n = p.net.inputs.size();
  std::vector<std::unique_ptr<gputest::device_buffer>> bufs;
  std::vector<const void*> srcs;
  for (std::size_t i = 0; i < n; ++i) {
    bufs.push_back(std::make_unique<gputest::device_buffer>(prog.input_bytes(i)));
    srcs.push_back(bufs.back()->ptr);
  }
  gputest::device_buffer out(prog.result_bytes());
  for (int run = 0; run < runs; ++run) {
    const std::vector<host_tensor>& x = inputs(run);
    for (std::size_t i = 0; i < n; ++i) gputest::upload_bytes(eng, bufs[i]->ptr, x[i].data(), x[i].bytes());
    prog.launch_io(srcs, out.ptr, eng.stream());
    const host_tensor via_io = gputest::download(eng, out.ptr, p.type, p.net.shape_of(p.net.output));
    EXPECT_LE(gputest::rel_error(via_io, want(run, x)), tol) << what << " launch_io run " << run << " in-place runs " << prog.in_place_runs();
  }
}

host_tensor run_compiled(engine& eng, const problem& p, const std::vector<host_tensor>& in, bool* used_graph = nullptr) {
  cuda::compiled_program prog(eng, p);
  if (used_graph != nullptr) *used_graph = prog.uses_graph();
  if (!prog.graph_note().empty()) std::printf("[compiled] graph note: %s\n", prog.graph_note().c_str());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(prog.input_bytes(i), in[i].bytes());
    gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
  }
  prog.run();
  host_tensor out = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
  EXPECT_EQ(prog.result_bytes(), out.bytes());
  return out;
}

struct tree_case {
  int tensors;
  std::uint64_t seed;
};
constexpr tree_case tree_cases[] = {{3, 71}, {5, 72}, {6, 73}, {8, 74}, {10, 75}, {12, 76}};

gputest::random_network_spec spec_for(int tensors) {
  gputest::random_network_spec spec;
  spec.tensors = tensors;
  spec.min_extent = 2;
  spec.max_extent = 3;
  spec.max_elements = 1 << 18;
  return spec;
}

// Tree case `c` as a random problem of type t (seed c.seed + offset upward: `used` is the one
// taken) and its inputs in [0.25, 1.25].
struct case_problem {
  problem p;
  std::vector<host_tensor> in;
  std::uint64_t used = 0;
};
case_problem tree_case_problem(const tree_case& c, std::uint64_t offset, dtype t) {
  case_problem out;
  out.p = gputest::random_problem(spec_for(c.tensors), c.seed + offset, t, &out.used);
  out.in = gputest::random_inputs(out.p, out.used, 0.25, 1.25);
  return out;
}

TEST_F(Differential, EagerTreesMatchCpu) {
  engine eng(cuda::options{});
  for (dtype t : all_dtypes) {
    for (const tree_case& c : tree_cases) {
      const auto [p, in, used] = tree_case_problem(c, 0, t);
      const host_tensor want = cpu::contract(p, in);
      const host_tensor got = run_eager(eng, p, in);
      const double err = gputest::rel_error(got, want);
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      std::printf("[eager tree] %s %d tensors seed %llu steps %zu: rel error %.3e (tol %.1e)\n", std::string(name_of(t)).c_str(), c.tensors,
                  static_cast<unsigned long long>(used), p.tree.steps.size(), err, tol);
      EXPECT_LE(err, tol) << p.source << " " << name_of(t);
    }
  }
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

// Row-major intermediates (intermediate_layout = row_major) take other lowered forms.
TEST_F(Differential, EagerTreesRowMajorIntermediates) {
  cuda::options opt;
  opt.intermediate_layout = tnrt::layout_policy::row_major;
  engine eng(opt);
  for (dtype t : {dtype::f32, dtype::c128}) {
    for (const tree_case& c : tree_cases) {
      const auto [p, in, used] = tree_case_problem(c, 100, t);
      const double err = gputest::rel_error(run_eager(eng, p, in), cpu::contract(p, in));
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      std::printf("[eager tree, row-major] %s seed %llu: rel error %.3e (tol %.1e)\n", std::string(name_of(t)).c_str(),
                  static_cast<unsigned long long>(used), err, tol);
      EXPECT_LE(err, tol) << p.source;
    }
  }
}

// Planned intermediates (intermediate_layout = planned: each intermediate in a mode order of its
// own, core/mode_orders): eager and compiled (graph and stream replay, one chain and branches at
// once) against the CPU engine in every type. Some intermediate must differ from column-major, or
// the test would prove nothing about the planned strides (inputs of other layouts seeding the pass:
// tests/unit/test_mode_orders.cpp).
TEST_F(Differential, PlannedIntermediatesMatchCpu) {
  cuda::options opt;
  opt.intermediate_layout = tnrt::layout_policy::planned;
  opt.time_layouts = false;
  engine eng(opt);
  cuda::options stream_opt = opt;
  stream_opt.use_graph = false;
  stream_opt.concurrent_branches = kernel_choice::always;
  engine es(stream_opt);
  int checked = 0, reordered = 0;
  for (dtype t : all_dtypes) {
    for (const tree_case& c : tree_cases) {
      const auto [p, in, used] = tree_case_problem(c, 1700, t);
      const host_tensor want = cpu::contract(p, in);
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      const auto planned = planned_strides(p);
      const auto labels = operand_labels(p.net, p.tree);
      for (std::size_t id = p.net.inputs.size(); id + 1 < planned.size(); ++id) {
        reordered += planned[id] != dense_strides(p.net.shape_of(labels[id]), true) ? 1 : 0;
      }
      const double e_eager = gputest::rel_error(run_eager(eng, p, in), want);
      const double e_compiled = gputest::rel_error(run_compiled(eng, p, in), want);
      const double e_stream = gputest::rel_error(run_compiled(es, p, in), want);
      std::printf("[planned] %s seed %llu steps %zu: eager %.3e, compiled %.3e, stream+branches %.3e (tol %.1e)\n",
                  std::string(name_of(t)).c_str(), static_cast<unsigned long long>(used), p.tree.steps.size(), e_eager, e_compiled, e_stream, tol);
      EXPECT_LE(e_eager, tol) << p.source << " eager";
      EXPECT_LE(e_compiled, tol) << p.source << " compiled";
      EXPECT_LE(e_stream, tol) << p.source << " stream replay, branches";
      ++checked;
    }
  }
  EXPECT_GT(reordered, 0) << "no intermediate of these trees is ordered other than column-major";
  std::printf("[planned] %d networks, %d intermediates ordered other than column-major\n", checked, reordered);
  eng.synchronize();
  es.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

TEST_F(Differential, CompiledMatchesEager) {
  engine eng(cuda::options{});
  for (dtype t : all_dtypes) {
    for (const tree_case& c : tree_cases) {
      const auto [p, in, used] = tree_case_problem(c, 200, t);
      const host_tensor eager = run_eager(eng, p, in);
      const host_tensor compiled = run_compiled(eng, p, in);
      const host_tensor want = cpu::contract(p, in);
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      const double e_ce = gputest::rel_error(compiled, eager);
      const double e_cc = gputest::rel_error(compiled, want);
      std::printf("[compiled vs eager] %s seed %llu steps %zu: vs eager %.3e, vs cpu %.3e (tol %.1e)\n", std::string(name_of(t)).c_str(),
                  static_cast<unsigned long long>(used), p.tree.steps.size(), e_ce, e_cc, tol);
      // Same plans, same layouts: the two paths should agree to rounding at most.
      EXPECT_LE(e_ce, 64 * gputest::eps_of(t)) << p.source;
      EXPECT_LE(e_cc, tol) << p.source;
    }
  }
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

TEST_F(Differential, CompiledGraphMatchesStreamReplay) {
  cuda::options with_graph;
  with_graph.use_graph = true;
  cuda::options without_graph;
  without_graph.use_graph = false;
  engine eg(with_graph);
  engine es(without_graph);
  for (dtype t : all_dtypes) {
    for (const tree_case& c : tree_cases) {
      const auto [p, in, used] = tree_case_problem(c, 300, t);
      bool graph = false, no_graph = true;
      const host_tensor rg = run_compiled(eg, p, in, &graph);
      const host_tensor rs = run_compiled(es, p, in, &no_graph);
      EXPECT_TRUE(graph) << "use_graph = true but the program replays on the stream";
      EXPECT_FALSE(no_graph) << "use_graph = false but a graph was captured";
      const double err = gputest::rel_error(rg, rs);
      std::printf("[graph vs stream] %s seed %llu: rel difference %.3e\n", std::string(name_of(t)).c_str(), static_cast<unsigned long long>(used), err);
      EXPECT_LE(err, 64 * gputest::eps_of(t)) << p.source;
      const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
      EXPECT_LE(gputest::rel_error(rg, cpu::contract(p, in)), tol) << p.source;
    }
  }
}

// A one-operand network (no steps) and a network whose only step is unary.
TEST_F(Differential, DegenerateTrees) {
  engine eng(cuda::options{});
  for (dtype t : all_dtypes) {
    problem p;
    p.type = t;
    p.net.extents = {3, 4};
    p.net.label_names = {"a", "b"};
    p.net.inputs = {{0, 1}};
    p.net.output = {0, 1};
    p.source = "single operand";
    const auto in = gputest::random_inputs(p, 91);
    EXPECT_LE(gputest::rel_error(run_eager(eng, p, in), in[0]), 0.0) << "copy of the single input";
    EXPECT_LE(gputest::rel_error(run_compiled(eng, p, in), in[0]), 0.0) << "compiled copy of the single input";

    problem q = p;
    q.net.output = {1};
    q.tree.steps = {step{0, -1, {1}}};
    q.source = "unary sum";
    const auto want = cpu::contract(q, in);
    EXPECT_LE(gputest::rel_error(run_eager(eng, q, in), want), gputest::tolerance(t, 3)) << name_of(t);
    EXPECT_LE(gputest::rel_error(run_compiled(eng, q, in), want), gputest::tolerance(t, 3)) << name_of(t);
  }
  eng.synchronize();
}

// Every step that is one GEMM through cuBLAS (gemm_lowering = always), both intermediate layouts,
// all four types, graph and stream replay; and `automatic` (timed) on the same networks.
TEST_F(Differential, CompiledGemmLoweringMatchesCpu) {
  int chosen = 0, candidates = 0;
  for (const kernel_choice choice : {kernel_choice::always, kernel_choice::automatic}) {
    for (const layout_policy pol : {layout_policy::column_major, layout_policy::row_major}) {
      cuda::options opt;
      opt.gemm_lowering = choice;
      opt.intermediate_layout = pol;
      opt.fuse_small_steps = false;  // every step a library step (the fused launch would take them all)
      opt.use_graph = pol == layout_policy::column_major;
      engine eng(opt);
      ASSERT_NE(eng.blas(), nullptr) << "cuBLAS did not open: " << eng.blas_note();
      for (dtype t : all_dtypes) {
        for (const tree_case& c : tree_cases) {
          const auto [p, in, used] = tree_case_problem(c, 400, t);
          cuda::compiled_program prog(eng, p);
          if (choice == kernel_choice::always) {
            EXPECT_EQ(prog.gemm_chosen(), prog.gemm_candidates());
            chosen += prog.gemm_chosen();
            candidates += prog.gemm_candidates();
          }
          for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
          prog.run();
          const host_tensor got = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
          const double err = gputest::rel_error(got, cpu::contract(p, in));
          const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
          EXPECT_LE(err, tol) << p.source << " " << name_of(t) << " gemm steps " << prog.gemm_chosen();
        }
      }
      eng.synchronize();
      EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
    }
  }
  std::printf("[gemm] random trees: %d of %d GEMM-form steps through cuBLAS under `always`\n", chosen, candidates);
  EXPECT_GT(chosen, 20) << "the random trees should have GEMM-shaped steps";
}

TEST_F(Differential, CompiledGemmLoweringBatchedChain) {
  // A batched chain z: (ab)(bc)(cd)(de), extents large enough for cuBLAS's own kernels; every step
  // is one strided-batched GEMM with row-major intermediates.
  const network net = parse_expression("zab,zbc,zcd,zde->zae", {{6, 48, 40}, {6, 40, 56}, {6, 56, 33}, {6, 33, 24}});
  for (dtype t : all_dtypes) {
    problem p;
    p.net = net;
    p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}, {0, 1}});
    p.type = t;
    p.source = "batched chain";
    const auto in = gputest::random_inputs(p, 5, -1.0, 1.0);
    const host_tensor want = cpu::contract(p, in);
    for (const kernel_choice choice : {kernel_choice::always, kernel_choice::never}) {
      cuda::options opt;
      opt.gemm_lowering = choice;
      opt.intermediate_layout = layout_policy::row_major;  // zac row-major: every step's free labels contiguous
      engine eng(opt);
      cuda::compiled_program prog(eng, p);
      EXPECT_EQ(prog.gemm_candidates(), choice == kernel_choice::never ? 0 : 3) << name_of(t);
      EXPECT_EQ(prog.gemm_chosen(), choice == kernel_choice::never ? 0 : 3) << name_of(t);
      for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
      prog.run();
      const host_tensor got = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
      const double err = gputest::rel_error(got, want);
      std::printf("[gemm] batched chain %s %s: rel error %.3e\n", std::string(name_of(t)).c_str(), choice == kernel_choice::never ? "cuTENSOR" : "cuBLAS", err);
      EXPECT_LE(err, gputest::tolerance(t, 56, 64.0)) << name_of(t);
      const auto kinds = prog.op_kernels();
      EXPECT_EQ(std::count(kinds.begin(), kinds.end(), std::string("cublas")), prog.gemm_chosen());
    }
  }
}

// The full-contraction kernel (options::full_dot): networks whose last step's result is one
// element, its operands alike (dense, the same order: one block of terms), in other orders (the
// index decode, and in shared-memory tiles: the cases checked to plan tiles, one tile a block or
// groups of tiles, partial last groups and tiles whose size is no power of two), with extents
// not powers of two (the division decode), and large enough for a grid of hundreds of blocks whose
// partial sums the last block adds. `always` runs the kernel there and
// must match the CPU engine in all four types; a second run on new values must match again (the
// counter the kernel resets, no stale partial sums), on the graph and on the stream. `automatic`
// times it and still matches.
TEST_F(Differential, CompiledFullDotMatchesCpu) {
  struct dot_case {
    const char* expr;
    std::vector<std::vector<std::int64_t>> shapes;
    std::vector<std::vector<int>> path;
    int f32_group = 0;  // tiled: its group of tiles in f32 (full_dot_grid_of; 1: one tile a round); 0: not checked
  };
  const std::vector<std::int64_t> twos(11, 2), fours(10, 4), twos14(14, 2), twos20(20, 2);
  const std::vector<dot_case> cases = {
      {"abcdefghijk,abcdefghijk->", {twos, twos}, {{0, 1}}},
      {"abcdefghijk,kjihgfedcba->", {twos, twos}, {{0, 1}}},
      {"abcdefghijklmn,nmlkjihgfedcba->", {twos14, twos14}, {{0, 1}}, 1},  // 16 tiles of 1024 terms, one a block
      // 1024 tiles of 1024 terms: in groups of 4 tiles (f32), 2 (f64, c64), 1 (c128)
      {"abcdefghijklmnopqrst,tsrqponmlkjihgfedcba->", {twos20, twos20}, {{0, 1}}, 4},
      // 801 tiles of 180 terms (A's d, c and B's a): groups of 4, the tile's positions by division,
      // the last group one tile
      {"abcd,bcda->", {{5, 801, 6, 6}, {801, 6, 6, 5}}, {{0, 1}}, 4},
      // 945 tiles of 1024 (32 x 32): groups of 4 (2 in f64 and c64, 1 in c128), the last group one tile
      {"abcdef,fedcba->", {{32, 3, 5, 7, 9, 32}, {32, 9, 7, 5, 3, 32}}, {{0, 1}}, 4},
      // 300 tiles: two rounds of one tile, no groups
      {"abcd,bcda->", {{5, 300, 6, 6}, {300, 6, 6, 5}}, {{0, 1}}, 1},
      {"abcdefghij,abcdefghij->", {fours, fours}, {{0, 1}}},          // 2^20 terms: 512 blocks
      {"abcde,edcba->", {{3, 5, 7, 9, 11}, {11, 9, 7, 5, 3}}, {{0, 1}}},  // the division decode
      {"ab,bc,ca->", {{64, 48}, {48, 80}, {80, 64}}, {{0, 1}, {0, 1}}},     // a dot after a GEMM
  };
  int chosen_auto = 0, candidates = 0;
  for (const kernel_choice choice : {kernel_choice::always, kernel_choice::automatic}) {
    for (const bool graph : {true, false}) {
      cuda::options opt;
      opt.full_dot = choice;
      opt.use_graph = graph;
      engine eng(opt);
      for (dtype t : all_dtypes) {
        for (const dot_case& dc : cases) {
          problem p;
          p.net = parse_expression(dc.expr, dc.shapes);
          p.tree = tree_from_linear_path(p.net, dc.path);
          p.type = t;
          p.source = dc.expr;
          if (dc.f32_group > 0) {  // the tiled cases: the last step must plan tiles, in groups as said
            full_dot_record r;
            ASSERT_TRUE(describe_full_dot(plan_steps(p, opt).lowered.back(), r));
            EXPECT_GT(r.tile_n, 0) << dc.expr;
            EXPECT_EQ(full_dot_grid_of(r, 4).group, dc.f32_group) << dc.expr;
          }
          cuda::compiled_program prog(eng, p);
          EXPECT_EQ(prog.dot_candidates(), 1) << dc.expr;
          if (choice == kernel_choice::always) {
            EXPECT_EQ(prog.dots_chosen(), 1) << dc.expr;
          } else {
            chosen_auto += prog.dots_chosen();
            candidates += prog.dot_candidates();
          }
          const auto kinds = prog.op_kernels();
          EXPECT_EQ(std::count(kinds.begin(), kinds.end(), std::string("dot")), prog.dots_chosen()) << dc.expr;
          for (std::uint64_t seed : {11U, 12U}) {
            const auto in = gputest::random_inputs(p, seed, -1.0, 1.25);
            for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
            prog.run();
            const host_tensor got = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
            const double err = gputest::rel_error(got, cpu::contract(p, in));
            EXPECT_LE(err, gputest::tolerance(t, gputest::longest_sum(p), 256.0))
                << dc.expr << " " << name_of(t) << " seed " << seed << (graph ? " graph" : " stream") << " dots " << prog.dots_chosen();
          }
        }
      }
      eng.synchronize();
      EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
    }
  }
  std::printf("[full dot] automatic: %d of %d candidate steps timed faster through the kernel\n", chosen_auto, candidates);
}

// cuBLASLt's algorithms (options::gemm_algos): every GEMM-form step forced onto the heuristic's
// algorithm of rank 0 and of rank 3 (gemm_algo_rank, `always`) matches the CPU engine on the random
// trees and the batched chain, in all four types (wrong layouts, transposes, batch strides or
// alignment would not); then `automatic` times them on a chain of 512-wide GEMMs and still matches.
TEST_F(Differential, CompiledGemmAlgosMatchCpu) {
  ASSERT_NE(cuda::cublaslt(), nullptr) << "cuBLASLt did not open beside cuBLAS";
  int forced = 0;
  for (const int rank : {0, 3}) {
    cuda::options opt;
    opt.gemm_lowering = kernel_choice::always;
    opt.gemm_algo_rank = rank;
    opt.fuse_small_steps = false;
    opt.intermediate_layout = rank == 0 ? layout_policy::column_major : layout_policy::row_major;
    engine eng(opt);
    ASSERT_NE(eng.blas(), nullptr) << "cuBLAS did not open: " << eng.blas_note();
    for (dtype t : all_dtypes) {
      std::vector<problem> cases;
      for (const tree_case& c : tree_cases) {
        std::uint64_t used = 0;
        cases.push_back(gputest::random_problem(spec_for(c.tensors), c.seed + 700, t, &used));
      }
      problem chain;
      chain.net = parse_expression("zab,zbc,zcd,zde->zae", {{6, 48, 40}, {6, 40, 56}, {6, 56, 33}, {6, 33, 24}});
      chain.tree = tree_from_linear_path(chain.net, {{0, 1}, {0, 1}, {0, 1}});
      chain.type = t;
      chain.source = "batched chain";
      cases.push_back(chain);
      for (const problem& p : cases) {
        const auto in = gputest::random_inputs(p, 11, 0.25, 1.25);
        cuda::compiled_program prog(eng, p);
        EXPECT_EQ(prog.gemm_algos_chosen(), prog.gemm_chosen()) << p.source << " " << name_of(t);
        forced += prog.gemm_algos_chosen();
        for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
        prog.run();
        const host_tensor got = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
        const double err = gputest::rel_error(got, cpu::contract(p, in));
        EXPECT_LE(err, gputest::tolerance(t, gputest::longest_sum(p), 256.0)) << p.source << " " << name_of(t) << " rank " << rank;
      }
    }
    eng.synchronize();
  }
  std::printf("[gemm algos] %d steps run on a forced cuBLASLt algorithm\n", forced);
  EXPECT_GT(forced, 40) << "the random trees and chains should have GEMM-shaped steps";

  // `automatic`: timed on steps of 512^3 multiply-adds and more (the floor at 0 here), kept where
  // 3% faster.
  const network net = parse_expression("ab,bc,cd,de,ef->af", {{512, 640}, {640, 512}, {512, 768}, {768, 512}, {512, 576}});
  for (dtype t : {dtype::f32, dtype::c64}) {
    problem p;
    p.net = net;
    p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 3}, {0, 2}, {0, 1}});  // ac, ad, ae, af (each step's result goes last)
    p.type = t;
    p.source = "chain of 512-wide GEMMs";
    const auto in = gputest::random_inputs(p, 13, -1.0, 1.0);
    cuda::options opt;
    opt.gemm_algo_min_ms = 0;
    engine eng(opt);
    cuda::compiled_program prog(eng, p);
    EXPECT_GT(prog.gemm_algo_trials(), 0) << name_of(t) << ": no cuBLASLt algorithm was timed";
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
    prog.run();
    const host_tensor got = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
    const double err = gputest::rel_error(got, cpu::contract(p, in));
    std::printf("[gemm algos] %s %s: %d algorithms timed, %d steps kept one, %d on cuBLAS, rel error %.3e\n", p.source.c_str(),
                std::string(name_of(t)).c_str(), prog.gemm_algo_trials(), prog.gemm_algos_chosen(), prog.gemm_chosen(), err);
    EXPECT_LE(prog.gemm_algos_chosen(), prog.gemm_chosen());
    EXPECT_LE(err, gputest::tolerance(t, 768, 64.0)) << name_of(t);
    eng.synchronize();
  }
}

// launch_io reads a caller's inputs in place once the same sources come back: the first launch
// gathers, the second builds the graph on them and runs it, later ones run it; new contents at the
// same pointers are what it reads (a graph that still gathered, or read stale copies, fails the
// check); other pointers go back to the gather, and the first pointers' graph serves again. Trees
// whose fused launch reads inputs keep the gather; trees without fusion read in place, in every
// dtype, the concurrent capture asked for on trees of 8 tensors and more; a balanced tree of eight
// matrices must take several lanes in its in-place capture. Every result against the CPU engine.
TEST_F(Differential, CompiledReadsInputsInPlace) {
  using dev = gputest::device_buffer;
  int in_place_programs = 0, gather_only = 0;
  for (bool fuse : {false, true}) {
    cuda::options opt;
    opt.fuse_small_steps = fuse;
    engine eng(opt);
    for (dtype t : all_dtypes) {
      for (const tree_case& c : tree_cases) {
        const bool branches = c.tensors >= 8;  // independent steps on side streams in the capture
        std::uint64_t used = 0;
        const problem p = gputest::random_problem(spec_for(c.tensors), c.seed + 1300, t, &used);
        cuda::compiled_program prog(eng, p, 0, 0, nullptr, branches);
        if (!prog.has_io_graph()) continue;
        const std::size_t n = p.net.inputs.size();
        std::vector<std::unique_ptr<dev>> first, second;
        for (std::size_t i = 0; i < n; ++i) {
          first.push_back(std::make_unique<dev>(prog.input_bytes(i)));
          second.push_back(std::make_unique<dev>(prog.input_bytes(i)));
        }
        dev out(prog.result_bytes());
        const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
        for (int run = 0; run < 6; ++run) {
          // Runs 0-2 and 4-5 on the first buffers, run 3 on the second; new values every run.
          const std::vector<host_tensor> in = gputest::random_inputs(p, used + 31 * static_cast<std::uint64_t>(run), 0.25, 1.25);
          std::vector<const void*> srcs(n);
          for (std::size_t i = 0; i < n; ++i) {
            void* at = (run == 3 ? second : first)[i]->ptr;
            gputest::upload_bytes(eng, at, in[i].data(), in[i].bytes());
            srcs[i] = at;
          }
          prog.launch_io(srcs, out.ptr, eng.stream());
          const host_tensor got = gputest::download(eng, out.ptr, t, p.net.shape_of(p.net.output));
          EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), tol)
              << p.source << " " << name_of(t) << " fuse " << fuse << " branches " << branches << " run " << run << " in-place runs "
              << prog.in_place_runs();
        }
        if (prog.in_place_builds() > 0) {
          ++in_place_programs;
          EXPECT_EQ(prog.in_place_builds(), 1) << p.source << ": the first buffers' graph serves runs 4 and 5 again";
          EXPECT_EQ(prog.in_place_runs(), 4U) << p.source << ": runs 1, 2, 4 and 5";
        } else {
          ++gather_only;
          EXPECT_EQ(prog.in_place_runs(), 0U);
          EXPECT_TRUE(fuse) << p.source << ": without fusion every tree reads its inputs in place";
        }
      }
    }
    eng.synchronize();
    EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  }
  std::printf("[in place] %d programs read their inputs in place, %d kept the gather\n", in_place_programs, gather_only);
  EXPECT_GT(in_place_programs, 20);

  // A balanced tree of eight matrices without fusion: four independent first steps, so the
  // in-place graph is captured on several lanes, and still reads what is at the pointers.
  cuda::options opt;
  opt.fuse_small_steps = false;
  engine eng(opt);
  problem p;
  p.net = parse_expression("ab,bc,cd,de,ef,fg,gh,hi->ai", {{64, 48}, {48, 64}, {64, 40}, {40, 64}, {64, 56}, {56, 64}, {64, 32}, {32, 64}});
  p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}});
  p.type = dtype::f32;
  p.source = "balanced tree of eight matrices";
  cuda::compiled_program prog(eng, p, 0, 0, nullptr, true);
  ASSERT_TRUE(prog.has_io_graph());
  std::vector<std::unique_ptr<dev>> bufs;
  std::vector<const void*> srcs;
  for (std::size_t i = 0; i < p.net.inputs.size(); ++i) {
    bufs.push_back(std::make_unique<dev>(prog.input_bytes(i)));
    srcs.push_back(bufs.back()->ptr);
  }
  dev out(prog.result_bytes());
  for (int run = 0; run < 3; ++run) {
    const std::vector<host_tensor> in = gputest::random_inputs(p, 77 + static_cast<std::uint64_t>(run), -1.0, 1.0);
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, bufs[i]->ptr, in[i].data(), in[i].bytes());
    prog.launch_io(srcs, out.ptr, eng.stream());
    const host_tensor got = gputest::download(eng, out.ptr, p.type, p.net.shape_of(p.net.output));
    EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), gputest::tolerance(p.type, 64, 64.0)) << p.source << " run " << run;
  }
  EXPECT_EQ(prog.in_place_runs(), 2U);
  std::printf("[in place] %s: the in-place graph on %d lanes (the gathering one on %d)\n", p.source.c_str(), prog.in_place_lanes(), prog.lanes());
  EXPECT_GT(prog.in_place_lanes(), 1) << "four independent first steps";
  eng.synchronize();
}

// options::time_layouts: the program under each intermediate layout, the fastest kept (none more
// than 3% faster than it), the result still the CPU engine's.
TEST_F(Differential, CompiledTimedLayoutsMatchCpu) {
  cuda::options opt;
  opt.time_layouts = true;
  engine eng(opt);
  for (dtype t : {dtype::f32, dtype::c128}) {
    for (const tree_case& c : tree_cases) {
      const auto [p, in, used] = tree_case_problem(c, 500, t);
      const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
      const auto& times = prog->layout_times();
      ASSERT_EQ(times.size(), p.tree.steps.size() < 2 ? 0U : std::size(all_layouts)) << p.source;
      float chosen = -1;
      for (const auto& [l, ms] : times)
        if (l == prog->intermediate_layout()) chosen = ms;
      if (!times.empty()) {
        EXPECT_EQ(times.front().first, opt.intermediate_layout) << "the options' layout is timed first";
        ASSERT_GE(chosen, 0.0F) << "the kept layout was timed";
        for (const auto& [l, ms] : times) EXPECT_LE(chosen * 0.97F, ms) << "a layout 3% faster than the kept one";
      }
      for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog->input(i), in[i].data(), in[i].bytes());
      prog->run();
      const host_tensor got = gputest::download(eng, prog->result(), p.type, p.net.shape_of(p.net.output));
      EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), gputest::tolerance(t, gputest::longest_sum(p), 256.0)) << p.source;
    }
  }
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

// options::kernel_ranks (opt-in): with the time floor at 0, every library step also times the
// runner-up kernels of cuTENSOR's ranking. On a chain of 1024-wide GEMM steps cuTENSOR plans some of
// them (the small random networks' steps may have none: 0 planned there on the H200); every result,
// whichever kernel timing kept, in all four types, matches the CPU engine's.
TEST_F(Differential, CompiledKernelRanksMatchCpu) {
  cuda::options opt;
  EXPECT_EQ(opt.kernel_ranks, 0) << "runner-up kernels are opt-in";
  opt.time_layouts = false;
  opt.gemm_lowering = kernel_choice::never;  // keep GEMM-shaped steps on cuTENSOR's plans
  opt.kernel_ranks = 3;
  opt.kernel_rank_min_ms = 0;
  engine eng(opt);
  int trials = 0, chosen = 0;
  for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
    std::vector<problem> problems;
    problem chain;
    chain.net = parse_expression("ab,bc,cd->ad", {{1024, 768}, {768, 1024}, {1024, 512}});
    chain.tree = tree_from_linear_path(chain.net, {{0, 1}, {0, 1}});
    chain.type = t;
    chain.source = "chain";
    problems.push_back(chain);
    std::vector<std::uint64_t> seeds{13};
    for (const tree_case& c : tree_cases) {
      std::uint64_t used = 0;
      problems.push_back(gputest::random_problem(spec_for(c.tensors), c.seed + 900, t, &used));
      seeds.push_back(used);
    }
    for (std::size_t i = 0; i < problems.size(); ++i) {
      const problem& p = problems[i];
      const auto in = gputest::random_inputs(p, seeds[i], 0.25, 1.25);
      const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
      trials += prog->kernel_rank_trials();
      chosen += prog->kernel_ranks_chosen();
      EXPECT_LE(prog->kernel_ranks_chosen(), prog->algos_changed()) << p.source;
      if (i == 0) {
        std::printf("[kernel-ranks] chain %s: %d runner-up plans timed, %d steps kept one\n", std::string(name_of(t)).c_str(),
                    prog->kernel_rank_trials(), prog->kernel_ranks_chosen());
        EXPECT_GT(prog->kernel_rank_trials(), 0) << "cuTENSOR planned no runner-up kernel for a 1024-wide GEMM step";
      }
      const host_tensor got = run_program(eng, *prog, p, in);
      EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), gputest::tolerance(t, std::max(1024.0, gputest::longest_sum(p)), 256.0))
          << p.source;
    }
  }
  std::printf("[kernel-ranks] %d runner-up plans timed, %d steps kept one\n", trials, chosen);
  eng.synchronize();
  EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
}

// options::time_layouts in eager calls: a network's first eight calls run under each layout twice
// (a warm call, then a timed call), a later call settles on one, and every call's result is the CPU
// engine's. Off: no trial, no decision. In all four types, on networks of several sizes (seeds of
// their own: the learning is kept per thread, so a network another test contracted on this thread
// would already be decided).
TEST_F(Differential, EagerLearnsItsLayout) {
  int decided = 0;
  for (bool learn : {true, false}) {
    cuda::options opt;
    opt.time_layouts = learn;
    engine eng(opt);
    for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
      for (const tree_case& c : tree_cases) {
        if (c.tensors < 5) continue;
        const auto [p, in, used] = tree_case_problem(c, 900 + (learn ? 0 : 50), t);
        const host_tensor want = cpu::contract(p, in);
        const cuda::counters before = eng.stats();
        for (int call = 0; call < 10; ++call)
          EXPECT_LE(gputest::rel_error(run_eager(eng, p, in), want), gputest::tolerance(t, gputest::longest_sum(p), 64.0))
              << p.source << " " << name_of(t) << " call " << call;
        const cuda::counters after = eng.stats();
        const auto trials = after.api.eager_layout_trials - before.api.eager_layout_trials;
        const auto learned = after.api.eager_layouts_learned() - before.api.eager_layouts_learned();
        if (learn && p.tree.steps.size() >= 2) {
          EXPECT_EQ(trials, layout_count) << p.source;
          EXPECT_EQ(learned, 1U) << p.source << ": run_eager waits for each call, so call 9 can decide";
          decided += static_cast<int>(learned);
        } else {
          EXPECT_EQ(trials, 0U) << p.source;
          EXPECT_EQ(learned, 0U) << p.source;
        }
      }
    }
    const cuda::counters c = eng.stats();
    std::printf("[eager layouts] learn %d: %llu trials, decided column %llu, row %llu, follow %llu, planned %llu\n", learn ? 1 : 0,
                static_cast<unsigned long long>(c.api.eager_layout_trials), static_cast<unsigned long long>(c.api.eager_layouts_column),
                static_cast<unsigned long long>(c.api.eager_layouts_row), static_cast<unsigned long long>(c.api.eager_layouts_follow),
                static_cast<unsigned long long>(c.api.eager_layouts_planned));
    eng.synchronize();
    EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  }
  EXPECT_GT(decided, 0);
}

// Eager's cuBLAS route (core/gemm_route.hpp, src/cuda/eager.cpp). Under `always` (gemm_lowering
// and gemm_copies) every library step that is one GEMM, as it lies or after copies, runs through
// cuBLAS from the first call, untimed: random networks in all four types and two layouts, and two
// single steps that need a copy of A and of D, must match the CPU engine. Under `automatic` (the
// default) a batched chain whose steps are 2^20 multiply-adds and more is learned: a warm call with
// every candidate routed, two calls timed step by step, two calls timed whole (as planned, then with
// the steps picked; when any), then the route confirmed or dropped; every call of the learning and
// after it must match, and two or four calls are timed per network (with and without its layout
// learned first).
TEST_F(Differential, EagerGemmRouteMatchesCpu) {
  std::uint64_t routed = 0;
  for (const layout_policy pol : {layout_policy::column_major, layout_policy::row_major}) {
    cuda::options opt;
    opt.gemm_lowering = kernel_choice::always;
    opt.gemm_copies = kernel_choice::always;
    opt.intermediate_layout = pol;
    opt.time_layouts = false;
    opt.fuse_small_steps = false;  // every step a library step
    opt.tiled_kernel = kernel_choice::never;
    engine eng(opt);
    ASSERT_NE(eng.blas(), nullptr) << "cuBLAS did not open: " << eng.blas_note();
    const cuda::counters before = eng.stats();
    for (dtype t : all_dtypes) {
      for (const tree_case& c : tree_cases) {
        const auto [p, in, used] = tree_case_problem(c, 600, t);
        const host_tensor want = cpu::contract(p, in);
        const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
        for (int call = 0; call < 2; ++call)
          EXPECT_LE(gputest::rel_error(run_eager(eng, p, in), want), tol) << p.source << " " << name_of(t) << " call " << call;
      }
      for (const char* expr : {"ijb,bjk->bik", "bij,bjk->kib"}) {
        problem p;
        p.net = parse_expression(expr, expr[0] == 'i' ? std::vector<std::vector<std::int64_t>>{{48, 96, 8}, {8, 96, 80}}
                                                      : std::vector<std::vector<std::int64_t>>{{8, 48, 96}, {8, 96, 80}});
        p.tree = tree_from_linear_path(p.net, {{0, 1}});
        p.type = t;
        p.source = expr;
        const auto in = gputest::random_inputs(p, 19, -1.0, 1.0);
        EXPECT_LE(gputest::rel_error(run_eager(eng, p, in), cpu::contract(p, in)), gputest::tolerance(t, 96.0, 64.0)) << expr << " " << name_of(t);
      }
    }
    const cuda::counters after = eng.stats();
    EXPECT_EQ(after.api.eager_route_trials, before.api.eager_route_trials) << "`always` times nothing";
    routed += after.api.eager_route_steps - before.api.eager_route_steps;
    eng.synchronize();
    EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  }
  std::printf("[eager route] always: %llu steps through cuBLAS\n", static_cast<unsigned long long>(routed));
  EXPECT_GT(routed, 20U) << "the random networks and the two single steps should have GEMM-shaped steps";

  const network net = parse_expression("zab,zbc,zcd,zde->zae", {{8, 128, 96}, {8, 96, 128}, {8, 128, 112}, {8, 112, 128}});
  for (bool learn_layout : {false, true}) {
    cuda::options opt;
    opt.time_layouts = learn_layout;
    engine eng(opt);
    for (dtype t : all_dtypes) {
      problem p;
      p.net = net;
      p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}, {0, 1}});
      p.type = t;
      p.source = learn_layout ? "batched chain, layout learned first" : "batched chain";
      const auto in = gputest::random_inputs(p, 23 + (learn_layout ? 1U : 0U), -1.0, 1.0);
      const host_tensor want = cpu::contract(p, in);
      const cuda::counters before = eng.stats();
      const int calls = (learn_layout ? 2 * static_cast<int>(layout_count) : 0) + 6;
      for (int call = 0; call < calls; ++call)
        EXPECT_LE(gputest::rel_error(run_eager(eng, p, in), want), gputest::tolerance(t, 128.0, 64.0)) << p.source << " " << name_of(t) << " call " << call;
      const cuda::counters after = eng.stats();
      const auto trials = after.api.eager_route_trials - before.api.eager_route_trials;
      // A learned layout is a timed choice: under some of them no step of the chain is GEMM-shaped
      // and the route has nothing to time (seen on an H200, 2026-12-06: f64, c64 and c128 learned
      // such a layout). Under the fixed column-major layout every step is a candidate.
      if (learn_layout) {
        EXPECT_TRUE(trials == 0U || trials == 2U || trials == 4U)
            << p.source << " " << name_of(t) << ": " << trials << " timed calls";
      } else {
        EXPECT_TRUE(trials == 2U || trials == 4U) << p.source << " " << name_of(t) << ": " << trials << " timed calls";
      }
      const auto kept = after.api.eager_route_steps - before.api.eager_route_steps;
      const auto picked = after.api.eager_route_picked - before.api.eager_route_picked;
      const auto check_library = after.api.eager_route_check_library_us - before.api.eager_route_check_library_us;
      const auto check_route = after.api.eager_route_check_route_us - before.api.eager_route_check_route_us;
      std::printf("[eager route] %s %s: %llu of 3 steps kept cuBLAS (picked %llu; check %llu us without, %llu with)\n", p.source.c_str(),
                  std::string(name_of(t)).c_str(), static_cast<unsigned long long>(kept), static_cast<unsigned long long>(picked),
                  static_cast<unsigned long long>(check_library), static_cast<unsigned long long>(check_route));
      EXPECT_LE(kept, 3U);
      // The decision's record: two timed calls pick nothing (no check); four picked at least one
      // step, then the whole-call check timed both calls, and only picked steps can be kept.
      EXPECT_LE(kept, picked) << p.source << " " << name_of(t);
      if (trials == 2U) {
        EXPECT_EQ(picked, 0U) << p.source << " " << name_of(t);
        EXPECT_EQ(check_library + check_route, 0U) << p.source << " " << name_of(t);
      }
      if (trials == 4U) {
        EXPECT_GE(picked, 1U) << p.source << " " << name_of(t);
        EXPECT_GT(check_library, 0U) << p.source << " " << name_of(t);
        EXPECT_GT(check_route, 0U) << p.source << " " << name_of(t);
      }
    }
    eng.synchronize();
    EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
  }
}

// Eager's tiled steps timed against cuTENSOR (the route's `library` candidates,
// core/gemm_route.hpp): a streaming step the rule puts on the tiled kernel is learned like a cuBLAS
// candidate (a warm call on cuTENSOR, two calls timed step by step, maybe two timed whole), and every
// call, on either kernel, must match the CPU engine; with tiled_kernel `always` nothing is timed.
TEST_F(Differential, EagerTiledAlternativeMatchesCpu) {
  for (dtype t : all_dtypes) {
    for (kernel_choice tiled : {kernel_choice::automatic, kernel_choice::always}) {
      cuda::options opt;
      opt.tiled_kernel = tiled;
      opt.fuse_small_steps = false;
      engine eng(opt);
      problem p;
      p.net = parse_expression("wxyk,kz->wxyz", {{64, 64, 32, 8}, {8, 8}});
      p.tree = tree_from_linear_path(p.net, {{0, 1}});
      p.type = t;
      p.source = "streaming step";
      const auto in = gputest::random_inputs(p, 31, -1.0, 1.0);
      const host_tensor want = cpu::contract(p, in);
      const cuda::counters before = eng.stats();
      for (int call = 0; call < 7; ++call)
        EXPECT_LE(gputest::rel_error(run_eager(eng, p, in), want), gputest::tolerance(t, 8.0, 16.0))
            << name_of(t) << " tiled " << static_cast<int>(tiled) << " call " << call;
      const cuda::counters after = eng.stats();
      const auto trials = after.api.eager_route_trials - before.api.eager_route_trials;
      const auto kept = after.api.eager_route_steps - before.api.eager_route_steps;
      const auto back = after.api.eager_route_tiled - before.api.eager_route_tiled;
      std::printf("[eager tiled] %s tiled_kernel %d: %llu timed calls, %llu of 1 step back on cuTENSOR\n", std::string(name_of(t)).c_str(),
                  static_cast<int>(tiled), static_cast<unsigned long long>(trials), static_cast<unsigned long long>(back));
      if (tiled == kernel_choice::automatic) {
        EXPECT_TRUE(trials == 2U || trials == 4U) << name_of(t) << ": " << trials << " timed calls";
        EXPECT_EQ(back, kept) << "the only candidate is the tiled step";
        EXPECT_LE(back, 1U);
      } else {
        EXPECT_EQ(trials, 0U) << "tiled_kernel always: nothing to time";
      }
      eng.synchronize();
      EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
    }
  }
}

// Independent steps at once: programs captured on several streams, their intermediates planned over
// the tree's levels, against the CPU engine, in every dtype, with and without fusion, three runs
// each on fresh inputs (a race shows as a moving error); the graph-less replay (one stream, level
// order) too. Some of the trees must actually take several lanes.
TEST_F(Differential, CompiledConcurrentBranchesMatchCpu) {
  int several_lanes = 0, programs = 0;
  for (bool fuse : {false, true}) {
    for (bool graph : {true, false}) {
      cuda::options opt;
      opt.fuse_small_steps = fuse;
      opt.use_graph = graph;
      engine eng(opt);
      for (dtype t : {dtype::f32, dtype::f64, dtype::c64, dtype::c128}) {
        for (const tree_case& c : tree_cases) {
          for (int tensors : {c.tensors, c.tensors + 6}) {
            std::uint64_t used = 0;
            const problem p = gputest::random_problem(spec_for(tensors), c.seed + 900 + static_cast<std::uint64_t>(tensors), t, &used);
            cuda::compiled_program prog(eng, p, 0, 0, nullptr, true);
            ASSERT_TRUE(prog.concurrent());
            ++programs;
            if (prog.lanes() > 1) ++several_lanes;
            EXPECT_EQ(prog.uses_graph(), graph) << prog.graph_note();
            EXPECT_LE(prog.critical_ops(), static_cast<int>(prog.launches()));
            for (int rep = 0; rep < 3; ++rep) {
              const auto in = gputest::random_inputs(p, used + static_cast<std::uint64_t>(rep), 0.25, 1.25);
              for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog.input(i), in[i].data(), in[i].bytes());
              prog.run();
              const host_tensor got = gputest::download(eng, prog.result(), p.type, p.net.shape_of(p.net.output));
              EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), gputest::tolerance(t, gputest::longest_sum(p), 256.0))
                  << p.source << " fuse " << fuse << " graph " << graph << " lanes " << prog.lanes() << " run " << rep;
            }
          }
        }
      }
      eng.synchronize();
      EXPECT_EQ(eng.stats().retirement.in_flight, 0U);
    }
  }
  std::printf("[branches] %d of %d programs took several lanes\n", several_lanes, programs);
  EXPECT_GE(several_lanes, programs / 8);  // 44 of 192 on the H200 (fusion takes most small trees whole)
}

// build() with concurrent_branches: `always` keeps the concurrent variant of the winning layout and
// reports both times; `never` times none.
TEST_F(Differential, CompiledBranchesChoice) {
  for (kernel_choice how : {kernel_choice::always, kernel_choice::never, kernel_choice::automatic}) {
    cuda::options opt;
    opt.concurrent_branches = how;
    engine eng(opt);
    std::uint64_t used = 0;
    const problem p = gputest::random_problem(spec_for(16), 4242, dtype::f32, &used);
    const auto in = gputest::random_inputs(p, used, 0.25, 1.25);
    const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
    const auto [chain_ms, concurrent_ms] = prog->branch_times();
    if (how == kernel_choice::never) {
      EXPECT_FALSE(prog->concurrent());
      EXPECT_LT(concurrent_ms, 0.0F);
    } else {
      EXPECT_GE(concurrent_ms, 0.0F);
      EXPECT_GE(chain_ms, 0.0F);
      if (how == kernel_choice::always) {
        EXPECT_TRUE(prog->concurrent());
      } else {
        EXPECT_EQ(prog->concurrent(), concurrent_ms < chain_ms * 0.97F);
      }
    }
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog->input(i), in[i].data(), in[i].bytes());
    prog->run();
    const host_tensor got = gputest::download(eng, prog->result(), p.type, p.net.shape_of(p.net.output));
    EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), gputest::tolerance(dtype::f32, gputest::longest_sum(p), 256.0));
  }
}

// build() with split_sums (split-K by labels, src/core/split_sums.hpp) on a long sum into a small
// result (out 4 x 8 x 8 = 256 elements, summed over 2^16 in 16 extent-2 labels): `always` runs the
// split tree (one step split), `never` the tree as it is (no timing), `automatic` keeps whichever it
// timed faster; every program agrees with the CPU engine, and the op-to-step map names the original
// tree's steps only. The split program's time beside the tree's is printed (the probe measured 45x).
TEST_F(Differential, CompiledSplitSumsChoice) {
  const std::string bat = "AB", m = "mno", n = "stu", k = "abcdefghijklCDEF";  // 4, 8, 8 and 2^16
  const std::string lhs = bat + m + k, rhs = bat + k + n, out = bat + m + n;
  problem p;
  std::vector<std::int64_t> ls(lhs.size(), 2), rs(rhs.size(), 2);
  p.net = parse_expression(lhs + "," + rhs + "->" + out, {ls, rs});
  p.tree = tree_from_linear_path(p.net, {{0, 1}});
  p.type = dtype::f32;
  p.source = "long sum";
  const auto in = gputest::random_inputs(p, 11, -1.0, 1.0);
  const host_tensor want = cpu::contract(p, in);
  for (kernel_choice how : {kernel_choice::always, kernel_choice::never, kernel_choice::automatic}) {
    cuda::options opt;
    opt.split_sums = how;
    engine eng(opt);
    const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
    const auto [tree_ms, split_ms] = prog->split_times();
    std::printf("[split] %s: %d split, tree %.3f ms, split %.3f ms\n",
                how == kernel_choice::always ? "always" : how == kernel_choice::never ? "never" : "auto", prog->split_steps(), tree_ms, split_ms);
    if (how == kernel_choice::always) {
      EXPECT_EQ(prog->split_steps(), 1);
    }
    if (how == kernel_choice::never) {
      EXPECT_EQ(prog->split_steps(), 0);
      EXPECT_LT(split_ms, 0.0F);
    }
    if (how == kernel_choice::automatic) {
      ASSERT_GE(split_ms, 0.0F);
      EXPECT_EQ(prog->split_steps(), split_ms < tree_ms * 0.97F ? 1 : 0);
    }
    for (int st : prog->op_steps()) {
      EXPECT_LT(st, 1) << "an op names a step the original tree does not have";
    }
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog->input(i), in[i].data(), in[i].bytes());
    prog->run();
    const host_tensor got = gputest::download(eng, prog->result(), p.type, p.net.shape_of(p.net.output));
    EXPECT_LE(gputest::rel_error(got, want), gputest::tolerance(dtype::f32, 65536.0, 64.0));
  }
}

// cuBLAS's workspace on GEMM steps (options::gemm_workspace_bytes) and JIT candidates
// (options::jit_steps): the arena holds the workspace only when asked, and neither changes the result.
TEST_F(Differential, CompiledGemmWorkspaceAndJit) {
  problem p;
  p.net = parse_expression("ab,bc,cd->ad", {{1024, 768}, {768, 1024}, {1024, 512}});
  p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}});
  p.type = dtype::f32;
  p.source = "chain";
  const auto in = gputest::random_inputs(p, 13, -1.0, 1.0);
  const host_tensor want = cpu::contract(p, in);
  std::size_t arena[2] = {0, 0};
  for (int variant = 0; variant < 3; ++variant) {
    cuda::options opt;
    opt.gemm_lowering = kernel_choice::always;
    opt.time_layouts = false;
    opt.split_sums = kernel_choice::never;
    opt.concurrent_branches = kernel_choice::never;
    EXPECT_EQ(opt.gemm_workspace_bytes, 0U) << "the default is the cuTENSOR plan's workspace";
    if (variant > 0) opt.gemm_workspace_bytes = std::size_t{32} << 20;
    if (variant == 2) {
      opt.gemm_lowering = kernel_choice::automatic;
      opt.jit_steps = 2;
    }
    engine eng(opt);
    const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
    std::printf("[gemm-ws] variant %d: arena %zu bytes, %d GEMM workspaces, %d cuBLAS steps, %d JIT steps\n", variant,
                prog->plan().arena_bytes, prog->gemm_workspaces(), prog->gemm_chosen(), prog->jit_chosen());
    if (variant < 2) {
      arena[variant] = prog->plan().arena_bytes;
      EXPECT_EQ(prog->gemm_chosen(), 2);
      EXPECT_EQ(prog->gemm_workspaces(), variant == 0 ? 0 : 2);
    } else {
      // at most the two steps get a JIT plan, and each one that does says so in the step profile
      EXPECT_LE(prog->jit_chosen(), 2);
      const std::vector<std::string> kernels = prog->op_kernels();
      EXPECT_EQ(std::count(kernels.begin(), kernels.end(), std::string("library jit")), prog->jit_chosen());
    }
    for (std::size_t i = 0; i < in.size(); ++i) gputest::upload_bytes(eng, prog->input(i), in[i].data(), in[i].bytes());
    prog->run();
    const host_tensor got = gputest::download(eng, prog->result(), p.type, p.net.shape_of(p.net.output));
    EXPECT_LE(gputest::rel_error(got, want), gputest::tolerance(dtype::f32, 1024.0, 64.0));
  }
  // The workspace replaces the step's plan workspace (it does not add to it): the arena holds at
  // least the second step's live tensors (its 1024x1024 operand and 1024x512 result) beside 32 MiB.
  const std::size_t live = (std::size_t{1024} * 1024 + std::size_t{1024} * 512) * sizeof(float);
  EXPECT_GE(arena[1], (std::size_t{32} << 20) + live) << "the 32 MiB cuBLAS workspace should be in the arena (beside the live tensors)";
  EXPECT_GT(arena[1], arena[0]);
}

// Steps that are no GEMM as they lie, run as copies of operands and one cuBLAS GEMM
// (options::gemm_copies = always, no timing): on one-step networks whose A (its batch label
// fastest) or D (the result's batch label fastest) keeps it from the form, and on random networks
// in all four types and both intermediate layouts; every such step says so in the step profile,
// and every result matches the CPU engine's. `automatic` on the one-step networks: right whatever
// timing chose.
TEST_F(Differential, CompiledGemmWithCopiesMatchesCpu) {
  struct one_step {
    const char* expr;
    bool a, d;  // which operands must be copied
  };
  for (const one_step& c : {one_step{"ijb,bjk->bik", true, false}, one_step{"bij,bjk->kib", false, true}}) {
    for (dtype t : {dtype::f32, dtype::c128}) {
      for (const kernel_choice how : {kernel_choice::always, kernel_choice::automatic}) {
        problem p;
        p.net = parse_expression(c.expr, c.a ? std::vector<std::vector<std::int64_t>>{{48, 96, 8}, {8, 96, 80}}
                                             : std::vector<std::vector<std::int64_t>>{{8, 48, 96}, {8, 96, 80}});
        p.tree = tree_from_linear_path(p.net, {{0, 1}});
        p.type = t;
        p.source = c.expr;
        cuda::options opt;
        opt.gemm_copies = how;
        opt.time_layouts = false;
        engine eng(opt);
        ASSERT_NE(eng.blas(), nullptr) << "cuBLAS did not open: " << eng.blas_note();
        const auto in = gputest::random_inputs(p, 17, -1.0, 1.0);
        const host_tensor want = cpu::contract(p, in);
        cuda::compiled_program prog(eng, p);
        std::printf("[gemm copies] %s %s %s: %d steps with copies, scratch %zu bytes\n", c.expr, std::string(name_of(t)).c_str(),
                    how == kernel_choice::always ? "always" : "auto", prog.copies_chosen(), prog.copies_bytes());
        if (how == kernel_choice::always) {
          EXPECT_EQ(prog.copies_chosen(), 1) << c.expr;
          const std::size_t elem = size_of(t);
          const std::size_t a_bytes = in[0].bytes(), d_bytes = static_cast<std::size_t>(element_count(p.net.shape_of(p.net.output))) * elem;
          EXPECT_GE(prog.copies_bytes(), (c.a ? a_bytes : 0) + (c.d ? d_bytes : 0)) << "the scratch holds the copies";
          EXPECT_LT(prog.copies_bytes(), a_bytes + in[1].bytes() + d_bytes + 3 * 256) << "no more than the three operands";
        }
        const std::vector<std::string> kernels = prog.op_kernels();
        EXPECT_EQ(std::count(kernels.begin(), kernels.end(), std::string("cublas copies")), prog.copies_chosen());
        const host_tensor got = run_program(eng, prog, p, in);
        EXPECT_LE(gputest::rel_error(got, want), gputest::tolerance(t, 96.0, 64.0)) << c.expr << " " << name_of(t);
      }
    }
  }
  int chosen = 0, tried = 0;
  for (const layout_policy pol : {layout_policy::column_major, layout_policy::row_major}) {
    cuda::options opt;
    opt.gemm_copies = kernel_choice::always;
    opt.intermediate_layout = pol;
    opt.time_layouts = false;
    opt.fuse_small_steps = false;  // every step a library step
    opt.tiled_kernel = kernel_choice::never;
    opt.use_graph = pol == layout_policy::row_major;
    engine eng(opt);
    for (dtype t : all_dtypes) {
      for (const tree_case& c : tree_cases) {
        const auto [p, in, used] = tree_case_problem(c, 500, t);
        cuda::compiled_program prog(eng, p);
        chosen += prog.copies_chosen();
        tried += prog.copies_tried();
        const std::vector<std::string> kernels = prog.op_kernels();
        EXPECT_EQ(std::count(kernels.begin(), kernels.end(), std::string("cublas copies")), prog.copies_chosen());
        const host_tensor got = run_program(eng, prog, p, in);
        const double err = gputest::rel_error(got, cpu::contract(p, in));
        const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
        EXPECT_LE(err, tol) << p.source << " " << name_of(t) << ", " << prog.copies_chosen() << " steps with copies";
      }
    }
  }
  std::printf("[gemm copies] random networks: %d steps with copies (%d with their plans made)\n", chosen, tried);
  EXPECT_GT(chosen, 0) << "the random networks should have steps that need copies";
}

// Compiled's whole-program check of its cuBLAS steps (options::gemm_check, build_tree): under
// `always` every step on cuBLAS goes back to its cuTENSOR plan untimed, as a timed check does when
// the program replays faster without them. Random networks whose steps run as copies and a GEMM
// (gemm_copies `always`), built through compiled_program::build (layouts timed, so the check runs):
// under `always` no step keeps copies, gemm_dropped counts those it had, and the results (the graph
// captured again) match the CPU engine's; under `never` the copies stay and match too.
TEST_F(Differential, CompiledGemmCheckTakesStepsBack) {
  int dropped = 0, kept = 0;
  // Per problem, the steps `always` took back: at least the steps `never` keeps with copies, which
  // gemm_copies `always` places alike in both programs (an independent count: two programs).
  std::vector<int> dropped_of;
  for (const kernel_choice check : {kernel_choice::always, kernel_choice::never}) {
    std::size_t index = 0;
    cuda::options opt;
    opt.gemm_copies = kernel_choice::always;
    opt.gemm_check = check;
    opt.fuse_small_steps = false;  // every step a library step
    opt.tiled_kernel = kernel_choice::never;
    opt.time_layouts = false;  // one layout: the copies land on the same steps in both programs
    engine eng(opt);
    for (dtype t : {dtype::f32, dtype::c128}) {
      for (const tree_case& c : tree_cases) {
        const auto [p, in, used] = tree_case_problem(c, 500, t);
        const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
        const std::vector<std::string> kernels = prog->op_kernels();
        const auto copies = std::count(kernels.begin(), kernels.end(), std::string("cublas copies"));
        EXPECT_EQ(copies, prog->copies_chosen()) << p.source;
        if (check == kernel_choice::always) {
          EXPECT_EQ(prog->copies_chosen(), 0) << p.source << ": `always` takes every step back";
          EXPECT_EQ(prog->gemm_chosen(), 0) << p.source;
          EXPECT_EQ(std::count(kernels.begin(), kernels.end(), std::string("cublas")), 0) << p.source;
          dropped += prog->gemm_dropped();
          dropped_of.push_back(prog->gemm_dropped());
        } else {
          EXPECT_EQ(prog->gemm_dropped(), 0) << p.source << ": `never` checks nothing";
          kept += prog->copies_chosen();
          ASSERT_LT(index, dropped_of.size());
          EXPECT_GE(dropped_of[index], prog->copies_chosen()) << p.source << " " << name_of(t) << ": `always` took fewer steps back than `never` keeps with copies";
        }
        ++index;
        const host_tensor got = run_program(eng, *prog, p, in);
        EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), gputest::tolerance(t, gputest::longest_sum(p), 256.0))
            << p.source << " " << name_of(t) << (check == kernel_choice::always ? ", steps taken back" : ", copies kept");
      }
    }
  }
  std::printf("[gemm check] always: %d steps taken back; never: %d steps kept with copies\n", dropped, kept);
  EXPECT_GT(dropped, 0) << "the random networks should have steps on cuBLAS to take back";
  EXPECT_GT(kept, 0);
}

// Grid runs (options::grid_steps, check_grid_runs): under `always` consecutive small library steps
// run as one cooperative launch each, a grid-wide barrier between steps. Random trees with every
// step on a cuTENSOR plan (no fusion, tiled kernel, cuBLAS or full dot), in every dtype: the steps
// op_kernels calls "grid" are grid_steps(), the launches drop by grid_steps - grid_runs, and the
// result matches the CPU engine's on the captured graph and through launch_io, whose in-place
// graph (inputs at the caller's pointers) runs those steps one launch each (the records hold the
// program's own inputs) and still reads what is at the caller's pointers. Under `never` no step is
// in a run.
TEST_F(Differential, CompiledGridRunsMatchCpu) {
  int grid_steps = 0, grid_runs = 0, in_place = 0;
  for (const kernel_choice check : {kernel_choice::always, kernel_choice::never}) {
    cuda::options opt;
    opt.grid_steps = check;
    // One chain: a program whose branches run concurrently keeps its launches, and build() times
    // the concurrent capture, so with branches left to timing the runs here varied between
    // sittings (13 steps in 4 runs on cf45393, 2 in 1 on cfee802, both on an H100).
    opt.concurrent_branches = kernel_choice::never;
    opt.fuse_small_steps = false;
    opt.tiled_kernel = kernel_choice::never;
    opt.gemm_lowering = kernel_choice::never;
    opt.full_dot = kernel_choice::never;
    opt.time_layouts = false;
    engine eng(opt);
    for (dtype t : all_dtypes) {
      for (const tree_case& c : tree_cases) {
        const auto [p, in, used] = tree_case_problem(c, 600, t);
        const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
        const std::vector<std::string> kernels = prog->op_kernels();
        const auto in_grid = std::count(kernels.begin(), kernels.end(), std::string("grid"));
        EXPECT_EQ(in_grid, prog->grid_steps()) << p.source;
        EXPECT_EQ(prog->launches() + static_cast<std::size_t>(prog->grid_steps() - prog->grid_runs()), kernels.size()) << p.source;
        if (check == kernel_choice::never) {
          EXPECT_EQ(prog->grid_steps(), 0) << p.source;
        } else if (prog->grid_runs() > 0) {
          EXPECT_GE(prog->grid_steps(), 2 * prog->grid_runs()) << p.source << ": a run holds two steps or more";
        }
        grid_steps += prog->grid_steps();
        grid_runs += prog->grid_runs();
        const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
        const host_tensor got = run_program(eng, *prog, p, in);
        EXPECT_LE(gputest::rel_error(got, cpu::contract(p, in)), tol) << p.source << " " << name_of(t) << " grid steps " << prog->grid_steps();
        if (!prog->has_io_graph()) continue;
        // Through launch_io, fresh inputs each run.
        std::vector<host_tensor> fresh;
        check_launch_io(
            eng, *prog, p, 3, tol,
            [&](int run) -> const std::vector<host_tensor>& {
              fresh = gputest::random_inputs(p, used + 17 * static_cast<std::uint64_t>(run + 1), 0.25, 1.25);
              return fresh;
            },
            [&](int, const std::vector<host_tensor>& x) { return cpu::contract(p, x); }, p.source + " " + std::string(name_of(t)));
        if (prog->in_place_runs() > 0 && prog->grid_steps() > 0) ++in_place;
      }
    }
    eng.synchronize();
  }
  std::printf("[grid runs] always: %d steps in %d runs; %d programs with runs read their inputs in place too\n", grid_steps, grid_runs, in_place);
  EXPECT_GE(grid_runs, 4) << "the random trees should have consecutive library steps to run together";
  EXPECT_GT(in_place, 0);
}

// Chains of large x small steps (options::chain_steps; src/core/chain.hpp, src/cuda/chain.cu), each
// run as one launch of the chain kernel. Random gate-like chains whose state holds 2^16 to 2^18
// elements (one- and two-label gates, diagonal gates, sums on either side only, outer products), in
// every dtype, under two layouts, on the captured graph and on the stream; and two suite networks
// whose programs run branches on concurrent lanes (regular3-n130 f32, rqc-4x5-c14 c64). Under
// `always` op_kernels says "chain" chains_chosen() times and "chain member" for the other steps of
// each kept chain, launches() drops by those, and the result matches the CPU engine's, also through
// launch_io (whose in-place graph moves the chain's inputs to the caller's pointers). Under `never`
// no chain runs.
TEST_F(Differential, CompiledChainsMatchCpu) {
  chaintest::chain_shape shape;
  shape.min_labels = 16;
  shape.max_labels = 17;
  shape.grow_until = 1 << 18;
  shape.shrink_after = 1 << 15;
  std::mt19937 rng(2026);
  std::vector<problem> problems;
  for (int i = 0; i < 4; ++i) {
    problem p = chaintest::random_chain(rng, 5 + (3 * i) % 8, shape);
    p.source = "random chain " + std::to_string(i);
    problems.push_back(std::move(p));
  }
  const auto dir = gputest::source_dir();
  ASSERT_FALSE(dir.empty()) << "bench/suites not found (set TNRT_SOURCE_DIR)";
  for (const char* name : {"regular3-n130", "rqc-4x5-c14-amp"}) {
    load_options lo;
    problems.push_back(load_file((dir / "bench/suites/families" / (std::string(name) + ".json")).string(), lo));
    problems.back().source = name;
  }
  const std::size_t n_random = 4;
  std::map<std::pair<std::size_t, int>, std::pair<std::vector<host_tensor>, host_tensor>> data;  // inputs and the CPU's result
  auto data_of = [&](std::size_t i, const problem& p) -> const std::pair<std::vector<host_tensor>, host_tensor>& {
    const auto key = std::make_pair(i, static_cast<int>(p.type));
    auto it = data.find(key);
    if (it == data.end()) {
      std::vector<host_tensor> in = gputest::random_inputs(p, 300 + i, -1.0, 1.0);
      host_tensor want = cpu::contract(p, in);
      it = data.emplace(key, std::make_pair(std::move(in), std::move(want))).first;
    }
    return it->second;
  };
  int chains = 0, steps = 0, in_place = 0, suite_chains = 0;
  for (const kernel_choice choice : {kernel_choice::always, kernel_choice::never}) {
    for (const layout_policy lay : {layout_policy::column_major, layout_policy::row_major}) {
      for (const bool graph : {true, false}) {
        if (choice == kernel_choice::never && (lay != layout_policy::column_major || !graph)) continue;  // `never` once
        cuda::options opt;
        opt.chain_steps = choice;
        opt.library_algos = kernel_choice::never;  // compile time: the steps' cuTENSOR algorithms are not what is tested
        opt.time_layouts = false;
        opt.intermediate_layout = lay;
        opt.use_graph = graph;
        engine eng(opt);
        for (std::size_t i = 0; i < problems.size(); ++i) {
          const bool suite = i >= n_random;
          for (dtype t : all_dtypes) {
            if (suite && (t != problems[i].type || lay != layout_policy::column_major)) continue;  // in its own type, one layout
            problem p = problems[i];
            p.type = t;
            const auto& [in, want] = data_of(i, p);
            const std::unique_ptr<cuda::compiled_program> prog = cuda::compiled_program::build(eng, p);
            const std::vector<std::string> kernels = prog->op_kernels();
            const auto n_chain = std::count(kernels.begin(), kernels.end(), std::string("chain"));
            const auto n_member = std::count(kernels.begin(), kernels.end(), std::string("chain member"));
            EXPECT_EQ(n_chain, prog->chains_chosen()) << p.source;
            EXPECT_EQ(n_member, prog->chain_steps() - prog->chains_chosen()) << p.source;
            EXPECT_EQ(prog->launches() + static_cast<std::size_t>(n_member), kernels.size()) << p.source;
            if (choice == kernel_choice::never) {
              EXPECT_EQ(prog->chains_chosen(), 0) << p.source;
            } else {
              EXPECT_EQ(prog->chains_chosen(), prog->chain_candidates()) << p.source << ": `always` keeps every chain found";
            }
            chains += prog->chains_chosen();
            steps += prog->chain_steps();
            if (suite) suite_chains += prog->chains_chosen();
            const double tol = gputest::tolerance(t, gputest::longest_sum(p), 256.0);
            const host_tensor got = run_program(eng, *prog, p, in);
            EXPECT_LE(gputest::rel_error(got, want), tol)
                << p.source << " " << name_of(t) << " " << name_of(lay) << (graph ? " graph" : " stream") << " chains " << prog->chains_chosen();
            if (!prog->has_io_graph() || suite) continue;
            check_launch_io(
                eng, *prog, p, 2, tol, [&](int) -> const std::vector<host_tensor>& { return in; },
                [&](int, const std::vector<host_tensor>&) -> const host_tensor& { return want; }, p.source + " " + std::string(name_of(t)));
            if (prog->in_place_runs() > 0 && prog->chains_chosen() > 0) ++in_place;
          }
        }
        eng.synchronize();
      }
    }
  }
  std::printf("[chains] always: %d chains of %d steps kept (%d on the suite networks); %d programs with chains read their inputs in place\n", chains,
              steps, suite_chains, in_place);
  EXPECT_GE(chains, 20) << "the random chains should give chains to run";
  EXPECT_GE(suite_chains, 4);
  EXPECT_GT(in_place, 0);
}

// Reduced precision is opt-in: full precision by default; TF32 visibly less accurate on a chain of
// 512-wide products (still within 2e-2), 3xTF32 near FP32; f64 ignores it.
TEST_F(Differential, ReducedPrecisionIsOptIn) {
  EXPECT_EQ(cuda::options{}.compute_precision, precision::full);
  const network net = parse_expression("ab,bc,cd->ad", {{256, 512}, {512, 512}, {512, 256}});
  for (dtype t : {dtype::f32, dtype::c64, dtype::f64}) {
    problem p;
    p.net = net;
    p.tree = tree_from_linear_path(p.net, {{0, 1}, {0, 1}});
    p.type = t;
    p.source = "chain";
    const auto in = gputest::random_inputs(p, 9, -1.0, 1.0);
    const host_tensor want = cpu::contract(p, in);
    double err[3] = {0, 0, 0};
    for (const precision pr : {precision::full, precision::tf32, precision::tf32x3}) {
      cuda::options opt;
      opt.compute_precision = pr;
      engine eng(opt);
      const double e_eager = gputest::rel_error(run_eager(eng, p, in), want);
      const double e_compiled = gputest::rel_error(run_compiled(eng, p, in), want);
      err[static_cast<int>(pr)] = std::max(e_eager, e_compiled);
      std::printf("[precision] %s %s: rel error eager %.3e, compiled %.3e\n", std::string(name_of(t)).c_str(),
                  pr == precision::full ? "full" : pr == precision::tf32 ? "tf32" : "tf32x3", e_eager, e_compiled);
    }
    const double full_tol = gputest::tolerance(t, 512 * 2, 64.0);
    EXPECT_LE(err[0], full_tol) << name_of(t);
    if (is_double(t)) {
      EXPECT_LE(err[1], full_tol) << "f64 ignores tf32";
      EXPECT_LE(err[2], full_tol) << "f64 ignores tf32x3";
    } else {
      EXPECT_GT(err[1], 10 * err[0]) << name_of(t) << ": TF32 should be visibly coarser than FP32";
      EXPECT_LE(err[1], 2e-2) << name_of(t);
      EXPECT_LE(err[2], std::max(10 * err[0], full_tol)) << name_of(t) << ": 3xTF32 near FP32";
    }
  }
}

}  // namespace
}  // namespace tnrt
