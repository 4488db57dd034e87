// GPU soak (docs/reliability.md): N eager contractions of random small einsums (2-6 operands,
// extents 1..8, all four dtypes) through the library API (tnrt::context, host-tensor convenience: upload, contract, download) with a plan cache of ONE entry, every result
// checked against tnrt::cpu::contract. Watches the pool (high-water must stay flat after warm-up,
// nothing in use after a synchronize), the retirement queue (in_flight never above capacity, no
// leaked block) and exits non-zero on any failure.
//
//   tnrt_soak [--count N] [--seed S] [--fuse on|off] [--layout column|row|follow|planned] [--quiet]
//
// Prints the pool at 10% (the end of warm-up), 50% and 100%, then one line:
//   soak: N contractions, M verified, F failed, pool high-water X after warm-up → Y at end, leaked L, max in_flight K
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "exit_codes.hpp"  // apps/tnrt: the tool's exit code of each error class
#include "tnrt/context.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/dtype.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/network.hpp"
#include "tnrt/path.hpp"
#include "tnrt/tensor.hpp"

namespace {

struct soak_options {
  std::uint64_t count = 10000;
  std::uint64_t seed = 1;
  bool fuse = false;  // off: every step goes through cuTENSOR and the one-entry plan cache
  tnrt::layout_policy layout = tnrt::layout_policy::column_major;
  bool quiet = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tnrt_soak: %s\nusage: tnrt_soak [--count N] [--seed S] [--fuse on|off] [--layout column|row|follow|planned] "
               "[--quiet]\n",
               why);
  std::exit(2);
}

soak_options parse_args(int argc, char** argv) {
  soak_options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    auto number = [&](std::string_view v) -> std::uint64_t {
      char* end = nullptr;
      const std::string s(v);
      const unsigned long long n = std::strtoull(s.c_str(), &end, 10);
      if (s.empty() || end == nullptr || *end != '\0') usage("not a number");
      return n;
    };
    if (a == "--count") {
      o.count = number(value());
      if (o.count == 0) usage("--count must be positive");
    } else if (a == "--seed") {
      o.seed = number(value());
    } else if (a == "--fuse") {
      const auto v = value();
      if (v != "on" && v != "off") usage("--fuse on|off");
      o.fuse = v == "on";
    } else if (a == "--layout") {
      const auto v = value();
      const std::optional<tnrt::layout_policy> l = tnrt::layout_named(v);
      if (!l) usage("--layout column|row|follow|planned");
      o.layout = *l;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--help" || a == "-h") {
      usage("help");
    } else {
      usage("unknown option");
    }
  }
  return o;
}

// Letters used as labels; at most 8 distinct labels per problem.
constexpr std::string_view letters = "abcdefghij";
constexpr std::int64_t max_operand_elements = std::int64_t{1} << 12;
constexpr std::int64_t max_intermediate_elements = std::int64_t{1} << 16;

struct random_problem {
  tnrt::problem prob;
  std::string expression;
};

std::int64_t count_of(const tnrt::network& net, const std::vector<tnrt::label_t>& labels) {
  std::int64_t n = 1;
  for (tnrt::label_t l : labels) n *= net.extents[static_cast<std::size_t>(l)];
  return n;
}

/// A random einsum: 2-6 operands of rank 0-4 over up to 8 labels (extents 1..8, an operand at most
/// 4096 elements), a random subset of the labels as output, the built-in optimizer's path; retried
/// until every intermediate stays under 2^16 elements.
random_problem make_problem(std::mt19937_64& rng) {
  for (;;) {
    const int n_ops = std::uniform_int_distribution<int>(2, 6)(rng);
    const int n_labels = std::uniform_int_distribution<int>(1, 8)(rng);
    std::vector<std::int64_t> extent(static_cast<std::size_t>(n_labels));
    for (auto& e : extent) e = std::uniform_int_distribution<std::int64_t>(1, 8)(rng);
    std::string expr;
    std::vector<std::vector<std::int64_t>> shapes;
    std::vector<int> used(static_cast<std::size_t>(n_labels), 0);
    for (int o = 0; o < n_ops; ++o) {
      if (o > 0) expr += ',';
      const int rank = std::uniform_int_distribution<int>(0, 4)(rng);
      std::vector<std::int64_t> shape;
      std::int64_t elements = 1;
      for (int r = 0; r < rank; ++r) {
        const int l = std::uniform_int_distribution<int>(0, n_labels - 1)(rng);
        const std::int64_t e = extent[static_cast<std::size_t>(l)];
        if (elements * e > max_operand_elements) break;
        elements *= e;
        expr += letters[static_cast<std::size_t>(l)];
        shape.push_back(e);
        used[static_cast<std::size_t>(l)] = 1;
      }
      shapes.push_back(std::move(shape));
    }
    expr += "->";
    for (int l = 0; l < n_labels; ++l) {
      if (used[static_cast<std::size_t>(l)] != 0 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
        expr += letters[static_cast<std::size_t>(l)];
      }
    }
    random_problem rp;
    rp.expression = expr;
    rp.prob.net = tnrt::parse_expression(expr, shapes);
    const auto path = tnrt::optimize_path(rp.prob.net, tnrt::path_optimizer::automatic);
    rp.prob.tree = tnrt::tree_from_linear_path(rp.prob.net, path);
    rp.prob.source = "soak";
    bool small = true;
    for (const auto& labels : tnrt::operand_labels(rp.prob.net, rp.prob.tree)) {
      small = small && count_of(rp.prob.net, labels) <= max_intermediate_elements;
    }
    if (small) return rp;
  }
}

/// Relative Frobenius error, in double whatever the dtype.
double relative_error(const tnrt::host_tensor& got, const tnrt::host_tensor& want) {
  const auto n = static_cast<std::size_t>(want.size());
  const bool cplx = tnrt::is_complex(want.type());
  const std::size_t reals = cplx ? 2 * n : n;
  auto at = [](const tnrt::host_tensor& t, std::size_t i) -> double {
    switch (t.type()) {
      case tnrt::dtype::f32:
      case tnrt::dtype::c64: return static_cast<double>(t.as<float>()[i]);
      case tnrt::dtype::f64:
      case tnrt::dtype::c128: return t.as<double>()[i];
    }
    return 0;
  };
  double diff = 0;
  double norm = 0;
  for (std::size_t i = 0; i < reals; ++i) {
    const double w = at(want, i);
    const double d = at(got, i) - w;
    diff += d * d;
    norm += w * w;
  }
  if (std::isnan(diff)) return diff;
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

double tolerance(tnrt::dtype t) { return tnrt::is_double(t) ? 1e-10 : 1e-4; }

struct checkpoint {
  std::uint64_t done = 0;
  tnrt::device::pool_stats pool;
};

}  // namespace

int main(int argc, char** argv) {
  const soak_options so = parse_args(argc, argv);
  if (const auto why = tnrt::unavailable_reason(0); !why.empty()) {
    std::fprintf(stderr, "tnrt_soak: no usable GPU/cuTENSOR: %s\n", why.c_str());
    return 9;
  }
  tnrt::options opt;
  opt.plan_cache_entries = 1;
  opt.fuse_small_steps = so.fuse;
  opt.intermediate_layout = so.layout;

  std::uint64_t verified = 0, failed = 0, max_in_flight = 0, in_flight_over = 0;
  std::vector<checkpoint> checkpoints;
  bool in_use_leak = false;
  std::size_t capacity = 0;
  try {
    tnrt::context ctx(opt);
    capacity = opt.retirement_capacity;
    std::mt19937_64 rng(so.seed);
    const std::uint64_t marks[3] = {std::max<std::uint64_t>(1, so.count / 10), std::max<std::uint64_t>(1, so.count / 2), so.count};
    std::size_t next_mark = 0;
    for (std::uint64_t i = 0; i < so.count; ++i) {
      random_problem rp = make_problem(rng);
      rp.prob.type = static_cast<tnrt::dtype>(i % 4);
      try {
        std::vector<tnrt::host_tensor> inputs;
        for (std::size_t k = 0; k < rp.prob.net.inputs.size(); ++k) {
          inputs.emplace_back(rp.prob.type, rp.prob.net.shape_of(rp.prob.net.inputs[k]));
          tnrt::fill_random(inputs.back(), so.seed + i, k, 0.5, 1.5);
        }
        const tnrt::host_tensor got = ctx.contract(rp.prob, inputs);
        const tnrt::host_tensor want = tnrt::cpu::contract(rp.prob, inputs);
        const double err = relative_error(got, want);
        if (!(err <= tolerance(rp.prob.type))) {
          ++failed;
          std::fprintf(stderr, "soak: #%llu %s %s: relative error %.3g above %.1g\n", static_cast<unsigned long long>(i),
                       rp.expression.c_str(), std::string(tnrt::name_of(rp.prob.type)).c_str(), err, tolerance(rp.prob.type));
        } else {
          ++verified;
        }
      } catch (const tnrt::error& e) {
        ++failed;
        std::fprintf(stderr, "soak: #%llu %s %s: %s: %s\n", static_cast<unsigned long long>(i), rp.expression.c_str(),
                     std::string(tnrt::name_of(rp.prob.type)).c_str(), e.kind(), e.what());
      }
      const auto rs = ctx.stats().retirement;
      max_in_flight = std::max<std::uint64_t>(max_in_flight, rs.max_in_flight);
      if (rs.in_flight > capacity || rs.max_in_flight > capacity) ++in_flight_over;
      if (failed >= 20) {
        std::fprintf(stderr, "soak: stopping after %llu failures\n", static_cast<unsigned long long>(failed));
        break;
      }
      if (next_mark < 3 && i + 1 == marks[next_mark]) {
        ctx.synchronize();
        const tnrt::counters cs = ctx.stats();
        const auto ps = cs.pool;
        checkpoints.push_back({i + 1, ps});
        // As at the end: the shared workspace's retained scratch is in use by design.
        if (ps.bytes_in_use != cs.workspace.retained_bytes) in_use_leak = true;
        std::printf("soak: %3llu%% %llu contractions: pool high-water %zu B (reserved %zu B), in use after sync %zu B (workspace %zu B), "
                    "cached %zu B, driver allocations %llu, plan cache misses %llu, retirement max in_flight %llu/%zu\n",
                    static_cast<unsigned long long>((i + 1) * 100 / so.count), static_cast<unsigned long long>(i + 1),
                    ps.high_water, ps.reserved_high_water, ps.bytes_in_use,
                    static_cast<std::size_t>(cs.workspace.retained_bytes), ps.bytes_cached,
                    static_cast<unsigned long long>(ps.driver_allocations),
                    static_cast<unsigned long long>(cs.plan_cache.misses),
                    static_cast<unsigned long long>(rs.max_in_flight), capacity);
        std::fflush(stdout);
        ++next_mark;
      } else if (!so.quiet && (i + 1) % 1000 == 0) {
        std::printf("soak: %llu/%llu, %llu failed\n", static_cast<unsigned long long>(i + 1),
                    static_cast<unsigned long long>(so.count), static_cast<unsigned long long>(failed));
        std::fflush(stdout);
      }
    }
    ctx.synchronize();
    const tnrt::counters final_cs = ctx.stats();
    const auto final_rs = final_cs.retirement;
    const auto final_ps = final_cs.pool;
    max_in_flight = std::max<std::uint64_t>(max_in_flight, final_rs.max_in_flight);
    // The shared workspace keeps its scratch (retained, bounded by its cap): that is in use by design.
    // Anything else still in use after a synchronize is a block the contraction never gave back.
    const std::size_t retained_scratch = final_cs.workspace.retained_bytes;
    if (final_ps.bytes_in_use != retained_scratch) in_use_leak = true;
    if (checkpoints.empty() || checkpoints.back().done != verified + failed) checkpoints.push_back({verified + failed, final_ps});

    const std::size_t warm = checkpoints.front().pool.high_water;
    const std::size_t end = final_ps.high_water;
    // Flat: the high-water after warm-up (10%) bounds the rest of the run. Random shapes can still
    // bring a slightly larger problem late, so growth up to 2x is reported but tolerated when the
    // run is long enough for warm-up to mean something (>= 1000 contractions).
    const bool grew = so.count >= 1000 && end > 2 * warm;
    const bool bad = failed != 0 || final_rs.leaked != 0 || in_flight_over != 0 || in_use_leak || grew;
    if (final_rs.leaked != 0) std::fprintf(stderr, "soak: %llu retirement blocks leaked\n", static_cast<unsigned long long>(final_rs.leaked));
    if (in_flight_over != 0) std::fprintf(stderr, "soak: retirement in_flight above capacity %zu (%llu times)\n", capacity, static_cast<unsigned long long>(in_flight_over));
    if (in_use_leak) std::fprintf(stderr, "soak: pool bytes still in use after a synchronize (a block never returned)\n");
    if (grew) std::fprintf(stderr, "soak: pool high-water grew from %zu B after warm-up to %zu B\n", warm, end);
    std::printf("soak: %llu contractions, %llu verified, %llu failed, pool high-water %zu after warm-up \u2192 %zu at end, "
                "leaked %llu, max in_flight %llu\n",
                static_cast<unsigned long long>(verified + failed), static_cast<unsigned long long>(verified),
                static_cast<unsigned long long>(failed), warm, end, static_cast<unsigned long long>(final_rs.leaked),
                static_cast<unsigned long long>(max_in_flight));
    return bad ? 1 : 0;
  } catch (const tnrt::error& e) {
    std::fprintf(stderr, "tnrt_soak: %s: %s\n", e.kind(), e.what());
    return static_cast<int>(tnrt::cli::exit_code_of(e));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tnrt_soak: internal error: %s\n", e.what());
    return static_cast<int>(tnrt::cli::exit_code::internal);
  }
}
