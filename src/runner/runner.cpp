// The benchmark runner, a client of the library API (tnrt/context.hpp) like any program: the
// inputs live in device buffers of its own (cudaMalloc), on a stream of its own, and every call
// goes through context::contract or program::run.
#include "tnrt/cuda/runner.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/profiler.hpp"
#include "tnrt/context.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/search.hpp"

namespace tnrt::cuda {

std::string unavailable_reason() { return tnrt::unavailable_reason(0); }

namespace {

using clock_type = std::chrono::steady_clock;

std::uint64_t host_syncs(const context& ctx) {
  const counters c = ctx.stats();
  return c.syncs.stream_syncs + c.syncs.event_syncs;
}

// The caller's side of the API: device buffers and a stream owned by the runner.
struct device_buffer {
  void* ptr = nullptr;
  explicit device_buffer(std::size_t bytes) {
    const cudaError_t e = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw out_of_memory("cudaMalloc of " + std::to_string(bytes) + " bytes for the runner's inputs failed: " + cudaGetErrorString(e));
    }
  }
  ~device_buffer() {
    if (ptr != nullptr) (void)cudaFree(ptr);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

struct stream_owner {
  cudaStream_t s = nullptr;
  stream_owner() { TNRT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~stream_owner() {
    if (s != nullptr) (void)cudaStreamDestroy(s);
  }
  stream_owner(const stream_owner&) = delete;
  stream_owner& operator=(const stream_owner&) = delete;
};

// One CSV row per op of the compiled program (run_request::step_profile_path): its step, the
// operands' ranks, the bytes it reads and writes, its measured time, and for a binary or unary step its multiply-adds and GEMM shape (the
// product of the extents of the batch labels: in lhs, rhs and out; m: lhs and out only; n: rhs and
// out only; k: lhs and rhs, summed), with the search's cost model's time of it beside (model_ms), so
// that the model can be checked and calibrated per kind of step (bench/paths/calibrate.py).
void write_step_profile(const std::string& path, const problem& p, program& prog) {
  const std::vector<float> ms = prog.profile_ops();
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw io_error("cannot write " + path);
  std::fprintf(f, "op,step,lhs_rank,rhs_rank,out_rank,bytes,ms,gbps,kernel,multiply_adds,batch,m,n,k,model_ms\n");
  const std::vector<std::string> kernels = prog.op_kernels();
  const std::vector<int> op_steps = prog.op_steps();
  const auto labels = operand_labels(p.net, p.tree);
  const std::size_t n = p.net.inputs.size();
  const cost_model model = cost_model::for_dtype(p.type);
  auto elems = [&](int id) -> double { return id < 0 ? 0.0 : p.net.elements_of(labels[static_cast<std::size_t>(id)]); };
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const int k = op_steps[i];
    if (k < 0) {
      std::fprintf(f, "%zu,%s,0,0,0,0,%.6f,0,%s,0,0,0,0,0,0\n", i, k == -1 ? "fused" : "copy", static_cast<double>(ms[i]), kernels[i].c_str());
      continue;
    }
    const step& s = p.tree.steps[static_cast<std::size_t>(k)];
    const auto& a = labels[static_cast<std::size_t>(s.lhs)];
    static const std::vector<label_t> none;
    const auto& b = s.rhs >= 0 ? labels[static_cast<std::size_t>(s.rhs)] : none;
    auto has = [](const std::vector<label_t>& v, label_t l) { return std::find(v.begin(), v.end(), l) != v.end(); };
    std::vector<label_t> all = a;
    for (label_t l : b) all.push_back(l);
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    double madds = 1, batch = 1, gm = 1, gn = 1, gk = 1;
    for (label_t l : all) {
      const auto e = static_cast<double>(p.net.extents[static_cast<std::size_t>(l)]);
      madds *= e;
      const bool in_a = has(a, l), in_b = has(b, l), in_o = has(s.out, l);
      if (in_a && in_b) (in_o ? batch : gk) *= e;
      else if (in_o) (in_a ? gm : gn) *= e;
      else gk *= e;  // summed over one operand only (a trace)
    }
    const double lhs = elems(s.lhs), rhs = elems(s.rhs), out = elems(static_cast<int>(n) + k);
    const double bytes = (lhs + rhs + out) * static_cast<double>(size_of(p.type));
    const double t = ms[i];
    std::fprintf(f, "%zu,%d,%zu,%zu,%zu,%.0f,%.6f,%.1f,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.6f\n", i, k, a.size(), b.size(), s.out.size(), bytes, t,
                 t > 0 ? bytes / (t * 1e6) : 0.0, kernels[i].c_str(), madds, batch, gm, gn, gk,
                 model.step_seconds(madds, lhs, rhs, out) * 1e3);
  }
  std::fclose(f);
}

}  // namespace

run_result run(const run_request& req) {
  if (req.prob == nullptr) throw internal_error("cuda::run: no problem");
  const problem& p = *req.prob;
  check_host_inputs(p, req.inputs);
  if (auto why = unavailable_reason(); !why.empty()) throw device_error(why);
  // Before the context exists: CUPTI's start-up stays out of the timed runs, and kernels of a graph
  // built later are recorded however CUPTI treats graphs instantiated before it was enabled.
  std::unique_ptr<profiler> prof = req.profile ? std::make_unique<profiler>() : nullptr;
  auto progress = [&](const char* phase, std::size_t done, std::size_t total) {
    if (req.progress) req.progress(phase, done, total);
  };

  context ctx(req.opt);
  run_result out;
  out.device_name = ctx.device_name();
  out.driver_version = ctx.driver_version();
  out.cuda_version = ctx.cuda_version();
  out.cutensor_version = ctx.cutensor_version();
  const int total_runs = req.warmups + req.repeats;
  stream_owner stream;

  // The inputs in device buffers of the runner's own, uploaded before any timing.
  std::vector<std::unique_ptr<device_buffer>> inputs;
  std::vector<tensor_view> views;
  std::size_t input_bytes = 0;
  for (std::size_t i = 0; i < req.inputs.size(); ++i) {
    const host_tensor& t = req.inputs[i];
    inputs.push_back(std::make_unique<device_buffer>(t.bytes()));
    TNRT_CUDA(cudaMemcpyAsync(inputs.back()->ptr, t.data(), t.bytes(), cudaMemcpyHostToDevice, stream.s));
    tensor_view v = view_of(t);
    v.data = inputs.back()->ptr;
    v.device = req.opt.device;
    views.push_back(v);
    input_bytes += t.bytes();
    progress("upload", i + 1, req.inputs.size());
  }
  TNRT_CUDA(cudaStreamSynchronize(stream.s));
  host_tensor result(p.type, p.net.shape_of(p.net.output));

  // After a call: wait for the device (the runner's own wait, which the profiler tells apart from
  // syncs inside the call) and close the profiled window of a timed run; the time the wait ended.
  auto wait_for_device = [&](bool timed) {
    {
      const profiler::own_syncs own(timed ? prof.get() : nullptr);
      TNRT_CUDA(cudaStreamSynchronize(stream.s));
    }
    const auto t = clock_type::now();
    if (prof && timed) prof->end_run();
    return t;
  };

  auto timed_loop = [&](auto&& call) {
    for (int r = 0; r < total_runs; ++r) {
      const bool timed = r >= req.warmups;
      if (prof && timed) prof->begin_run();
      const std::uint64_t syncs0 = host_syncs(ctx);
      const auto t0 = clock_type::now();
      call();
      const auto t_enqueued = clock_type::now();
      const std::uint64_t syncs1 = host_syncs(ctx);
      const auto t1 = wait_for_device(timed);
      if (timed) {
        out.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        out.enqueue_ms.push_back(std::chrono::duration<double, std::milli>(t_enqueued - t0).count());
        out.syncs_inside_calls += syncs1 - syncs0;
      }
      progress(r < req.warmups ? "warmup" : "run", static_cast<std::size_t>(r + 1), static_cast<std::size_t>(total_runs));
    }
  };

  if (req.opt.mode == exec_mode::eager) {
    device_tensor last;
    timed_loop([&] { last = ctx.contract(p, views, stream.s); });
    if (prof) out.profile = prof->finish();  // before the result's download, which is no timed run
    result = last.to_host();
    out.peak_device_bytes = ctx.stats().pool.high_water + input_bytes;
  } else {
    progress("compile", 0, 1);
    program prog = ctx.compile(p);
    const memory_report m = prog.memory();
    out.compile_ms = prog.compile_ms();
    out.plan_lower_bound_bytes = m.lower_bound_bytes;
    out.plan_arena_bytes = m.arena_bytes;
    out.plan_tensor_bound_bytes = m.tensor_bound_bytes;
    for (const std::string& k : prog.op_kernels()) {
      auto it = std::find_if(out.kernel_counts.begin(), out.kernel_counts.end(), [&](const auto& e) { return e.first == k; });
      if (it == out.kernel_counts.end()) {
        out.kernel_counts.emplace_back(k, 1);
      } else {
        ++it->second;
      }
    }
    out.algos_changed = prog.algos_changed();
    out.kernel_ranks_chosen = prog.kernel_ranks_chosen();
    out.gemm_candidates = prog.gemm_candidates();
    out.gemm_chosen = prog.gemm_chosen();
    out.gemm_algos_chosen = prog.gemm_algos_chosen();
    out.gemm_dropped = prog.gemm_dropped();
    out.layout = prog.layout();
    out.layout_times = prog.layout_times();
    out.peak_device_bytes = m.total_bytes;
    progress("compile", 1, 1);
    device_buffer output(result.bytes());
    tensor_view ov = view_of(result);
    ov.data = output.ptr;
    ov.device = req.opt.device;
    std::vector<tensor_view> run_views = views;
    if (req.static_inputs) {  // written once into the program's own buffers: runs copy nothing in
      run_views = prog.input_views();
      for (std::size_t i = 0; i < run_views.size(); ++i)
        TNRT_CUDA(cudaMemcpyAsync(run_views[i].data, inputs[i]->ptr, req.inputs[i].bytes(), cudaMemcpyDeviceToDevice, stream.s));
    }
    timed_loop([&] { prog.run(run_views, ov, stream.s); });
    if (prof) out.profile = prof->finish();
    TNRT_CUDA(cudaMemcpyAsync(result.data(), output.ptr, result.bytes(), cudaMemcpyDeviceToHost, stream.s));
    TNRT_CUDA(cudaStreamSynchronize(stream.s));
    if (!req.step_profile_path.empty()) write_step_profile(req.step_profile_path, p, prog);
  }
  out.result = std::move(result);
  out.stats = ctx.stats();
  return out;
}

}  // namespace tnrt::cuda
