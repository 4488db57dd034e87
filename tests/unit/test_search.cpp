// search_path: the exhaustive optimum on small networks, determinism under a seed, never worse than
// greedy on larger random regular hypergraphs, valid paths that contract to greedy's result, and the
// memory limit respected or refused with a typed error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/naive_einsum.hpp"
#include "support/random_problem.hpp"
#include "support/test_util.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"
#include "tnrt/search.hpp"

namespace tnrt {
namespace {

using path_t = std::vector<std::vector<int>>;

double flops_of(const network& net, const path_t& path) { return cost_of(net, tree_from_linear_path(net, path)).flops; }

search_options unbounded(std::uint64_t seed = 0, int trials = 16) {
  search_options o;
  o.seed = seed;
  o.max_trials = trials;
  o.max_seconds = 0;
  o.objective = search_objective::flops;  // the tests below compare multiply-adds
  return o;
}

double model_time(const network& net, const path_t& path, const cost_model& cm = {}) {
  return predicted_seconds(net, tree_from_linear_path(net, path), cm);
}

// n tensors on a random `degree`-regular multigraph (configuration model, self-loops dropped),
// plus `hyper` hyperedges over 3..4 tensors each and `open` output labels on one tensor each.
network random_regular(std::uint64_t seed, int n, int degree, int hyper, int open, int ext_lo = 2, int ext_hi = 4) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1)); };
  network net;
  net.inputs.resize(static_cast<std::size_t>(n));
  const auto new_label = [&] {
    const auto l = static_cast<label_t>(net.extents.size());
    net.extents.push_back(pick(ext_lo, ext_hi));
    net.label_names.push_back("l" + std::to_string(l));
    return l;
  };
  std::vector<int> stubs;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < degree; ++d) stubs.push_back(i);
  std::shuffle(stubs.begin(), stubs.end(), rng);
  for (std::size_t k = 0; k + 1 < stubs.size(); k += 2) {
    if (stubs[k] == stubs[k + 1]) continue;
    const label_t l = new_label();
    net.inputs[static_cast<std::size_t>(stubs[k])].push_back(l);
    net.inputs[static_cast<std::size_t>(stubs[k + 1])].push_back(l);
  }
  for (int h = 0; h < hyper; ++h) {
    const label_t l = new_label();
    const int users = pick(3, 4);
    std::vector<int> chosen;
    while (static_cast<int>(chosen.size()) < users) {
      const int t = pick(0, n - 1);
      if (std::find(chosen.begin(), chosen.end(), t) == chosen.end()) chosen.push_back(t);
    }
    for (int t : chosen) net.inputs[static_cast<std::size_t>(t)].push_back(l);
  }
  for (int o = 0; o < open; ++o) {
    const label_t l = new_label();
    net.inputs[static_cast<std::size_t>(pick(0, n - 1))].push_back(l);
    net.output.push_back(l);
  }
  return net;
}

TEST(search, trivial_networks) {
  const auto one = parse_expression("ab->ba", {{2, 3}});
  EXPECT_TRUE(search_path(one).path.empty());
  EXPECT_TRUE(optimize_path(one, path_optimizer::hyper).empty());
  const auto two = parse_expression("ab,bc->ac", {{2, 3}, {3, 4}});
  EXPECT_EQ(search_path(two).path, (path_t{{0, 1}}));
  // scalars, a disconnected part (outer product) and a hyperedge
  for (const auto& [expr, shapes] : std::vector<std::pair<std::string, std::vector<std::vector<std::int64_t>>>>{
           {",ab,,bc->ac", {{}, {2, 3}, {}, {3, 4}}},
           {"ab,bc,de,ef->af", {{2, 3}, {3, 4}, {5, 6}, {6, 2}}},
           {"ab,bc,de,ef->", {{2, 3}, {3, 4}, {5, 6}, {6, 2}}},
           {"abc,ad,ae,af,bg->cdefg", {{2, 3, 4}, {2, 3}, {2, 2}, {2, 5}, {3, 2}}},
           {"aab,bc,ca->", {{3, 3, 2}, {2, 3}, {3, 3}}},
       }) {
    SCOPED_TRACE(expr);
    const auto net = parse_expression(expr, shapes);
    const search_result r = search_path(net, unbounded());
    ASSERT_NO_THROW(tree_from_linear_path(net, r.path));
    EXPECT_LE(flops_of(net, r.path), flops_of(net, optimize_path(net, path_optimizer::exhaustive)) * (1 + 1e-12));
    EXPECT_NEAR(r.log2_flops, std::log2(flops_of(net, r.path)), 1e-9);
  }
}

TEST(search, finds_the_exhaustive_optimum_on_small_networks) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const problem p = test::random_problem(9000 + seed, dtype::f64, 1, 5, 8);
    SCOPED_TRACE("seed " + std::to_string(9000 + seed));
    const double best = flops_of(p.net, optimize_path(p.net, path_optimizer::exhaustive));
    const search_result r = search_path(p.net, unbounded(seed, 4));
    EXPECT_LE(flops_of(p.net, r.path), best * (1 + 1e-12));
  }
  // and on denser ones: 8 tensors of a random 3-regular graph with a hyperedge and open labels
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const network net = random_regular(100 + seed, 8, 3, 1, 2, 2, 9);
    SCOPED_TRACE("regular seed " + std::to_string(100 + seed));
    const double best = flops_of(net, optimize_path(net, path_optimizer::exhaustive));
    EXPECT_LE(flops_of(net, search_path(net, unbounded(seed, 4)).path), best * (1 + 1e-12));
  }
}

TEST(search, deterministic_under_a_seed) {
  const network net = random_regular(7, 40, 3, 4, 3);
  const search_result a = search_path(net, unbounded(42, 12));
  const search_result b = search_path(net, unbounded(42, 12));
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.trials, 12);
  EXPECT_EQ(a.log2_flops, b.log2_flops);
  // auto: the roofline's and the tile fit's searches run on threads beside the main one; the
  // combined result is the same every time, and every search ran all its trials
  search_options o = automatic_search_options(dtype::f32);
  o.max_seconds = 0;
  const search_result c = search_path(net, o), d = search_path(net, o);
  EXPECT_EQ(c.path, d.path);
  EXPECT_EQ(c.predicted_seconds, d.predicted_seconds);
  EXPECT_EQ(c.trials, 3 * o.max_trials);
  EXPECT_EQ(c.partition_trials, d.partition_trials);
  EXPECT_GT(c.seconds, 0.0);
}

TEST(search, never_worse_than_greedy_on_larger_random_hypergraphs) {
  double gain = 0;
  int cases = 0;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const int n = 30 + static_cast<int>(seed) * 6;
    const network net = random_regular(500 + seed, n, seed % 2 ? 4 : 3, 3 + static_cast<int>(seed), 4);
    SCOPED_TRACE("n " + std::to_string(n) + " seed " + std::to_string(500 + seed));
    const path_t greedy = optimize_path(net, path_optimizer::greedy);
    const search_result r = search_path(net, unbounded(seed, 24));
    ASSERT_NO_THROW(validate(net, tree_from_linear_path(net, r.path)));
    const double g = std::log2(flops_of(net, greedy));
    EXPECT_LE(r.log2_flops, g + 1e-9);
    gain += g - r.log2_flops;
    ++cases;
  }
  // the point of searching: on average it should do visibly better than greedy
  EXPECT_GT(gain / cases, 0.1);
}

TEST(search, time_bound_is_respected_and_keeps_greedy_as_a_floor) {
  const network net = random_regular(11, 60, 3, 6, 4);
  search_options o;
  o.max_trials = 1000000;
  o.max_seconds = 0.3;
  o.objective = search_objective::flops;
  const search_result r = search_path(net, o);
  EXPECT_LT(r.seconds, 1.5);
  EXPECT_GE(r.trials, 1);
  EXPECT_LE(r.log2_flops, std::log2(flops_of(net, optimize_path(net, path_optimizer::greedy))) + 1e-9);
}

TEST(search, paths_contract_to_greedys_result) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    problem p = test::random_problem(700 + seed, dtype::f64, 1, 3, 8);
    SCOPED_TRACE("seed " + std::to_string(700 + seed));
    const auto in = test::random_inputs(p, seed);
    p.tree = tree_from_linear_path(p.net, search_path(p.net, unbounded(seed, 6)).path);
    const host_tensor got = cpu::contract(p, in);
    p.tree = tree_from_linear_path(p.net, optimize_path(p.net, path_optimizer::greedy));
    const host_tensor want = cpu::contract(p, in);
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_LE(test::relative_error(got, want), 1e-12);
  }
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    problem p;
    p.type = dtype::f64;
    p.net = random_regular(800 + seed, 14, 3, 2, 2, 2, 2);
    SCOPED_TRACE("regular seed " + std::to_string(800 + seed));
    const auto in = test::random_inputs(p, seed);
    p.tree = tree_from_linear_path(p.net, optimize_path(p.net, path_optimizer::hyper));
    const host_tensor got = cpu::contract(p, in);
    p.tree = tree_from_linear_path(p.net, optimize_path(p.net, path_optimizer::greedy));
    const host_tensor want = cpu::contract(p, in);
    EXPECT_LE(test::relative_error(got, want), 1e-12);
  }
}

TEST(search, memory_limit_is_respected_or_refused) {
  const network net = random_regular(21, 40, 3, 4, 3);
  const search_result free = search_path(net, unbounded(1, 12));
  EXPECT_LE(free.log2_largest, free.log2_flops);
  const double greedy_largest = cost_of(net, tree_from_linear_path(net, optimize_path(net, path_optimizer::greedy))).max_elements;
  // greedy's own largest tensor is always feasible
  {
    search_options o = unbounded(1, 12);
    o.memory_limit_elements = greedy_largest;
    const search_result r = search_path(net, o);
    EXPECT_LE(std::exp2(r.log2_largest), greedy_largest * (1 + 1e-9));
  }
  int met = 0, refused = 0;
  const double top = std::log2(greedy_largest);
  for (double below = 0; below <= top; below += 1) {
    search_options o = unbounded(1, 12);
    o.memory_limit_elements = std::exp2(top - below) * (1 + 1e-9);  // log2 rounding
    try {
      const search_result r = search_path(net, o);
      EXPECT_LE(r.log2_largest, top - below + 1e-9);
      EXPECT_LE(cost_of(net, tree_from_linear_path(net, r.path)).max_elements, *o.memory_limit_elements * (1 + 1e-9));
      ++met;
    } catch (const out_of_memory&) {
      ++refused;
    }
  }
  EXPECT_GT(met, 0);
  EXPECT_GT(refused, 0);  // down to a limit of one element, something must give
  // an input over the limit is refused outright
  search_options o;
  o.memory_limit_elements = 1;
  EXPECT_THROW(search_path(parse_expression("ab,bc->ac", {{2, 3}, {3, 4}}), o), out_of_memory);
}

TEST(search, the_cost_model_is_a_roofline_per_step) {
  // one GEMM step, m = n = k = 1024 in f32: 2^30 multiply-adds, 3 * 2^20 elements moved
  const auto net = parse_expression("ab,bc->ac", {{1024, 1024}, {1024, 1024}});
  const contraction_tree tree = tree_from_linear_path(net, {{0, 1}});
  const cost_model f32 = cost_model::for_dtype(dtype::f32).roofline();
  const double compute = 2.0 * 1073741824.0 / 50.7e12, memory = 4.0 * 3 * 1048576 / 4250e9;
  EXPECT_DOUBLE_EQ(predicted_seconds(net, tree, f32), std::max(compute, memory) + 2e-6);
  EXPECT_GT(compute, memory);  // compute-bound
  // complex: 4x the flops, 2x the bytes
  const cost_model c64 = cost_model::for_dtype(dtype::c64).roofline();
  EXPECT_DOUBLE_EQ(predicted_seconds(net, tree, c64), std::max(4 * compute, 2 * memory) + 2e-6);
  // an outer product is memory-bound: 2^20 multiply-adds write 2^20 elements
  const auto outer = parse_expression("a,b->ab", {{1024}, {1024}});
  EXPECT_DOUBLE_EQ(predicted_seconds(outer, tree_from_linear_path(outer, {{0, 1}}), f32),
                   4.0 * (1024 + 1024 + 1048576) / 4250e9 + 2e-6);
  // no steps, no time
  const auto one = parse_expression("ab->ab", {{2, 3}});
  EXPECT_EQ(predicted_seconds(one, tree_from_linear_path(one, {}), f32), 0.0);
}

// A search beside (the roofline's, or with `tile` the tile fit's, as auto runs them with no time
// bound): the kept path is the better, by the calibrated model, of the search without it and of
// that second search run alone. True when the second one won.
bool second_search_wins(const network& net, dtype t, bool tile) {
  search_options without = automatic_search_options(t);
  without.max_seconds = 0;
  search_options with = without, other = without;
  other.roofline_search = other.tile_search = false;
  if (tile) {
    without.tile_search = false;
    other.model = without.model.tile_fit();
  } else {
    without.roofline_search = false;
    other.model = without.model.roofline();
    other.reconf_leaves = 8;
  }
  const search_result both = search_path(net, with), a = search_path(net, without), b = search_path(net, other);
  const double b_cal = model_time(net, b.path, with.model);
  EXPECT_NEAR(both.predicted_seconds, std::min(a.predicted_seconds, b_cal), 1e-12 + 1e-9 * a.predicted_seconds);
  EXPECT_NEAR(both.predicted_seconds, model_time(net, both.path, with.model), 1e-12 + 1e-9 * both.predicted_seconds);
  return both.predicted_seconds < a.predicted_seconds * (1 - 1e-9);
}

// The same on a suite network where the second search must win, then on `randoms` random networks.
void second_search_keeps_the_better(bool tile, const std::string& suite_network, dtype type, std::uint64_t first_seed, int randoms) {
  const std::string file = test::source_dir() + "/bench/suites/families/" + suite_network + ".json";
  EXPECT_TRUE(second_search_wins(load_file(file, load_options{}).net, type, tile))
      << "on " << suite_network << " the " << (tile ? "tile fit's" : "roofline's") << " path should win";
  for (int i = 0; i < randoms; ++i)
    (void)second_search_wins(test::random_problem(first_seed + static_cast<std::uint64_t>(i), dtype::f32, 1, 4, 8).net, dtype::f32, tile);
}

// roofline_search: the kept path is the better, by the calibrated model, of the calibrated search's and
// the roofline search's (each run alone here), on the suite's hyper-n100 network (where they differ) and
// on random networks.
TEST(search, the_roofline_search_beside_keeps_the_better_path) {
  REQUIRE_SOURCE_DIR();
  second_search_keeps_the_better(false, "hyper-n100-r3-e4", dtype::f32, 4100, 20);
}

// tile_search (on in auto): a third search under the fit without the overlap term, its path kept
// when the calibrated model scores it lower; on rqc-5x5-c16 (c64, its dtype) it finds a cheaper path
// than the default model's own search (and that path ran faster on the H200: 2.33 against 2.52 ms).
TEST(search, the_tile_search_beside_keeps_the_better_path) {
  EXPECT_TRUE(automatic_search_options(dtype::f32).tile_search);
  const cost_model fit = cost_model::for_dtype(dtype::c64).tile_fit();
  EXPECT_EQ(fit.overlap, 0.0);
  EXPECT_EQ(fit.gemm_tile, 33.3);
  EXPECT_EQ(fit.bytes_per_element, 8.0);  // the dtype's terms stay
  REQUIRE_SOURCE_DIR();
  second_search_keeps_the_better(true, "rqc-5x5-c16-amp", dtype::c64, 4200, 10);
}

// The tile fit (no overlap term) prices skinny GEMMs, and small results over long sums.
TEST(search, the_calibrated_model_prices_skinny_gemms_and_small_results) {
  const cost_model cal = cost_model::for_dtype(dtype::f32).tile_fit(), roof = cost_model::for_dtype(dtype::f32).roofline();
  const auto secs = [](const network& net, const cost_model& m) { return predicted_seconds(net, tree_from_linear_path(net, {{0, 1}}), m); };
  // a square GEMM (min(m, n) = 1024, result 2^20 elements): the tile term only, 1 + 33.3 / 1024,
  // and the parallel factor of a 2^20-element result
  const auto square = parse_expression("ab,bc->ac", {{1024, 1024}, {1024, 1024}});
  const double compute = 2.0 * 1073741824.0 / 50.7e12;
  const double par = std::pow(1048576.0 / cal.parallel_elements, cal.parallel_exponent);
  EXPECT_NEAR(secs(square, cal), compute * (1 + cal.gemm_tile / 1024) / par + 2e-6, 1e-12);
  // the same multiply-adds as a skinny GEMM (n = 16) cost more than the square one, and more than
  // their roofline by more than the square one does
  const auto skinny = parse_expression("ab,bc->ac", {{65536, 1024}, {1024, 16}});
  EXPECT_GT(secs(skinny, cal), secs(square, cal));
  EXPECT_GT(secs(skinny, cal) / secs(skinny, roof), secs(square, cal) / secs(square, roof));
  // a long sum into a small result is slower than its roofline; into a scalar it is exempt
  const auto small = parse_expression("ab,cb->ac", {{4, 1 << 22}, {4, 1 << 22}});
  EXPECT_GT(secs(small, cal), 5 * secs(small, roof));
  const auto dot = parse_expression("b,b->", {{1 << 24}, {1 << 24}});
  EXPECT_NEAR(secs(dot, cal) - 2e-6, (secs(dot, roof) - 2e-6) / cal.memory_efficiency, 1e-12);
  // a unary step has no GEMM term
  const auto sum = parse_expression("ab->a", {{1 << 20, 64}});
  const contraction_tree t1 = tree_from_linear_path(sum, {{0}});
  const double par1 = std::pow(1048576.0 / cal.parallel_elements, cal.parallel_exponent);
  EXPECT_NEAR(predicted_seconds(sum, t1, cal) - 2e-6,
              4.0 * (65.0 * 1048576) / (4250e9 * cal.memory_efficiency) / par1, 1e-12);
  // bad calibration terms are refused
  for (double bad : {-1.0, std::nan("")}) {
    search_options o;
    o.model.gemm_tile = bad;
    EXPECT_THROW((void)search_path(square, o), usage_error);
  }
  search_options o;
  o.model.memory_efficiency = 1.5;
  EXPECT_THROW((void)search_path(square, o), usage_error);
  search_options neg;
  neg.model.overlap = -0.5;
  EXPECT_THROW((void)search_path(square, neg), usage_error);
}

// The overlap term (2.03 by default, 0 in the tile fit): max(c, m) + overlap * min(c, m) before the
// parallel factor, and roofline() turns it off.
TEST(search, the_overlap_term_adds_the_smaller_of_compute_and_memory) {
  const auto net = parse_expression("ab,bc->ac", {{1024, 1024}, {1024, 1024}});
  cost_model plain = cost_model::for_dtype(dtype::f32).roofline();
  EXPECT_EQ(cost_model{}.overlap, 2.03);
  EXPECT_EQ(cost_model{}.tile_fit().overlap, 0.0);
  const double compute = 2.0 * 1073741824.0 / 50.7e12, memory = 4.0 * 3 * 1048576 / 4250e9;
  cost_model with = plain;
  with.overlap = 2.0;
  const auto secs = [&](const cost_model& m) { return predicted_seconds(net, tree_from_linear_path(net, {{0, 1}}), m); };
  EXPECT_NEAR(secs(with), compute + 2.0 * memory + 2e-6, 1e-15);
  EXPECT_NEAR(secs(plain), compute + 2e-6, 1e-15);
  EXPECT_EQ(with.roofline().overlap, 0.0);
}

// Under the model the search minimises predicted time, not multiply-adds: never slower (by the
// model) than the flop-optimal tree of the exhaustive search or than greedy, and on some networks
// (memory-bound steps that a flop count takes as free) strictly faster. With the flops objective
// the same search must not find those: it can only tie the flop optimum.
TEST(search, the_model_objective_minimises_predicted_time) {
  int faster = 0;
  for (std::uint64_t seed = 0; seed < 150; ++seed) {
    const network net = random_regular(3000 + seed, 7, 3, 1, 2, 2, 64);
    SCOPED_TRACE("seed " + std::to_string(3000 + seed));
    search_options o = unbounded(seed, 8);
    o.objective = search_objective::model;
    const search_result r = search_path(net, o);
    const double flop_optimal = model_time(net, optimize_path(net, path_optimizer::exhaustive));
    EXPECT_NEAR(r.predicted_seconds, model_time(net, r.path), 1e-12 * r.predicted_seconds);
    EXPECT_LE(r.predicted_seconds, flop_optimal * (1 + 1e-9));
    EXPECT_LE(r.predicted_seconds, model_time(net, optimize_path(net, path_optimizer::greedy)) * (1 + 1e-9));
    if (r.predicted_seconds < flop_optimal * (1 - 1e-3)) ++faster;
    const search_result by_flops = search_path(net, unbounded(seed, 8));
    EXPECT_GE(by_flops.predicted_seconds, r.predicted_seconds * (1 - 1e-9));
  }
  EXPECT_GT(faster, 0);
}

// Partitioning trials (on networks of more than 8 inputs) run beside the greedy ones from a stream
// of their own, so the greedy trees are the same with and without them and the search can only
// gain; their trees are valid and contract to the same value (hyperedges and open labels included).
TEST(search, partitioning_trials_only_add_and_give_valid_trees) {
  int gained = 0;
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const network net = random_regular(800 + seed, 24 + static_cast<int>(seed) * 4, 3, 2 + static_cast<int>(seed % 3), 2, 2, 6);
    SCOPED_TRACE("seed " + std::to_string(800 + seed));
    search_options with = unbounded(seed, 10);
    with.objective = search_objective::model;
    search_options without = with;
    without.partition_trials = false;
    const search_result a = search_path(net, with), b = search_path(net, without);
    EXPECT_EQ(a.trials, 10);
    EXPECT_EQ(a.partition_trials, 5);
    EXPECT_EQ(b.partition_trials, 0);
    EXPECT_LE(a.predicted_seconds, b.predicted_seconds * (1 + 1e-12));
    gained += a.predicted_seconds < b.predicted_seconds * (1 - 1e-6);
    ASSERT_NO_THROW(validate(net, tree_from_linear_path(net, a.path)));
  }
  EXPECT_GT(gained, 0);  // they find something the greedy trials do not
  // the value: a small network (extents 2) contracted along the partitioned search's path and greedy's
  problem p;
  p.net = random_regular(77, 18, 3, 3, 2, 2, 2);
  p.type = dtype::f64;
  p.source = "partition";
  search_options only = unbounded(3, 2);
  only.objective = search_objective::model;
  p.tree = tree_from_linear_path(p.net, optimize_path(p.net, path_optimizer::greedy));
  const auto in = test::random_inputs(p, 5);
  const host_tensor want = cpu::contract(p, in);
  p.tree = tree_from_linear_path(p.net, search_path(p.net, only).path);
  EXPECT_LE(test::relative_error(cpu::contract(p, in), want), 1e-10);
}

TEST(search, bad_options_are_usage_errors) {
  const auto net = parse_expression("ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 5}});
  search_options o;
  o.max_trials = 0;
  EXPECT_THROW(search_path(net, o), usage_error);
  o = {};
  o.reconf_leaves = 1;
  EXPECT_THROW(search_path(net, o), usage_error);
  o = {};
  o.memory_limit_elements = -1;
  EXPECT_THROW(search_path(net, o), usage_error);
  for (double bad : {0.0, -1.0, std::nan("")}) {
    o = {};
    o.model.bandwidth_gbps = bad;
    EXPECT_THROW(search_path(net, o), usage_error);
    o = {};
    o.model.peak_tflops = bad;
    EXPECT_THROW(search_path(net, o), usage_error);
  }
  o = {};
  o.model.step_overhead_us = -1;
  EXPECT_THROW(search_path(net, o), usage_error);
}

}  // namespace
}  // namespace tnrt
