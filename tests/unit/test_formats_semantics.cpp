// Every tree the loaders and the path code build computes the network's einsum: checked against a
// direct sum over all label values, by a deliberately naive evaluator local to this file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

namespace {

using tnrt::test::source_dir;

using labels = std::vector<tnrt::label_t>;

struct dense {
  labels ls;
  std::vector<double> v;  // row-major over ls
};

std::int64_t offset(const labels& ls, const std::vector<std::int64_t>& value, const std::vector<std::int64_t>& extents) {
  std::int64_t o = 0;
  for (auto l : ls) o = o * extents[static_cast<std::size_t>(l)] + value[static_cast<std::size_t>(l)];
  return o;
}

std::int64_t count(const labels& ls, const std::vector<std::int64_t>& extents) {
  std::int64_t n = 1;
  for (auto l : ls) n *= extents[static_cast<std::size_t>(l)];
  return n;
}

// out[out...] = sum over every other label of prod ops[i][...]: one loop over all label values.
dense naive_einsum(const std::vector<const dense*>& ops, const labels& out, const std::vector<std::int64_t>& extents) {
  labels all = out;
  for (const dense* d : ops)
    for (auto l : d->ls)
      if (std::find(all.begin(), all.end(), l) == all.end()) all.push_back(l);
  dense r{out, std::vector<double>(static_cast<std::size_t>(count(out, extents)), 0.0)};
  std::vector<std::int64_t> value(extents.size(), 0);
  const std::int64_t total = count(all, extents);
  for (std::int64_t i = 0; i < total; ++i) {
    std::int64_t rest = i;
    for (std::size_t k = all.size(); k-- > 0;) {
      const auto e = extents[static_cast<std::size_t>(all[k])];
      value[static_cast<std::size_t>(all[k])] = rest % e;
      rest /= e;
    }
    double prod = 1;
    for (const dense* d : ops) prod *= d->v[static_cast<std::size_t>(offset(d->ls, value, extents))];
    r.v[static_cast<std::size_t>(offset(out, value, extents))] += prod;
  }
  return r;
}

std::vector<dense> random_inputs(const tnrt::network& net, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<dense> in;
  for (const auto& ls : net.inputs) {
    dense d{ls, std::vector<double>(static_cast<std::size_t>(count(ls, net.extents)))};
    for (auto& x : d.v) x = u(gen);
    in.push_back(std::move(d));
  }
  return in;
}

dense run_tree(const tnrt::network& net, const tnrt::contraction_tree& tree, const std::vector<dense>& in) {
  std::vector<dense> ops = in;
  for (const auto& s : tree.steps) {
    std::vector<const dense*> args{&ops[static_cast<std::size_t>(s.lhs)]};
    if (s.rhs >= 0) args.push_back(&ops[static_cast<std::size_t>(s.rhs)]);
    ops.push_back(naive_einsum(args, s.out, net.extents));
  }
  return ops[static_cast<std::size_t>(tree.result_id(net.inputs.size()))];
}

void expect_tree_computes_network(const tnrt::network& net, const tnrt::contraction_tree& tree, const std::string& what) {
  SCOPED_TRACE(what);
  tnrt::validate(net, tree);
  const auto in = random_inputs(net, 12345);
  std::vector<const dense*> ptrs;
  for (const auto& d : in) ptrs.push_back(&d);
  const dense want = naive_einsum(ptrs, net.output, net.extents);
  const dense got = run_tree(net, tree, in);
  ASSERT_EQ(got.ls, want.ls);
  ASSERT_EQ(got.v.size(), want.v.size());
  for (std::size_t i = 0; i < want.v.size(); ++i) EXPECT_NEAR(got.v[i], want.v[i], 1e-9 * (1 + std::abs(want.v[i]))) << "element " << i;
}

TEST(formats_semantics, small_files) {
  REQUIRE_SOURCE_DIR();
  for (const char* f : {"tree_small.json", "tree_strings.json", "tree_single_leaf.json", "einsum_small.json", "einsum_unicode.json",
                        "einsum_nopath.json"}) {
    tnrt::tree_json_options topt;
    topt.bond_dim = 3;
    tnrt::load_options opt{topt, {}};
    const auto p = tnrt::load_file(source_dir() + "/tests/data/" + f, opt);
    expect_tree_computes_network(p.net, p.tree, f);
  }
  tnrt::load_options flops;
  flops.einsum.path_name = "opt_flops";
  const auto p = tnrt::load_file(source_dir() + "/tests/data/einsum_small.json", flops);
  expect_tree_computes_network(p.net, p.tree, "einsum_small.json opt_flops");
}

TEST(formats_semantics, expressions_with_every_optimizer) {
  struct example {
    const char* expr;
    std::vector<std::vector<std::int64_t>> shapes;
  };
  const std::vector<example> examples = {
      {"ab,bc->ac", {{2, 3}, {3, 4}}},
      {"ab,bc->ca", {{2, 3}, {3, 4}}},
      {"ab,bc,cd,da->", {{2, 3}, {3, 2}, {2, 3}, {3, 2}}},              // ring to a scalar
      {"ii->i", {{3, 3}}},                                                 // diagonal
      {"ii->", {{3, 3}}},                                                  // trace
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},                                 // diagonal inside a pair
      {"ab,ab,ab->ab", {{2, 3}, {2, 3}, {2, 3}}},                          // hyperedge kept
      {"ab,ac,ad->a", {{2, 3}, {2, 2}, {2, 3}}},                           // hyperedge, star
      {"ab,cd->abcd", {{2, 2}, {3, 2}}},                                   // outer product
      {"ab,cd,bc->", {{2, 3}, {2, 2}, {3, 2}}},                            // disconnected until the last
      {"a,b,c", {{2}, {3}, {2}}},                                          // implicit outer
      {",ab->ba", {{}, {2, 3}}},                                           // scalar operand
      {"->", {{}}},                                                        // scalar alone
      {"zab,zbc,zcd->zad", {{2, 2, 3}, {2, 3, 2}, {2, 2, 2}}},             // batch label
      {"αβ,βγ,γδ,δε,εζ,ζη,ηα->", {{2, 3}, {3, 2}, {2, 2}, {2, 3}, {3, 2}, {2, 2}, {2, 2}}},  // 7: greedy under auto
      {"ab,bc,cd,de,ef,fg,gh,ha,ae->e", {{2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}}},
  };
  for (const auto& ex : examples) {
    const auto net = tnrt::parse_expression(ex.expr, ex.shapes);
    for (auto how : {tnrt::path_optimizer::greedy, tnrt::path_optimizer::exhaustive, tnrt::path_optimizer::automatic}) {
      if (how == tnrt::path_optimizer::exhaustive && net.inputs.size() > 8) continue;
      const auto tree = tnrt::tree_from_linear_path(net, tnrt::optimize_path(net, how));
      expect_tree_computes_network(net, tree, std::string(ex.expr) + " optimizer " + std::to_string(static_cast<int>(how)));
    }
  }
}

TEST(formats_semantics, random_networks_and_random_linear_paths) {
  std::mt19937 gen(2024);
  for (int round = 0; round < 60; ++round) {
    // 2..6 operands of rank 0..3 over 6 labels of extent 1..3, output a random subset
    const int n = 2 + static_cast<int>(gen() % 5);
    std::vector<std::int64_t> ext(6);
    for (auto& e : ext) e = 1 + static_cast<std::int64_t>(gen() % 3);
    std::string expr;
    std::vector<std::vector<std::int64_t>> shapes;
    std::vector<bool> used(6, false);
    for (int i = 0; i < n; ++i) {
      if (i) expr += ",";
      auto& shape = shapes.emplace_back();
      const int rank = static_cast<int>(gen() % 4);
      for (int k = 0; k < rank; ++k) {
        const auto l = gen() % 6;
        expr += static_cast<char>('a' + l);
        shape.push_back(ext[l]);
        used[l] = true;
      }
    }
    expr += "->";
    for (int l = 0; l < 6; ++l)
      if (used[static_cast<std::size_t>(l)] && gen() % 3 == 0) expr += static_cast<char>('a' + l);
    const auto net = tnrt::parse_expression(expr, shapes);
    // a random linear path: pairs, with the odd unary entry or triple
    std::vector<std::vector<int>> path;
    for (int live = n; live > 1;) {
      const int kind = static_cast<int>(gen() % 6);
      const int take = kind == 0 ? 1 : (kind == 1 && live >= 3 ? 3 : 2);
      std::vector<int> entry;
      while (static_cast<int>(entry.size()) < take) {
        const int p = static_cast<int>(gen() % static_cast<unsigned>(live));
        if (std::find(entry.begin(), entry.end(), p) == entry.end()) entry.push_back(p);
      }
      live = live - take + 1;
      path.push_back(entry);
    }
    expect_tree_computes_network(net, tnrt::tree_from_linear_path(net, path), expr + " random path");
    expect_tree_computes_network(net, tnrt::tree_from_linear_path(net, tnrt::optimize_path(net, tnrt::path_optimizer::greedy)),
                                 expr + " greedy");
  }
}

}  // namespace
