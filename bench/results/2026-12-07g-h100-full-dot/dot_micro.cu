// Full dot kernel micro-benchmark (bench/results/2026-12-07g-h100-full-dot/run.sh builds it): the
// records of real networks' last steps (plan_steps under the layout their compiled programs chose),
// timed one launch at a time between two events (as the step profile does) and back to back (200
// launches between two events), for the previous kernel (old_full_dot.cu: git show
// 1fd4450:src/cuda/full_dot.cu, namespace renamed), this one (launch_full_dot), and the grouped
// kernel forced wherever a dot is tiled ("grp"). A probe, not part of the build.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include "tnrt/formats.hpp"
#include "tnrt/options.hpp"
#include "core/step_plan.hpp"
#include "core/full_dot.hpp"
#include "cuda/full_dot.cu"
#include "old_full_dot.cu"
using namespace tnrt;

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  struct net { const char* file; layout_policy lay; dtype t; };
  std::vector<net> nets = {
      {"bench/suites/families/regular3-n130.json", layout_policy::planned, dtype::f32},
      {"bench/suites/families/hyper-n90-r3-e3.json", layout_policy::planned, dtype::f32},
      {"bench/suites/families/peps-norm-5x5-D4.json", layout_policy::planned, dtype::f32},
      {"bench/suites/families/rqc-4x5-c14-amp.json", layout_policy::column_major, dtype::c64},
      {"bench/suites/families/rqc-5x6-c12-amp.json", layout_policy::planned, dtype::c64},
      {"bench/suites/families/regular3-n130.json", layout_policy::row_major, dtype::f32},
      {"bench/suites/families/regular3-n130.json", layout_policy::column_major, dtype::f32},
      {"bench/suites/families/regular3-n160.json", layout_policy::planned, dtype::f32},
      {"bench/suites/families/hyper-n100-r3-e4.json", layout_policy::planned, dtype::f32},
      {"bench/suites/families/rqc-5x5-c16-amp.json", layout_policy::planned, dtype::c64},
      {"bench/suites/families/qaoa-maxcut-n24-p4.json", layout_policy::planned, dtype::c64},
      {"bench/suites/families/lattice-10x10-d4.json", layout_policy::planned, dtype::f32},
      {"bench/suites/families/mps-overlap-n24-D256.json", layout_policy::planned, dtype::f32},
  };
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  const auto single = [&](auto&& launch) {  // median of 51 single launches between events
    std::vector<float> v;
    for (int k = 0; k < 51; ++k) {
      cudaEventRecord(e0, s);
      launch();
      cudaEventRecord(e1, s);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      v.push_back(ms * 1000);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const auto burst = [&](auto&& launch) {  // 200 launches back to back: us per launch
    launch();
    cudaEventRecord(e0, s);
    for (int k = 0; k < 200; ++k) launch();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return ms * 1000 / 200;
  };
  for (int k = 0; k < 20; ++k) { empty_kernel<<<1, 32, 0, s>>>(); }
  std::printf("empty kernel: single %.2f us, burst %.2f us\n", single([&] { empty_kernel<<<1, 32, 0, s>>>(); }),
              burst([&] { empty_kernel<<<1, 32, 0, s>>>(); }));
  std::printf("%-24s %5s %9s %5s %5s %6s %6s | %8s %8s | %8s %8s | %8s %8s | %s\n", "network", "type", "terms", "tile", "outer", "group", "blocks",
              "old 1", "old N", "new 1", "new N", "grp 1", "grp N", "results old/new");
  for (const net& n : nets) {
    load_options lo;
    problem p = load_file(n.file, lo);
    options o;
    o.intermediate_layout = n.lay;
    step_plan pl = plan_steps(p, o);
    full_dot_record r;
    if (!describe_full_dot(pl.lowered.back(), r) || r.tile_n == 0) { std::printf("%s: no tiled dot\n", n.file); continue; }
    const auto& l = pl.lowered.back();
    std::int64_t span_a = 1, span_b = 1;
    for (std::size_t i = 0; i < l.a.extents.size(); ++i) span_a += (l.a.extents[i] - 1) * l.a.strides[i];
    for (std::size_t i = 0; i < l.b.extents.size(); ++i) span_b += (l.b.extents[i] - 1) * l.b.strides[i];
    const std::size_t el = size_of(n.t);
    void *a, *b, *d, *scr_old, *scr_new;
    cudaMalloc(&a, span_a * el);
    cudaMalloc(&b, span_b * el);
    cudaMalloc(&d, 64);
    cudaMalloc(&scr_old, full_dot_scratch_bytes(el));
    cudaMalloc(&scr_new, full_dot_scratch_bytes(el));
    std::vector<float> h(std::max(span_a, span_b) * el / 4);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = 1.0f / (1 + i % 7);
    cudaMemcpy(a, h.data(), span_a * el, cudaMemcpyHostToDevice);
    cudaMemcpy(b, h.data(), span_b * el, cudaMemcpyHostToDevice);
    cuda::reset_full_dot_scratch(n.t, scr_new, s);
    cuda_old::reset_full_dot_scratch(n.t, scr_old, s);
    const full_dot_grid g = full_dot_grid_of(r, el);
    auto old_launch = [&] { cuda_old::launch_full_dot(n.t, r, a, b, d, scr_old, s); };
    auto new_launch = [&] { cuda::launch_full_dot(n.t, r, a, b, d, scr_new, s); };
    // the grouped kernel wherever tiled, with the group of full_dot_grid_of without its rounds threshold
    const std::int64_t want = (r.outer_count + full_dot_tile_blocks - 1) / full_dot_tile_blocks;
    const int gf = (int)std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(full_dot_group_bytes / el / r.tile_count, full_dot_max_group));
    const int gb = (int)std::min<std::int64_t>((r.outer_count + gf - 1) / gf, full_dot_tile_blocks);
    auto g1_launch = [&] {
      cuda::with_element_type(n.t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto* counter = reinterpret_cast<unsigned*>(static_cast<unsigned char*>(scr_new) + full_dot_max_blocks * el);
        cuda::full_dot_grouped_kernel<T><<<gb, full_dot_threads, 0, s>>>(r, gf, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(d),
                                                                        static_cast<T*>(scr_new), counter);
      });
    };
    double res[2] = {0, 0};
    old_launch();
    cudaMemcpyAsync(&res[0], d, 8, cudaMemcpyDeviceToHost, s);
    new_launch();
    cudaMemcpyAsync(&res[1], d, 8, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    const float o1 = single(old_launch), oN = burst(old_launch), n1 = single(new_launch), nN = burst(new_launch), g1 = single(g1_launch), gN = burst(g1_launch);
    const char* name = std::strrchr(n.file, '/') + 1;
    std::printf("%-24s %5s %9lld %5d %5lld %6d %6d | %8.2f %8.2f | %8.2f %8.2f | %8.2f %8.2f | %.6g %.6g\n", name, std::string(name_of(n.t)).c_str(), (long long)r.count,
                r.tile_count, (long long)r.outer_count, g.group, g.blocks, o1, oN, n1, nN, g1, gN, *reinterpret_cast<float*>(&res[0]),
                *reinterpret_cast<float*>(&res[1]));
    cudaFree(a); cudaFree(b); cudaFree(d); cudaFree(scr_old); cudaFree(scr_new);
  }
  const cudaError_t err = cudaDeviceSynchronize();
  std::printf("cuda: %s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
