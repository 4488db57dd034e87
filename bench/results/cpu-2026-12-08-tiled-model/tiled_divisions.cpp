#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include "core/step_plan.hpp"
#include "plan_args.hpp"
#include "core/tiled.hpp"
#include "tnrt/formats.hpp"
using namespace tnrt;
// Usage: tiled_divisions FILE LAYOUT MIN_MB (steps whose D, counted twice, has at least MIN_MB).
int main(int, char** argv) {
  const probe::planned x = probe::plan_of(argv[1], argv[2]);
  const double min_mb = std::atof(argv[3]);
  probe::each_tiled_step(x, [&](std::size_t k, const tiled_record& r, std::size_t es) {
    double d = 1; for (auto e : x.pl.lowered[k].d.extents) d *= e;
    if (d * static_cast<double>(es) * 2 < min_mb * 1e6) return;
    const int kmax = tiled_k_max(r.k_count);
    const int outs = tiled_outputs_for(es, kmax, r.vec_kind);
    const int vd = r.vec_kind != tiled_scalar ? tiled_vec_d(es) : 1;
    const int copies = tiled_reg_bytes / static_cast<int>(es * r.vec_planned);
    int active_copies = 0; for (int i = 0; i < copies; ++i) if (i * tiled_threads * r.vec_planned < r.tile_big) ++active_copies;
    int active_runs = 0; for (int j = 0; j < outs / vd; ++j) if (j * tiled_threads * vd < r.tile_d) ++active_runs;
    const int d_calls = active_runs * (r.vec_kind == tiled_run_values ? 1 + vd : 1) + (r.vec_kind == tiled_run_table ? active_runs * vd : 0);
#ifdef TNRT_AFTER  // the merged lists, the last digit without a division, shifts where the extents are powers of two
    const long long divs = (r.big_pow2 != 0 ? 0 : static_cast<long long>(active_copies) * std::max(r.n_big - 1, 0)) +
                           (r.d_pow2 != 0 ? 0 : static_cast<long long>(d_calls) * std::max(r.n_d - 1, 0));
#else  // a division per mode
    const long long divs = static_cast<long long>(active_copies) * r.n_big + static_cast<long long>(d_calls) * r.n_d;
#endif
    long long groups = (r.tile_count + r.group - 1) / r.group;
    std::printf("step %zu: n_big %d n_d %d n_k %d n_outer %d | k %d vec %d kind %d reuse %d | tile_big %d tile_d %d group %d tiles %lld groups %lld | per thread: copies %d, d_entry calls %d, divisions ~%lld\n",
                k, r.n_big, r.n_d, r.n_k, r.n_outer, r.k_count, r.vec_planned, r.vec_kind, r.reuse, r.tile_big, r.tile_d, r.group, (long long)r.tile_count, groups, active_copies, d_calls, divs);
  });
}
