#include "cpu/strided_kernel.hpp"

#include <atomic>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tnrt::cpu {

namespace {

std::atomic<int> threads_{0};

// Drops size-1 modes and fuses neighbours that stay adjacent and in order in out, A and B, so that
// e.g. 20 modes of extent 2 that travel together become one loop of 2^20: the loop nest then spends
// its time in long inner loops, not in index bookkeeping.
std::vector<loop_mode> fuse(const std::vector<loop_mode>& modes) {
  std::vector<loop_mode> r;
  for (const loop_mode& m : modes) {
    if (m.extent == 1) continue;
    if (!r.empty()) {
      loop_mode& p = r.back();
      if (p.out_stride == m.out_stride * m.extent && p.a_stride == m.a_stride * m.extent &&
          p.b_stride == m.b_stride * m.extent) {
        p.extent *= m.extent;
        p.out_stride = m.out_stride;
        p.a_stride = m.a_stride;
        p.b_stride = m.b_stride;
        continue;
      }
    }
    r.push_back(m);
  }
  return r;
}

std::int64_t product(const std::vector<loop_mode>& modes) {
  std::int64_t n = 1;
  for (const loop_mode& m : modes) n *= m.extent;
  return n;
}

// Walks a multi-index over `modes` in row-major order, tracking the offsets into out, A and B.
struct odometer {
  const std::vector<loop_mode>* modes = nullptr;
  std::vector<std::int64_t> index;
  std::int64_t o = 0, a = 0, b = 0;

  explicit odometer(const std::vector<loop_mode>& m) : modes(&m), index(m.size(), 0) {}

  void seek(std::int64_t flat) {
    o = a = b = 0;
    for (std::size_t i = modes->size(); i-- > 0;) {
      const loop_mode& m = (*modes)[i];
      index[i] = flat % m.extent;
      flat /= m.extent;
      o += index[i] * m.out_stride;
      a += index[i] * m.a_stride;
      b += index[i] * m.b_stride;
    }
  }
  void next() {
    for (std::size_t i = modes->size(); i-- > 0;) {
      const loop_mode& m = (*modes)[i];
      if (++index[i] < m.extent) {
        o += m.out_stride;
        a += m.a_stride;
        b += m.b_stride;
        return;
      }
      index[i] = 0;
      o -= (m.extent - 1) * m.out_stride;
      a -= (m.extent - 1) * m.a_stride;
      b -= (m.extent - 1) * m.b_stride;
    }
  }
};

// The innermost modes of the nest, run as one flat block: a linear innermost mode (walked with its
// strides, vectorisable when they are 0 or 1) repeated over `rows` whose offsets come from tables.
// Bond dimension 2 leaves many modes of extent 2 that cannot be fused; the table turns them into
// one loop of a few hundred instead of an odometer step every two elements.
struct inner_block {
  std::int64_t n = 1;                // inner mode extent
  std::int64_t sa = 0, sb = 0;       // inner mode strides in A and B
  std::vector<std::int64_t> ta{0}, tb{0};  // row offsets in A and B (out rows are dense: r * n)
  [[nodiscard]] std::int64_t size() const noexcept { return n * static_cast<std::int64_t>(ta.size()); }
};

// Takes trailing modes off `modes` into a block of about `cap` elements, splitting the first mode
// that does not fit so the block still fills up (a fused mode of 2^20 behind a mode of 4 must not
// leave a block of 4).
inner_block take_block(std::vector<loop_mode>& modes, std::int64_t cap) {
  inner_block blk;
  if (modes.empty()) return blk;
  std::vector<loop_mode> taken;
  std::int64_t n = 1;
  while (!modes.empty()) {
    loop_mode m = modes.back();
    if (n * m.extent <= cap || taken.empty()) {
      n *= m.extent;
      taken.insert(taken.begin(), m);
      modes.pop_back();
      continue;
    }
    std::int64_t f = cap / n;
    while (f > 1 && m.extent % f != 0) --f;
    if (f > 1) {
      loop_mode inner = m;
      inner.extent = f;
      loop_mode& outer = modes.back();
      outer.extent = m.extent / f;
      outer.out_stride = m.out_stride * f;
      outer.a_stride = m.a_stride * f;
      outer.b_stride = m.b_stride * f;
      taken.insert(taken.begin(), inner);
      n *= f;
    }
    break;
  }
  const loop_mode last = taken.back();
  taken.pop_back();
  blk.n = last.extent;
  blk.sa = last.a_stride;
  blk.sb = last.b_stride;
  const std::int64_t rows = product(taken);
  blk.ta.resize(static_cast<std::size_t>(rows));
  blk.tb.resize(static_cast<std::size_t>(rows));
  odometer od(taken);
  od.seek(0);
  for (std::int64_t r = 0; r < rows; ++r, od.next()) {
    blk.ta[static_cast<std::size_t>(r)] = od.a;
    blk.tb[static_cast<std::size_t>(r)] = od.b;
  }
  return blk;
}

// o[j] (=|+=) a[j*sa] * b[j*sb], j < n; N > 0 fixes n at compile time so short rows vectorise.
template <bool accumulate, int N, class T>
inline void row_axpy(T* __restrict o, const T* __restrict a, const T* __restrict b, std::int64_t n_dyn, std::int64_t sa, std::int64_t sb) {
  const std::int64_t n = N > 0 ? N : n_dyn;
  auto put = [&](std::int64_t j, T v) {
    if constexpr (accumulate) o[j] += v;
    else o[j] = v;
  };
  if (sa == 1 && sb == 0) {
    const T bv = *b;
    for (std::int64_t j = 0; j < n; ++j) put(j, a[j] * bv);
  } else if (sa == 0 && sb == 1) {
    const T av = *a;
    for (std::int64_t j = 0; j < n; ++j) put(j, av * b[j]);
  } else if (sa == 1 && sb == 1) {
    for (std::int64_t j = 0; j < n; ++j) put(j, a[j] * b[j]);
  } else {
    for (std::int64_t j = 0; j < n; ++j) put(j, a[j * sa] * b[j * sb]);
  }
}

template <bool accumulate, int N, class T>
inline void rows_axpy(T* __restrict o, const T* __restrict a, const T* __restrict b, const inner_block& blk) {
  const std::size_t rows = blk.ta.size();
  const std::int64_t* ta = blk.ta.data();
  const std::int64_t* tb = blk.tb.data();
  for (std::size_t r = 0; r < rows; ++r) row_axpy<accumulate, N>(o + static_cast<std::int64_t>(r) * blk.n, a + ta[r], b + tb[r], blk.n, blk.sa, blk.sb);
}

// o over the block (=|+=) a * b; out is dense over it.
template <bool accumulate, class T>
inline void block_axpy(T* o, const T* a, const T* b, const inner_block& blk) {
  switch (blk.n) {
    case 1: rows_axpy<accumulate, 1>(o, a, b, blk); return;
    case 2: rows_axpy<accumulate, 2>(o, a, b, blk); return;
    case 4: rows_axpy<accumulate, 4>(o, a, b, blk); return;
    case 8: rows_axpy<accumulate, 8>(o, a, b, blk); return;
    case 16: rows_axpy<accumulate, 16>(o, a, b, blk); return;
    default: rows_axpy<accumulate, 0>(o, a, b, blk); return;
  }
}

template <class T>
inline T block_dot(const T* __restrict a, const T* __restrict b, const inner_block& blk) {
  const std::int64_t n = blk.n, sa = blk.sa, sb = blk.sb;
  T acc{};
  for (std::size_t r = 0; r < blk.ta.size(); ++r) {
    const T* ar = a + blk.ta[r];
    const T* br = b + blk.tb[r];
    if (sa == 1 && sb == 1) {
      for (std::int64_t j = 0; j < n; ++j) acc += ar[j] * br[j];
    } else {
      for (std::int64_t j = 0; j < n; ++j) acc += ar[j * sa] * br[j * sb];
    }
  }
  return acc;
}

}  // namespace

int thread_count() noexcept {
  const int n = threads_.load(std::memory_order_relaxed);
  if (n > 0) return n;
  // Read once: std::thread::hardware_concurrency opens /sys/devices/system/cpu/online on every call,
  // and parallel_for asks on every loop nest: a 2x2 einsum from Python made four such opens, and
  // reading it once took that call from 46.8 to 19.4 us (bench/results/cpu-2026-12-06-host-threads).
  static const int hw = [] {
    const unsigned c = std::thread::hardware_concurrency();
    return c ? static_cast<int>(c) : 1;
  }();
  return hw;
}

void set_direct_threads(int n) noexcept { threads_.store(n > 0 ? n : 0, std::memory_order_relaxed); }

template <class T>
void run_direct(T* out, const T* a, const T* b, std::vector<loop_mode> out_modes, std::vector<loop_mode> sum_modes) {
  for (const loop_mode& m : out_modes)
    if (m.extent == 0) return;
  std::int64_t out_total = product(out_modes);
  for (const loop_mode& m : sum_modes)
    if (m.extent == 0) {
      std::memset(static_cast<void*>(out), 0, static_cast<std::size_t>(out_total) * sizeof(T));
      return;
    }
  out_modes = fuse(out_modes);
  // Summed modes in A's memory order (then B's) so that the sum walks A forwards.
  std::stable_sort(sum_modes.begin(), sum_modes.end(), [](const loop_mode& x, const loop_mode& y) {
    return x.a_stride != y.a_stride ? x.a_stride > y.a_stride : x.b_stride > y.b_stride;
  });
  sum_modes = fuse(sum_modes);
  const std::int64_t sum_total = product(sum_modes);

  constexpr std::int64_t block_cap = 512;
  // dot form (sum innermost, one store per output) when the output's inner modes are too short to
  // make a useful block; axpy form (sum outside a block of outputs kept in L1) otherwise.
  std::int64_t trailing_out = 1;
  for (std::size_t i = out_modes.size(); i-- > 0 && trailing_out * out_modes[i].extent <= block_cap;) trailing_out *= out_modes[i].extent;
  if (!out_modes.empty() && trailing_out == 1) trailing_out = out_modes.back().extent;
  const bool dot = !sum_modes.empty() && (out_modes.empty() || (trailing_out < 16 && sum_total >= 16));

  std::vector<loop_mode> outer = out_modes;
  std::vector<loop_mode> summed = sum_modes;
  const inner_block blk = dot ? take_block(summed, block_cap) : take_block(outer, block_cap);
  const std::int64_t outer_total = product(outer);
  // TNRT_CPU_TRACE=1 prints each nest (fused modes, block shape): the first thing to look at when
  // a step is slower than its byte count says it should be.
  static const bool trace = std::getenv("TNRT_CPU_TRACE") != nullptr;
  if (trace) {
    auto dump = [](const char* what, const std::vector<loop_mode>& ms) {
      std::fprintf(stderr, "%s:", what);
      for (const auto& m : ms) std::fprintf(stderr, " (%lld o%lld a%lld b%lld)", static_cast<long long>(m.extent), static_cast<long long>(m.out_stride), static_cast<long long>(m.a_stride), static_cast<long long>(m.b_stride));
      std::fprintf(stderr, "\n");
    };
    dump("out", out_modes);
    dump("sum", sum_modes);
    std::fprintf(stderr, "dot %d block rows %zu n %lld sa %lld sb %lld\n", dot ? 1 : 0, blk.ta.size(), static_cast<long long>(blk.n), static_cast<long long>(blk.sa), static_cast<long long>(blk.sb));
  }
  const std::int64_t work = out_total * sum_total + out_total;

  parallel_for(outer_total, work, [&](std::int64_t lo, std::int64_t hi) {
    odometer po(outer);
    odometer ko(summed);
    const std::int64_t ksize = product(summed);
    po.seek(lo);
    for (std::int64_t p = lo; p < hi; ++p, po.next()) {
      if (dot) {
        T acc{};
        ko.seek(0);
        for (std::int64_t k = 0; k < ksize; ++k, ko.next()) acc += block_dot(a + po.a + ko.a, b + po.b + ko.b, blk);
        out[po.o] = acc;
      } else if (summed.empty()) {
        block_axpy<false>(out + po.o, a + po.a, b + po.b, blk);
      } else {
        T* o = out + po.o;
        ko.seek(0);
        block_axpy<false>(o, a + po.a + ko.a, b + po.b + ko.b, blk);
        ko.next();
        for (std::int64_t k = 1; k < ksize; ++k, ko.next()) block_axpy<true>(o, a + po.a + ko.a, b + po.b + ko.b, blk);
      }
    }
  });
}

template void run_direct<float>(float*, const float*, const float*, std::vector<loop_mode>, std::vector<loop_mode>);
template void run_direct<double>(double*, const double*, const double*, std::vector<loop_mode>, std::vector<loop_mode>);
template void run_direct<std::complex<float>>(std::complex<float>*, const std::complex<float>*, const std::complex<float>*,
                                              std::vector<loop_mode>, std::vector<loop_mode>);
template void run_direct<std::complex<double>>(std::complex<double>*, const std::complex<double>*, const std::complex<double>*,
                                               std::vector<loop_mode>, std::vector<loop_mode>);

}  // namespace tnrt::cpu
