#include "tnrt/cuda/runner.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cuda/compiled.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/eager.hpp"
#include "cuda/engine.hpp"
#include "cuda/profiler.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {

std::string unavailable_reason() {
  if (auto why = device_unavailable_reason(0); !why.empty()) return why;
  return cutensor_unavailable_reason();
}

namespace {

using clock_type = std::chrono::steady_clock;

void check_inputs(const problem& p, std::span<const host_tensor> inputs) {
  if (inputs.size() != p.net.inputs.size())
    throw shape_error("got " + std::to_string(inputs.size()) + " inputs for a network of " + std::to_string(p.net.inputs.size()) + " operands");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].type() != p.type)
      throw dtype_error("input " + std::to_string(i) + " is " + std::string(name_of(inputs[i].type())) + " but the problem is " + std::string(name_of(p.type)));
    if (inputs[i].shape() != p.net.shape_of(p.net.inputs[i]))
      throw shape_error("input " + std::to_string(i) + " has the wrong shape for labels " + p.net.describe(p.net.inputs[i]));
  }
}

std::uint64_t host_syncs(engine& eng) {
  const auto c = eng.runtime().counts();
  return c.stream_syncs + c.event_syncs;
}

void fill_versions(run_result& r, const engine& eng, int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) r.device_name = prop.name;
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess) r.driver_version = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  if (cudaRuntimeGetVersion(&v) == cudaSuccess) r.cuda_version = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  const std::size_t cv = eng.api().version;
  r.cutensor_version = std::to_string(cv / 10000) + "." + std::to_string((cv / 100) % 100) + "." + std::to_string(cv % 100);
}

// Diagnostic (TNRT_STEP_PROFILE=FILE, compiled mode): one CSV row per launch with its bytes and time.
void write_step_profile(const char* path, const problem& p, compiled_program& prog) {
  const std::vector<float> ms = prog.profile_steps();
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) throw io_error(std::string("cannot write ") + path);
  std::fprintf(f, "op,step,lhs_rank,rhs_rank,out_rank,bytes,ms,gbps,kernel\n");
  const std::vector<std::string> kernels = prog.op_kernels();
  const auto labels = operand_labels(p.net, p.tree);
  const std::size_t n = p.net.inputs.size();
  auto elems = [&](int id) -> double { return id < 0 ? 0.0 : static_cast<double>(element_count(p.net.shape_of(labels[static_cast<std::size_t>(id)]))); };
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const int k = prog.op_steps()[i];
    if (k < 0) {
      std::fprintf(f, "%zu,%s,0,0,0,0,%.6f,0,%s\n", i, k == -1 ? "fused" : "copy", static_cast<double>(ms[i]), kernels[i].c_str());
      continue;
    }
    const step& s = p.tree.steps[static_cast<std::size_t>(k)];
    const double bytes = (elems(s.lhs) + elems(s.rhs) + elems(static_cast<int>(n) + k)) * static_cast<double>(size_of(p.type));
    const double t = ms[i];
    std::fprintf(f, "%zu,%d,%zu,%zu,%zu,%.0f,%.6f,%.1f,%s\n", i, k, labels[static_cast<std::size_t>(s.lhs)].size(),
                 s.rhs >= 0 ? labels[static_cast<std::size_t>(s.rhs)].size() : 0, s.out.size(), bytes, t, t > 0 ? bytes / (t * 1e6) : 0.0, kernels[i].c_str());
  }
  std::fclose(f);
}

}  // namespace

run_result run(const run_request& req) {
  if (req.prob == nullptr) throw internal_error("cuda::run: no problem");
  const problem& p = *req.prob;
  check_inputs(p, req.inputs);
  if (auto why = unavailable_reason(); !why.empty()) throw device_error(why);
  // Before the engine exists: CUPTI's start-up stays out of the timed runs, and kernels of a graph
  // built later are recorded however CUPTI treats graphs instantiated before it was enabled.
  std::unique_ptr<profiler> prof = req.profile ? std::make_unique<profiler>() : nullptr;
  auto progress = [&](const char* phase, std::size_t done, std::size_t total) {
    if (req.progress) req.progress(phase, done, total);
  };

  engine eng(req.opt);
  run_result out;
  fill_versions(out, eng, req.opt.device);
  const device::stream_handle stream = eng.stream_handle();
  const int total_runs = req.warmups + req.repeats;

  auto finish = [&](const void* result, std::size_t bytes) {
    host_tensor h(p.type, p.net.shape_of(p.net.output));
    if (h.bytes() != bytes) throw internal_error("result size mismatch");
    TNRT_CUDA(cudaMemcpyAsync(h.data(), result, bytes, cudaMemcpyDeviceToHost, eng.stream()));
    TNRT_CUDA(cudaStreamSynchronize(eng.stream()));
    out.result = std::move(h);
  };

  // After a call: wait for the device (the runner's own wait, which the profiler tells apart from
  // syncs inside the call) and close the profiled window of a timed run; the time the wait ended.
  auto wait_for_device = [&](bool timed) {
    {
      const profiler::own_syncs own(timed ? prof.get() : nullptr);
      TNRT_CUDA(cudaStreamSynchronize(eng.stream()));
    }
    const auto t = clock_type::now();
    if (prof && timed) prof->end_run();
    return t;
  };

  if (req.opt.mode == exec_mode::eager) {
    std::vector<void*> inputs(req.inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      inputs[i] = eng.pool().allocate(req.inputs[i].bytes(), stream);
      TNRT_CUDA(cudaMemcpyAsync(inputs[i], req.inputs[i].data(), req.inputs[i].bytes(), cudaMemcpyHostToDevice, eng.stream()));
      progress("upload", i + 1, inputs.size());
    }
    TNRT_CUDA(cudaStreamSynchronize(eng.stream()));
    device_operand last;
    for (int r = 0; r < total_runs; ++r) {
      if (last.ptr != nullptr) eng.pool().deallocate(last.ptr, stream);
      const bool timed = r >= req.warmups;
      if (prof && timed) prof->begin_run();
      const std::uint64_t syncs0 = host_syncs(eng);
      const auto t0 = clock_type::now();
      last = contract_eager(eng, p, inputs);
      const auto t_enqueued = clock_type::now();
      const std::uint64_t syncs1 = host_syncs(eng);
      const auto t1 = wait_for_device(timed);
      if (timed) {
        out.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        out.enqueue_ms.push_back(std::chrono::duration<double, std::milli>(t_enqueued - t0).count());
        out.syncs_inside_calls += syncs1 - syncs0;
      }
      progress(r < req.warmups ? "warmup" : "run", static_cast<std::size_t>(r + 1), static_cast<std::size_t>(total_runs));
    }
    if (prof) out.profile = prof->finish();  // before the result's download, which is no timed run
    const std::size_t result_bytes = static_cast<std::size_t>(element_count(p.net.shape_of(p.net.output))) * size_of(p.type);
    finish(last.ptr, result_bytes);
    out.peak_device_bytes = eng.pool().stats().high_water;
    eng.pool().deallocate(last.ptr, stream);
    for (void* in : inputs) eng.pool().deallocate(in, stream);
  } else {
    progress("compile", 0, 1);
    compiled_program prog(eng, p);
    out.compile_ms = prog.compile_ms();
    out.plan_lower_bound_bytes = prog.plan().lower_bound_bytes;
    out.plan_arena_bytes = prog.plan().arena_bytes;
    out.plan_tensor_bound_bytes = prog.tensor_bound_bytes();
    out.peak_device_bytes = prog.device_bytes();
    progress("compile", 1, 1);
    for (std::size_t i = 0; i < req.inputs.size(); ++i)
      TNRT_CUDA(cudaMemcpyAsync(prog.input(i), req.inputs[i].data(), req.inputs[i].bytes(), cudaMemcpyHostToDevice, eng.stream()));
    TNRT_CUDA(cudaStreamSynchronize(eng.stream()));
    for (int r = 0; r < total_runs; ++r) {
      const bool timed = r >= req.warmups;
      if (prof && timed) prof->begin_run();
      const std::uint64_t syncs0 = host_syncs(eng);
      const auto t0 = clock_type::now();
      prog.run();
      const std::uint64_t syncs1 = host_syncs(eng);
      const auto t1 = wait_for_device(timed);
      if (timed) {
        out.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        out.syncs_inside_calls += syncs1 - syncs0;
      }
      progress(r < req.warmups ? "warmup" : "run", static_cast<std::size_t>(r + 1), static_cast<std::size_t>(total_runs));
    }
    if (prof) out.profile = prof->finish();
    finish(prog.result(), prog.result_bytes());
    if (const char* path = std::getenv("TNRT_STEP_PROFILE"); path != nullptr && *path != '\0') write_step_profile(path, p, prog);
  }
  out.stats = eng.stats();
  return out;
}

}  // namespace tnrt::cuda
