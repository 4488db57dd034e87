// Per tiled plan of every step: a hash of every slab offset, D entry and table row the kernel computes.
#include <cstdio>
#include <cstdint>
#include <string>
#include "core/step_plan.hpp"
#include "plan_args.hpp"
#include "core/tiled.hpp"
#include "core/tiled_index.hpp"
#include "tnrt/formats.hpp"
using namespace tnrt;
int main(int, char** argv) {
  const probe::planned x = probe::plan_of(argv[1], argv[2]);
  long plans = 0;
  probe::each_tiled_step(x, [&](std::size_t k, const tiled_record& chosen, std::size_t es) {
    std::vector<tiled_record> all{chosen};
    for (auto& alt : tiled_alternatives(x.pl.lowered[k], es, tiled_limits_of(x.o), chosen)) all.push_back(alt);
    for (const tiled_record& r : all) {
      std::uint64_t h = 1469598103934665603ULL;
      auto mix = [&](std::int64_t v) { h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ULL; };
      for (std::int32_t j = 0; j < r.tile_big; ++j) mix(tiled_index::big_offset(r, j));
      for (std::int32_t e = 0; e < r.tile_d; ++e) {
        std::int32_t d = 0; std::uint32_t pk = 0;
        tiled_index::d_entry(r, e, d, pk);
        mix(d); mix(pk);
        if (r.vec_kind == tiled_run_table) mix(tiled_index::table_row(r, e));
      }
      if (r.vec_kind == tiled_run_table)
        for (std::int32_t i = 0; i < r.table_rows * tiled_k_max(r.k_count); ++i) mix(tiled_index::table_entry(r, i, tiled_k_max(r.k_count)));
      std::printf("step %zu plan kind %d tile_big %d tile_d %d hash %016llx\n", k, r.vec_kind, r.tile_big, r.tile_d, (unsigned long long)h);
      ++plans;
    }
  });
  std::fprintf(stderr, "%ld plans\n", plans);
}
