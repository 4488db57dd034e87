// A model of the tiled kernel's memory traffic on one step, per plan (host only, no GPU).
//
// For every plan compiled would time on a step (describe_tiled's choice and tiled_alternatives),
// it replays the addresses that src/cuda/tiled.cu issues for the first tiles, warp instruction by
// warp instruction, with the kernel's own index arithmetic (core/tiled_index.hpp), and counts:
//   - shared memory wavefronts: per instruction the most distinct 4-byte words any one bank serves
//     (a 16-byte load counts each of its four words), at least the bytes over 128 (loads of the
//     slab values and of run_table's rows, and the slab writes of the asynchronous copies);
//   - global sectors: distinct 32-byte sectors per instruction (the copies from Big and the stores
//     of D), against the bytes over 32;
//   - issued warp instructions of the compute loop (FMAs and shared loads; complex counts 4 FMAs).
// Then per step, on a GPU of `sms` multiprocessors at `ghz`: the DRAM time (bytes over the copy
// bandwidth), the shared-memory time (one wavefront a clock per multiprocessor), the L1 time for
// the global sectors (4 sectors a clock per multiprocessor, an assumption) and the issue time (4
// warp instructions a clock per multiprocessor). The largest is the model's bound; it does not
// model latency, occupancy or the barriers.
//
// Usage: tiled_model FILE LAYOUT [STEP|-] [MIN_MB] [GBPS] [SMS] [GHZ]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/step_plan.hpp"
#include "plan_args.hpp"
#include "core/tiled.hpp"
#include "core/tiled_index.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"

using namespace tnrt;

namespace {

struct access {
  long long addr = 0;  // bytes
  int bytes = 0;
};

// Shared-memory wavefronts of one warp instruction.
long long wavefronts(const std::vector<access>& lanes) {
  if (lanes.empty()) return 0;
  std::map<int, std::set<long long>> bank_words;
  std::set<long long> words;
  for (const access& a : lanes)
    for (int w = 0; w < a.bytes / 4; ++w) {
      const long long word = a.addr / 4 + w;
      bank_words[static_cast<int>(word % 32)].insert(word);
      words.insert(word);
    }
  std::size_t most = 0;
  for (const auto& [bank, set] : bank_words) most = std::max(most, set.size());
  return std::max<long long>(static_cast<long long>(most), (static_cast<long long>(words.size()) * 4 + 127) / 128);
}

struct global_count {
  long long sectors = 0, bytes = 0, requests = 0;
};

void add_global(global_count& g, const std::vector<access>& lanes) {
  if (lanes.empty()) return;
  std::set<long long> sectors;
  for (const access& a : lanes) {
    for (long long b = a.addr; b < a.addr + a.bytes; b += 4) sectors.insert(b / 32);
    g.bytes += a.bytes;
  }
  g.sectors += static_cast<long long>(sectors.size());
  ++g.requests;
}

struct tile_model {
  long long smem_wave = 0, smem_wave_copies = 0, smem_wave_table = 0, issue = 0, fma = 0, lds = 0;
  global_count loads, stores;
};

const char* kind_name(const tiled_record& r) {
  switch (r.vec_kind) {
    case tiled_run_values: return "runs-values";
    case tiled_run_coefs: return "runs-coefs";
    case tiled_run_table: return "runs-table";
    default: return r.reuse != 0 ? "reuse" : "scalar";
  }
}

// One tile (tile index t, group member 0, stage 0) of the kernel on `r`, elements of `es` bytes.
tile_model model_tile(const tiled_record& r, std::size_t es, int fma_per_term, std::int64_t t) {
  tile_model m;
  const int threads = tiled_threads;
  const int k_max = tiled_k_max(r.k_count);
  const bool vector = r.vec_kind != tiled_scalar;
  const int vd = vector ? tiled_vec_d(es) : 1;
  const int outs = tiled_outputs_for(es, k_max, r.vec_kind);
  const int runs = outs / vd;
  std::int64_t ob = 0, od = 0;
  tiled_index::outer_offsets(r, t, ob, od);
  const long long stage_elems = static_cast<long long>(r.group) * r.tile_big;
  const long long small_at = static_cast<long long>(tiled_stages) * stage_elems * static_cast<long long>(es);
  const long long table_at = (small_at + static_cast<long long>(r.small_span) * static_cast<long long>(es) + 15) / 16 * 16;
  const int copies = tiled_reg_bytes / static_cast<int>(es * static_cast<std::size_t>(r.vec));
  const int vec_bytes = static_cast<int>(es) * r.vec;
  const int values_bytes = static_cast<int>(es) * k_max;
  const bool k_vector = r.k_dense != 0 && (values_bytes % 16 == 0 || values_bytes == 8);
  for (int w = 0; w < threads / 32; ++w) {
    // The asynchronous copies: global reads from Big, shared writes into the slab.
    for (int i = 0; i < copies; ++i) {
      std::vector<access> g, s;
      for (int lane = 0; lane < 32; ++lane) {
        const int tid = w * 32 + lane;
        const int j = (tid + i * threads) * r.vec;
        if (j >= r.tile_big) continue;
        g.push_back({(ob + tiled_index::big_offset(r, j)) * static_cast<long long>(es), vec_bytes});
        s.push_back({static_cast<long long>(j) * static_cast<long long>(es), vec_bytes});
      }
      add_global(m.loads, g);
      const long long wf = wavefronts(s);
      m.smem_wave += wf;
      m.smem_wave_copies += wf;
      if (!g.empty()) ++m.issue;
    }
    // The results.
    auto value_loads = [&](const std::vector<std::pair<int, int>>& lane_slot, std::vector<std::vector<access>>& instrs) {
      // lane_slot: (lane, slot) of the lanes loading a result's values this instruction round.
      if (k_vector) {
        const int pieces = values_bytes == 8 ? 1 : values_bytes / 16;
        const int piece = values_bytes == 8 ? 8 : 16;
        for (int c = 0; c < pieces; ++c) {
          std::vector<access> a;
          for (const auto& [lane, slot] : lane_slot) a.push_back({static_cast<long long>(slot) * static_cast<long long>(es) + c * piece, piece});
          instrs.push_back(a);
        }
      } else {
        for (int k = 0; k < r.k_count; ++k) {
          std::vector<access> a;
          for (const auto& [lane, slot] : lane_slot)
            a.push_back({(static_cast<long long>(slot) + (r.k_pack[k] & 0xFFFFU)) * static_cast<long long>(es), static_cast<int>(es)});
          instrs.push_back(a);
        }
      }
    };
    std::vector<std::vector<access>> instrs, table_instrs, store_instrs;
    long long fma_instr = 0;
    if (vector) {
      for (int j = 0; j < runs; ++j) {
        std::vector<std::pair<int, int>> active;
        std::vector<int> dof(32, -1), slotv(32, 0), rowv[4];
        for (int lane = 0; lane < 32; ++lane) {
          const int tid = w * 32 + lane;
          const int e0 = (tid + j * threads) * vd;
          if (e0 >= r.tile_d) continue;
          std::int32_t d_off = 0;
          std::uint32_t pack = 0;
          tiled_index::d_entry(r, e0, d_off, pack);
          dof[static_cast<std::size_t>(lane)] = d_off;
          slotv[static_cast<std::size_t>(lane)] = static_cast<int>(pack & 0xFFFFU);
          active.emplace_back(lane, static_cast<int>(pack & 0xFFFFU));
        }
        if (active.empty()) continue;
        if (r.vec_kind == tiled_run_coefs) {
          for (int k = 0; k < r.k_count; ++k) {
            std::vector<access> a;
            for (const auto& [lane, slot] : active)
              a.push_back({(static_cast<long long>(slot) + (r.k_pack[k] & 0xFFFFU)) * static_cast<long long>(es), 16});
            instrs.push_back(a);
          }
          fma_instr += static_cast<long long>(k_max) * vd * fma_per_term;
        } else {
          for (int u = 0; u < vd; ++u) {
            if (u == 0 || r.vec_slot[u] != r.vec_slot[u - 1]) {
              std::vector<std::pair<int, int>> ls;
              for (const auto& [lane, slot] : active) ls.emplace_back(lane, slot + r.vec_slot[u]);
              value_loads(ls, instrs);
            }
            if (r.vec_kind == tiled_run_table) {
              const int pieces = std::max(1, values_bytes / 16);
              for (int c = 0; c < pieces; ++c) {
                std::vector<access> a;
                for (const auto& [lane, slot] : active) {
                  const int tid = w * 32 + lane;
                  const int e0 = (tid + j * threads) * vd;
                  const long long row = static_cast<long long>(tiled_index::table_row(r, e0 + u)) * k_max;
                  a.push_back({table_at + row * static_cast<long long>(es) + c * 16, 16});
                }
                table_instrs.push_back(a);
              }
            }
            fma_instr += static_cast<long long>(k_max) * fma_per_term;
          }
        }
        std::vector<access> st;
        for (const auto& [lane, slot] : active) st.push_back({(od + dof[static_cast<std::size_t>(lane)]) * static_cast<long long>(es), 16});
        store_instrs.push_back(st);
      }
    } else {
      std::vector<int> prev_slot(32, -1);
      for (int i = 0; i < outs; ++i) {
        std::vector<std::pair<int, int>> active, loading;
        std::vector<access> st;
        for (int lane = 0; lane < 32; ++lane) {
          const int tid = w * 32 + lane;
          const int e = tid + i * threads;
          if (e >= r.tile_d) continue;
          std::int32_t d_off = 0;
          std::uint32_t pack = 0;
          tiled_index::d_entry(r, e, d_off, pack);
          const int slot = static_cast<int>(pack & 0xFFFFU);
          active.emplace_back(lane, slot);
          if (r.reuse == 0 || i == 0 || prev_slot[static_cast<std::size_t>(lane)] != slot) loading.emplace_back(lane, slot);
          prev_slot[static_cast<std::size_t>(lane)] = slot;
          st.push_back({(od + d_off) * static_cast<long long>(es), static_cast<int>(es)});
        }
        if (active.empty()) continue;
        if (!loading.empty()) value_loads(loading, instrs);
        fma_instr += static_cast<long long>(k_max) * fma_per_term;
        store_instrs.push_back(st);
      }
    }
    for (const auto& a : instrs) {
      if (a.empty()) continue;
      m.smem_wave += wavefronts(a);
      ++m.lds;
      ++m.issue;
    }
    for (const auto& a : table_instrs) {
      if (a.empty()) continue;
      const long long wf = wavefronts(a);
      m.smem_wave += wf;
      m.smem_wave_table += wf;
      ++m.lds;
      ++m.issue;
    }
    for (const auto& a : store_instrs) {
      if (a.empty()) continue;
      add_global(m.stores, a);
      ++m.issue;
    }
    m.fma += fma_instr;
    m.issue += fma_instr;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tiled_model FILE LAYOUT [STEP|-] [MIN_MB] [GBPS] [SMS] [GHZ]\n");
    return 2;
  }
  const probe::planned x = probe::plan_of(argv[1], argv[2]);
  const problem& p = x.p;
  const options& o = x.o;
  const std::string lay = argv[2];
  const int only = argc > 3 && std::string(argv[3]) != "-" ? std::atoi(argv[3]) : -1;
  const double min_mb = argc > 4 ? std::atof(argv[4]) : 30.0;
  const double gbps = argc > 5 ? std::atof(argv[5]) : 4253.0;
  const int sms = argc > 6 ? std::atoi(argv[6]) : 132;
  const double ghz = argc > 7 ? std::atof(argv[7]) : 1.98;
  const std::size_t es = size_of(p.type);
  const int fma_per_term = p.type == dtype::c64 || p.type == dtype::c128 ? 4 : 1;  // complex: 4 real FMAs a term
  const step_plan& pl = x.pl;
  std::printf("%s, layout %s, %s (%zu-byte elements); %.0f GB/s, %d SMs at %.2f GHz\n", argv[1], lay.c_str(), std::string(name_of(p.type)).c_str(), es, gbps,
              sms, ghz);
  for (std::size_t k = 0; k < pl.lowered.size(); ++k) {
    if (only >= 0 && static_cast<int>(k) != only) continue;
    const lowered_step& s = pl.lowered[k];
    tiled_record chosen;
    if (!describe_tiled_for(o, s, es, nullptr, nullptr, nullptr, chosen)) continue;
    double d_el = 1, a_el = 1, b_el = 1;
    for (auto e : s.d.extents) d_el *= static_cast<double>(e);
    for (auto e : s.a.extents) a_el *= static_cast<double>(e);
    for (auto e : s.b.extents) b_el *= static_cast<double>(e);
    const double bytes = (d_el + a_el + b_el) * static_cast<double>(es);
    if (bytes < min_mb * 1e6) continue;
    const double floor_us = bytes / (gbps * 1e3);
    std::printf("\nstep %zu (rule: %s): %.1f MB, floor %.2f us; %lld results, k_count %d\n", k, name_of(pl.kernel[k]), bytes / 1e6, floor_us,
                static_cast<long long>(d_el), chosen.k_count);
    std::printf("| plan | order | tile_big | tile_d | group | tiles | smem wavefronts/result (copies, table) | load sectors/ideal | store sectors/ideal | warp instr/result | smem us | L1 us | issue us | model us (x floor) |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::vector<tiled_record> plans{chosen};
    for (const tiled_record& x : tiled_alternatives(s, es, tiled_limits_of(o), chosen)) plans.push_back(x);
    for (std::size_t i = 0; i < plans.size(); ++i) {
      tiled_record r = plans[i];
      r.vec = r.vec_planned;  // Big's base aligned (as in a program's own buffers)
      r.vec_store = r.vec_kind != tiled_scalar ? 1 : 0;
      // Average over the first few tiles (their bases differ in alignment).
      const int tiles = static_cast<int>(std::min<std::int64_t>(r.tile_count, 4));
      tile_model sum;
      for (int t = 0; t < tiles; ++t) {
        const tile_model m = model_tile(r, es, fma_per_term, t);
        sum.smem_wave += m.smem_wave;
        sum.smem_wave_copies += m.smem_wave_copies;
        sum.smem_wave_table += m.smem_wave_table;
        sum.issue += m.issue;
        sum.fma += m.fma;
        sum.lds += m.lds;
        sum.loads.sectors += m.loads.sectors;
        sum.loads.bytes += m.loads.bytes;
        sum.stores.sectors += m.stores.sectors;
        sum.stores.bytes += m.stores.bytes;
      }
      const double results = static_cast<double>(r.tile_d) * tiles;
      const double total_results = d_el;
      const double scale = total_results / results;  // tiles of the whole step over those modelled
      const double clk = ghz * 1e3;                    // clocks per us
      const double smem_us = static_cast<double>(sum.smem_wave) * scale / sms / clk;
      const double l1_us = static_cast<double>(sum.loads.sectors + sum.stores.sectors) * scale / sms / 4.0 / clk;
      const double issue_us = static_cast<double>(sum.issue) * scale / sms / 4.0 / clk;
      const double model = std::max({floor_us, smem_us, l1_us, issue_us});
      std::printf("| %s%s | %s | %d | %d | %d | %lld | %.2f (%.2f, %.2f) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f (%.2f) |\n",
                  i == 0 ? "rule: " : "", kind_name(r), r.contracted_first != 0 ? "contracted-first" : r.d_first != 0 ? "d-first" : "big",
                  r.tile_big, r.tile_d, r.group, static_cast<long long>(r.tile_count), static_cast<double>(sum.smem_wave) / results,
                  static_cast<double>(sum.smem_wave_copies) / results, static_cast<double>(sum.smem_wave_table) / results,
                  static_cast<double>(sum.loads.sectors) / (static_cast<double>(sum.loads.bytes) / 32.0),
                  static_cast<double>(sum.stores.sectors) / (static_cast<double>(sum.stores.bytes) / 32.0), static_cast<double>(sum.issue) / results,
                  smem_us, l1_us, issue_us, model, model / floor_us);
    }
  }
  return 0;
}
