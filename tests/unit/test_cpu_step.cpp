// Differential tests of cpu::contract_step against the naive reference: hand-picked cases for each
// semantic (contraction, batch, hyperedge, diagonal, trace, one-sided sum, outer product, scalar,
// size-1 modes, unary), GEMM-sized layouts, and several hundred random steps per dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "support/naive_einsum.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

const dtype all_types[] = {dtype::f32, dtype::f64, dtype::c64, dtype::c128};

double eps_of(dtype t) { return is_double(t) ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon(); }
dtype wide_of(dtype t) { return is_complex(t) ? dtype::c128 : dtype::f64; }

std::string text(const std::vector<label_t>& ls) {
  std::string s;
  for (label_t l : ls) s += static_cast<char>('a' + l);
  return s;
}

std::string expression(const std::vector<label_t>& a, const std::vector<label_t>* b, const std::vector<label_t>& out,
                       const std::vector<std::int64_t>& extents) {
  std::ostringstream os;
  os << text(a);
  if (b) os << "," << text(*b);
  os << "->" << text(out) << " with";
  for (std::size_t l = 0; l < extents.size(); ++l) os << " " << static_cast<char>('a' + l) << "=" << extents[l];
  return os.str();
}

std::vector<std::int64_t> shape_of(const std::vector<label_t>& ls, const std::vector<std::int64_t>& extents) {
  std::vector<std::int64_t> s;
  for (label_t l : ls) s.push_back(extents[static_cast<std::size_t>(l)]);
  return s;
}

host_tensor abs_of(const host_tensor& t) {
  host_tensor r(dtype::f64, t.shape());
  visit_dtype(t.type(), [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t i = 0; i < t.size(); ++i) r.as<double>()[i] = static_cast<double>(std::abs(t.as<T>()[i]));
  });
  return r;
}

// ||got - want|| against the norm of the same contraction over |A|, |B| (so that cancellation in
// the data does not inflate the error), within 8 eps sqrt(K) plus a little for the final rounding.
int checked_steps = 0;

void check_step(dtype type, const std::vector<label_t>& la, const std::vector<label_t>* lb, const std::vector<label_t>& out,
                const std::vector<std::int64_t>& extents, std::uint64_t seed) {
  ++checked_steps;
  SCOPED_TRACE("seed " + std::to_string(seed) + " " + std::string(name_of(type)) + " " + expression(la, lb, out, extents));
  host_tensor a(type, shape_of(la, extents));
  fill_random(a, seed, 1, -1.0, 1.0);
  host_tensor b;
  if (lb) {
    b = host_tensor(type, shape_of(*lb, extents));
    fill_random(b, seed, 2, -1.0, 1.0);
  }
  static const std::vector<label_t> none;
  const std::vector<label_t>& lbr = lb ? *lb : none;
  host_tensor got;
  ASSERT_NO_THROW(got = cpu::contract_step(a, la, lb ? &b : nullptr, lbr, out, extents));
  ASSERT_EQ(got.type(), type);
  ASSERT_EQ(got.shape(), shape_of(out, extents));

  const host_tensor aw = test::convert(a, wide_of(type));
  const host_tensor bw = lb ? test::convert(b, wide_of(type)) : host_tensor{};
  const host_tensor want = test::naive_contract_step(aw, la, lb ? &bw : nullptr, lbr, out, extents);
  const host_tensor aa = abs_of(a);
  const host_tensor ba = lb ? abs_of(b) : host_tensor{};
  const host_tensor scale = test::naive_contract_step(aa, la, lb ? &ba : nullptr, lbr, out, extents);

  std::int64_t k = 1;
  std::vector<label_t> seen;
  for (const auto* ls : {&la, &lbr})
    for (label_t l : *ls)
      if (std::find(out.begin(), out.end(), l) == out.end() && std::find(seen.begin(), seen.end(), l) == seen.end()) {
        seen.push_back(l);
        k *= extents[static_cast<std::size_t>(l)];
      }
  // norms by hand: ||got - want|| / ||scale||
  const host_tensor gw = test::convert(got, wide_of(type));
  double num = 0, den = 0;
  visit_dtype(wide_of(type), [&](auto zero) {
    using T = decltype(zero);
    for (std::int64_t i = 0; i < want.size(); ++i) num += std::norm(gw.as<T>()[i] - want.as<T>()[i]);
  });
  for (std::int64_t i = 0; i < scale.size(); ++i) den += scale.as<double>()[i] * scale.as<double>()[i];
  const double err = std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
  const double tol = 8.0 * eps_of(type) * std::sqrt(static_cast<double>(std::max<std::int64_t>(k, 1))) + 2.0 * eps_of(type);
  EXPECT_LE(err, tol) << "relative error " << err << " > tolerance " << tol;
}

// Parses "ab,bc->ac" (or "ab->ba" unary) with letters a.. as labels 0..
void check(const std::string& expr, const std::vector<std::int64_t>& extents, std::uint64_t seed = 1) {
  const auto arrow = expr.find("->");
  const std::string ins = expr.substr(0, arrow), outs = expr.substr(arrow + 2);
  const auto comma = ins.find(',');
  auto labels = [](const std::string& s) {
    std::vector<label_t> r;
    for (char ch : s) r.push_back(ch - 'a');
    return r;
  };
  const auto la = labels(ins.substr(0, comma));
  const auto out = labels(outs);
  for (dtype t : all_types) {
    if (comma == std::string::npos) {
      check_step(t, la, nullptr, out, extents, seed);
    } else {
      const auto lb = labels(ins.substr(comma + 1));
      check_step(t, la, &lb, out, extents, seed);
    }
  }
}

TEST(cpu_step, matrix_products_in_every_layout) {
  const std::vector<std::int64_t> e{5, 7, 3};
  for (const char* x : {"ab,bc->ac", "ab,cb->ac", "ba,bc->ac", "ba,cb->ac", "ab,bc->ca", "ba,cb->ca", "ab,b->a", "b,bc->c"}) check(x, e);
}

TEST(cpu_step, gemm_sized_layouts) {
  // K, M, N large enough for the GEMM path; every operand/output layout, with and without batch.
  const std::vector<std::int64_t> e{9, 20, 6, 4, 3, 5};
  for (const char* x : {"ab,bc->ac", "ab,cb->ac", "ba,bc->ac", "ba,cb->ac", "ab,bc->ca", "ba,cb->ca", "abd,bdc->acd",
                        "dab,dbc->dac", "dab,dcb->dca", "adb,bcd->dca", "aeb,bfc->eacf", "abf,fbc->fac", "eab,ebc->aec",
                        "abd,dbc->ac", "adbe,ebdc->ca"})
    check(x, e);
}

TEST(cpu_step, batch_and_hyperedges) {
  const std::vector<std::int64_t> e{2, 3, 4, 2, 3};
  for (const char* x : {"abc,bcd->abcd", "abc,cbd->dcba", "ab,ab->ab", "abc,abc->", "abc,abc->b", "abcd,bd->abcd", "ab,b->ab",
                        "abce,dce->abcde", "abce,ecd->eb"})
    check(x, e);
}

TEST(cpu_step, diagonals_traces_and_one_sided_sums) {
  const std::vector<std::int64_t> e{3, 4, 2, 5};
  for (const char* x : {"aa->a", "aa->", "aab->ba", "abab->ab", "aba->b", "ab->", "ab->a", "ab->b", "abc->b", "aab,bc->ac",
                        "ab,bcc->a", "abd,bc->ac", "ab,bcd->ad", "aab,bbc->", "ab,cd->ad", "abc,cd->"})
    check(x, e);
}

TEST(cpu_step, outer_products_scalars_and_size_one_modes) {
  const std::vector<std::int64_t> e{3, 1, 4, 1, 2};
  for (const char* x : {"a,c->ac", "a,c->ca", "ab,cd->dcba", "->", ",->", ",a->a", "a,->a", ",a->", "b->", "b->b", "ab,bc->ac",
                        "abd,dbc->cda", "bdb,d->b", "abcde,edcba->", "e,e->e", "ab->ba", "ace->eca"})
    check(x, e);
}

TEST(cpu_step, long_runs_of_extent_two_modes) {
  // The reference network's shape: many modes of extent 2, partly shared and in order.
  std::vector<std::int64_t> e(14, 2);
  for (const char* x : {"abcdefghij,efgk->abcdhijk", "abcdefghij,ghk->abcdefijk", "abcdefghij,jbk->abcdefghijk",
                        "abcdefghij,acek->kabcdefghij", "abcdefghijkl,lkm->abcdefghijm", "abcdefghij,abcdefghij->abcdefghij",
                        "abcdefghij,jihgfedcba->", "abcdefghij->jihgfedcba", "abcdefghijkl,bdm->acefghijklm"})
    check(x, e);
}

// Random steps: rank up to 6, extents 1..4, labels possibly repeated, shared, summed one-sidedly,
// unary steps now and then. The seed of each case is printed on failure.
void random_steps(dtype type, std::uint64_t base_seed, int count) {
  const int before = checked_steps;
  for (int c = 0; c < count; ++c) {
    const std::uint64_t seed = base_seed * 100003 + static_cast<std::uint64_t>(c);
    std::mt19937_64 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int n_labels = pick(1, 8);
    std::vector<std::int64_t> extents;
    for (int l = 0; l < n_labels; ++l) extents.push_back(pick(1, 4));
    auto operand = [&] {
      std::vector<label_t> ls;
      const int rank = pick(0, 6);
      for (int i = 0; i < rank; ++i) ls.push_back(pick(0, n_labels - 1));
      return ls;
    };
    const auto la = operand();
    const bool unary = pick(0, 9) == 0;
    const auto lb = operand();
    std::vector<label_t> present;
    for (const auto* ls : {&la, &lb}) {
      if (unary && ls == &lb) break;
      for (label_t l : *ls)
        if (std::find(present.begin(), present.end(), l) == present.end()) present.push_back(l);
    }
    std::shuffle(present.begin(), present.end(), rng);
    std::vector<label_t> out;
    for (label_t l : present)
      if (pick(0, 2) != 0) out.push_back(l);
    std::int64_t work = 1;
    for (label_t l : present) work *= extents[static_cast<std::size_t>(l)];
    if (work > (1 << 16)) continue;
    check_step(type, la, unary ? nullptr : &lb, out, extents, seed);
    if (::testing::Test::HasFailure()) return;  // one logged failure is enough to reproduce
  }
  // the size filter must leave most cases in
  EXPECT_GE(checked_steps - before, count * 3 / 4);
}

TEST(cpu_step, random_f32) { random_steps(dtype::f32, 11, 400); }
TEST(cpu_step, random_f64) { random_steps(dtype::f64, 12, 400); }
TEST(cpu_step, random_c64) { random_steps(dtype::c64, 13, 400); }
TEST(cpu_step, random_c128) { random_steps(dtype::c128, 14, 400); }

TEST(cpu_step, random_gemm_sized) {
  // Larger extents so that many cases take the GEMM path, in every dtype.
  for (dtype t : all_types) {
    for (int c = 0; c < 60; ++c) {
      const std::uint64_t seed = 900000 + static_cast<std::uint64_t>(c);
      std::mt19937_64 rng(seed);
      auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      std::vector<std::int64_t> extents;
      for (int l = 0; l < 7; ++l) extents.push_back(pick(1, 9));
      std::vector<label_t> labels{0, 1, 2, 3, 4, 5, 6};
      std::shuffle(labels.begin(), labels.end(), rng);
      // roles: 0,1 free A; 2,3 contracted; 4 batch; 5 free B; 6 sometimes another contracted
      std::vector<label_t> la{labels[0], labels[1], labels[2], labels[3], labels[4]};
      std::vector<label_t> lb{labels[2], labels[3], labels[4], labels[5], labels[6]};
      std::vector<label_t> out{labels[0], labels[1], labels[4], labels[5]};
      std::shuffle(la.begin(), la.end(), rng);
      std::shuffle(lb.begin(), lb.end(), rng);
      if (pick(0, 1)) std::shuffle(out.begin(), out.end(), rng);
      check_step(t, la, &lb, out, extents, seed);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(cpu_step, rejects_mismatched_operands) {
  const std::vector<std::int64_t> e{2, 3};
  host_tensor a(dtype::f32, {2, 3});
  host_tensor b(dtype::f64, {3});
  host_tensor bad(dtype::f32, {2, 2});
  fill_constant(a, 1.0);
  fill_constant(b, 1.0);
  fill_constant(bad, 1.0);
  EXPECT_THROW(cpu::contract_step(a, {0, 1}, &b, {1}, {0}, e), dtype_error);
  EXPECT_THROW(cpu::contract_step(bad, {0, 1}, nullptr, {}, {0}, e), shape_error);
  EXPECT_THROW(cpu::contract_step(a, {0}, nullptr, {}, {0}, e), shape_error);
  EXPECT_THROW(cpu::contract_step(a, {0, 1}, nullptr, {}, {0, 0}, e), shape_error);
}

}  // namespace
}  // namespace tnrt
