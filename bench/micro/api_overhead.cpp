// Host time of the library API's calls on a real GPU (not a test: prints a table). For a network
// (default: the reference tree, f32, constant fill), the median over N calls of
//   - the bare graph launch of its compiled program (cuda::compiled_program::run, internal),
//   - program::run through the public API (validation, the gather of the inputs, the graph
//     launch, the copy of the result), with the same buffers every call and with two sets of
//     buffers in turn (new pointers every call: the io graph's nodes are updated), and
//   - eager context::contract of the same (repeated) problem,
// each call timed on the host alone (chrono around the call; the stream is synchronized outside
// the timed region, every 8 calls, so the queue never fills).
//   tnrt_api_overhead [network.json] [--calls N]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/compiled.hpp"
#include "cuda/engine.hpp"
#include "cuda/strided_copy.hpp"
#include "tnrt/context.hpp"
#include "tnrt/formats.hpp"

namespace {
using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "api_overhead: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(9);
  }
}

template <class F>
double host_us(int calls, cudaStream_t st, F&& f) {
  std::vector<double> us;
  for (int i = 0; i < calls + 10; ++i) {
    const auto t0 = clock_type::now();
    f();
    const auto t1 = clock_type::now();
    if (i >= 10) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (i % 8 == 7) check(cudaStreamSynchronize(st), "sync");
  }
  check(cudaStreamSynchronize(st), "sync");
  return median(us);
}
}  // namespace

int main(int argc, char** argv) {
  std::string path = "data/tensornetwork_permutation_optimized.json";
  int calls = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) {
      calls = std::atoi(argv[++i]);
    } else {
      path = a;
    }
  }
  try {
    if (auto why = tnrt::unavailable_reason(0); !why.empty()) {
      std::fprintf(stderr, "api_overhead: %s\n", why.c_str());
      return 9;
    }
    const tnrt::problem p = tnrt::load_file(path, {});
    cudaStream_t st = nullptr;
    check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
    std::vector<void*> bufs;
    std::vector<tnrt::tensor_view> views;
    std::vector<std::vector<std::int64_t>> shapes;
    for (const auto& in : p.net.inputs) shapes.push_back(p.net.shape_of(in));
    shapes.push_back(p.net.shape_of(p.net.output));
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const std::size_t bytes = static_cast<std::size_t>(tnrt::element_count(shapes[i])) * tnrt::size_of(p.type);
      void* d = nullptr;
      check(cudaMalloc(&d, bytes == 0 ? 1 : bytes), "cudaMalloc");
      check(cudaMemset(d, 0, bytes), "memset");
      bufs.push_back(d);
      tnrt::tensor_view v;
      v.data = d;
      v.type = p.type;
      v.shape = shapes[i];
      v.device = 0;
      views.push_back(v);
    }
    const tnrt::tensor_view out = views.back();
    views.pop_back();
    // A second set of buffers: runs that alternate between the two sets get new pointers every call.
    std::vector<tnrt::tensor_view> views2 = views;
    for (tnrt::tensor_view& v : views2) {
      const std::size_t bytes = static_cast<std::size_t>(tnrt::element_count(v.shape)) * tnrt::size_of(p.type);
      void* d = nullptr;
      check(cudaMalloc(&d, bytes == 0 ? 1 : bytes), "cudaMalloc");
      check(cudaMemset(d, 0, bytes), "memset");
      bufs.push_back(d);
      v.data = d;
    }
    tnrt::tensor_view out2 = out;
    {
      void* d = nullptr;
      check(cudaMalloc(&d, tnrt::element_count(out.shape) * tnrt::size_of(p.type) + 1), "cudaMalloc");
      bufs.push_back(d);
      out2.data = d;
    }

    double graph_us = 0, io_us = 0, io_new_us = 0, io_new_updates = 0, launches_us = 0, table_us = 0;
    {
      tnrt::cuda::engine eng(tnrt::options{});
      tnrt::cuda::compiled_program prog(eng, p);
      graph_us = host_us(calls, st, [&] { prog.run(st); });
      // the io graph, ordered by one event as cuda_program does
      cudaEvent_t done = nullptr, arrive = nullptr;
      check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "event");
      check(cudaEventCreateWithFlags(&arrive, cudaEventDisableTiming), "event");
      std::vector<const void*> srcs;
      for (std::size_t i = 0; i < p.net.inputs.size(); ++i) srcs.push_back(views[i].data);
      std::vector<const void*> srcs2;
      for (std::size_t i = 0; i < p.net.inputs.size(); ++i) srcs2.push_back(views2[i].data);
      if (prog.has_io_graph()) {
        io_us = host_us(calls, st, [&] {
          check(cudaStreamWaitEvent(st, done, 0), "wait");
          prog.launch_io(srcs, out.data, st);
          check(cudaEventRecord(done, st), "record");
        });
        int k = 0;
        const std::uint64_t before = prog.io_updates();
        io_new_us = host_us(calls, st, [&] {
          const bool b = (k++ % 2) != 0;
          check(cudaStreamWaitEvent(st, done, 0), "wait");
          prog.launch_io(b ? srcs2 : srcs, b ? out2.data : out.data, st);
          check(cudaEventRecord(done, st), "record");
        });
        io_new_updates = static_cast<double>(prog.io_updates() - before) / (calls + 10);
      }
      // copies by launches of their own, bridged to the engine's stream
      std::vector<tnrt::cuda::gather_entry> entries;
      cudaStream_t own = eng.stream();
      launches_us = host_us(calls, st, [&] {
        check(cudaEventRecord(arrive, st), "record");
        check(cudaStreamWaitEvent(own, arrive, 0), "wait");
        entries.clear();
        for (std::size_t i = 0; i < srcs.size(); ++i) entries.push_back({srcs[i], prog.input(i), prog.input_bytes(i)});
        tnrt::cuda::launch_gather(entries, own);
        prog.run(own);
        check(cudaMemcpyAsync(out.data, prog.result(), prog.result_bytes(), cudaMemcpyDeviceToDevice, own), "memcpy");
        check(cudaEventRecord(done, own), "record");
        check(cudaStreamWaitEvent(st, done, 0), "wait");
      });
      void* pinned = nullptr;
      void* table = nullptr;
      const std::size_t table_bytes = sizeof(void*) * (srcs.size() + 1);
      check(cudaMallocHost(&pinned, table_bytes), "cudaMallocHost");
      check(cudaMalloc(&table, table_bytes), "cudaMalloc");
      table_us = host_us(calls, st, [&] {
        std::memcpy(pinned, srcs.data(), sizeof(void*) * srcs.size());
        check(cudaMemcpyAsync(table, pinned, table_bytes, cudaMemcpyHostToDevice, st), "memcpy");
      });
      eng.synchronize();
      check(cudaStreamSynchronize(st), "sync");
      (void)cudaFreeHost(pinned);
      (void)cudaFree(table);
      (void)cudaEventDestroy(done);
      (void)cudaEventDestroy(arrive);
    }
    tnrt::context ctx;
    tnrt::program prog = ctx.compile(p);
    const double run_us = host_us(calls, st, [&] { prog.run(views, out, st); });
    int k = 0;
    const double run_new_us = host_us(calls, st, [&] {
      const bool b = (k++ % 2) != 0;
      prog.run(b ? views2 : views, b ? out2 : out, st);
    });
    const double eager_us = host_us(calls, st, [&] { ctx.contract(p, views, out, st); });
    std::printf("network %s: %zu inputs, %zu steps, %zu launches in the program (graph: %s)\n", path.c_str(), p.net.inputs.size(),
                p.tree.steps.size(), prog.launches(), prog.uses_graph() ? "yes" : "no");
    std::printf("host time per call, median of %d:\n", calls);
    std::printf("  graph launch alone (internal)      %8.2f us\n", graph_us);
    std::printf("  io graph, same pointers: launch + event wait/record (internal)  %8.2f us\n", io_us);
    std::printf("  io graph, new pointers every call: + node updates (internal)     %8.2f us  (%.2f updates a call)\n", io_new_us, io_new_updates);
    std::printf("  copies by launches: bridge + gather + graph + memcpy (internal)  %8.2f us\n", launches_us);
    std::printf("  pointer table upload from pinned memory (internal)               %8.2f us\n", table_us);
    std::printf("  program::run (public API), same pointers      %8.2f us  (%.2f us beyond the graph launch)\n", run_us, run_us - graph_us);
    std::printf("  program::run (public API), new pointers       %8.2f us  (%.2f us beyond the graph launch)\n", run_new_us, run_new_us - graph_us);
    std::printf("  context::contract, eager, repeated %8.2f us\n", eager_us);
    for (void* b : bufs) (void)cudaFree(b);
    (void)cudaStreamDestroy(st);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "api_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
