#include "cuda/compiled.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/eager.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {
namespace {
constexpr std::size_t arena_alignment = 256;
std::string gib(std::size_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", static_cast<double>(b) / static_cast<double>(1ULL << 30));
  return s;
}
}  // namespace

compiled_program::compiled_program(engine& eng, const problem& p) : eng_(&eng) {
  const auto t0 = std::chrono::steady_clock::now();
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  const std::size_t elem = size_of(p.type);

  // 1. Plans for every step, held by the program.
  struct lowered_op {
    std::shared_ptr<plan_entry> plan;
  };
  std::vector<std::vector<std::int64_t>> strides(n + p.tree.steps.size());
  for (std::size_t i = 0; i < n; ++i) strides[i] = row_major_strides(net.shape_of(net.inputs[i]));
  auto labels_of = [&](int id) -> const std::vector<label_t>& {
    return static_cast<std::size_t>(id) < n ? net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n].out;
  };
  std::vector<std::shared_ptr<plan_entry>> plans(p.tree.steps.size());
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const step& s = p.tree.steps[k];
    strides[n + k] = result_strides(eng, net, s, k + 1 == p.tree.steps.size());
    const labelled_layout la{&labels_of(s.lhs), strides[static_cast<std::size_t>(s.lhs)]};
    labelled_layout lb;
    if (s.rhs >= 0) lb = labelled_layout{&labels_of(s.rhs), strides[static_cast<std::size_t>(s.rhs)]};
    const labelled_layout ld{&s.out, strides[n + k]};
    plans[k] = eng.plan(lower_step(la, s.rhs >= 0 ? &lb : nullptr, ld, net.extents), p.type);
    workspace_bytes_ = std::max<std::size_t>(workspace_bytes_, plans[k]->workspace_bytes());
  }

  // 2. The static memory plan: intermediates in one arena; inputs in their own block so that the
  //    program can be replayed on the same inputs.
  const tree_buffers tb = tree_liveness(p, /*inputs_in_arena=*/false, arena_alignment);
  mplan_ = plan_memory(tb.requests, arena_alignment);
  input_bytes_.resize(n);
  std::vector<std::size_t> input_offsets(n);
  for (std::size_t i = 0; i < n; ++i) {
    input_bytes_[i] = static_cast<std::size_t>(element_count(net.shape_of(net.inputs[i]))) * elem;
    input_offsets[i] = inputs_total_;
    inputs_total_ += (input_bytes_[i] + arena_alignment - 1) / arena_alignment * arena_alignment;
  }
  if (p.tree.steps.empty()) {
    result_bytes_ = input_bytes_[0];
    mplan_.arena_bytes = std::max<std::size_t>(mplan_.arena_bytes, result_bytes_);
  }

  // 3. Admission: refuse before launching anything if it cannot fit.
  std::size_t free_bytes = 0, total_bytes = 0;
  if (eng.runtime().memory_info(&free_bytes, &total_bytes) == device::status::ok) {
    const auto cached = eng.pool().stats().bytes_cached;
    const std::size_t need = mplan_.arena_bytes + workspace_bytes_ + inputs_total_;
    if (need > free_bytes + cached)
      throw out_of_memory("the network needs " + gib(need) + " on the device (arena " + gib(mplan_.arena_bytes) + ", workspace " +
                          gib(workspace_bytes_) + ", inputs " + gib(inputs_total_) + ") but only " + gib(free_bytes + cached) +
                          " is free of " + gib(total_bytes));
  }
  const device::stream_handle stream = eng.stream_handle();
  input_block_ = eng.pool().allocate(inputs_total_, stream);
  try {
    arena_ = eng.pool().allocate(mplan_.arena_bytes, stream);
    workspace_ = workspace_bytes_ > 0 ? eng.pool().allocate(workspace_bytes_, stream) : nullptr;
  } catch (...) {
    if (arena_ != nullptr) eng.pool().deallocate(arena_, stream);
    eng.pool().deallocate(input_block_, stream);
    throw;
  }
  auto* ib = static_cast<unsigned char*>(input_block_);
  auto* ab = static_cast<unsigned char*>(arena_);
  for (std::size_t i = 0; i < n; ++i) inputs_.push_back(ib + input_offsets[i]);
  auto ptr_of = [&](int id) -> void* {
    if (static_cast<std::size_t>(id) < n) return inputs_[static_cast<std::size_t>(id)];
    const int r = tb.request_of_operand.at(static_cast<std::size_t>(id));
    return ab + mplan_.offsets.at(static_cast<std::size_t>(r));
  };
  if (p.tree.steps.empty()) {
    result_ = arena_;
    ops_.push_back(op{nullptr, inputs_[0], nullptr, arena_, result_bytes_});
  }
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const step& s = p.tree.steps[k];
    op o;
    o.plan = plans[k];
    o.a = ptr_of(s.lhs);
    o.b = s.rhs >= 0 ? ptr_of(s.rhs) : nullptr;
    o.d = ptr_of(static_cast<int>(n + k));
    ops_.push_back(std::move(o));
  }
  if (!p.tree.steps.empty()) {
    result_ = ops_.back().d;
    result_bytes_ = static_cast<std::size_t>(element_count(net.shape_of(p.tree.steps.back().out))) * elem;
  }

  // 4. Capture once, after every plan exists (no plan creation, allocation or event polling inside).
  if (eng.opts().use_graph) {
    cudaStream_t st = eng.stream();
    if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      (void)cudaGetLastError();
      graph_note_ = "capture could not begin; replaying on the stream";
    } else {
      bool enqueued = true;
      try {
        enqueue_all();
      } catch (const std::exception& e) {
        enqueued = false;
        graph_note_ = std::string("capture failed (") + e.what() + "); replaying on the stream";
      }
      cudaGraph_t g = nullptr;
      const cudaError_t end = cudaStreamEndCapture(st, &g);
      if (enqueued && end == cudaSuccess && g != nullptr && cudaGraphInstantiate(&exec_, g, 0) == cudaSuccess) {
        graph_ = g;
      } else {
        (void)cudaGetLastError();
        if (g != nullptr) (void)cudaGraphDestroy(g);
        exec_ = nullptr;
        if (graph_note_.empty()) graph_note_ = "graph capture failed; replaying on the stream";
      }
    }
  }
  compile_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

compiled_program::~compiled_program() {
  if (exec_ != nullptr) (void)cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) (void)cudaGraphDestroy(graph_);
  try {
    const device::stream_handle stream = eng_->stream_handle();
    if (workspace_ != nullptr) eng_->pool().deallocate(workspace_, stream);
    if (arena_ != nullptr) eng_->pool().deallocate(arena_, stream);
    if (input_block_ != nullptr) eng_->pool().deallocate(input_block_, stream);
  } catch (...) {
  }
}

void compiled_program::enqueue_all() {
  for (const op& o : ops_) {
    if (!o.plan) {
      TNRT_CUDA(cudaMemcpyAsync(o.d, o.a, o.bytes, cudaMemcpyDeviceToDevice, eng_->stream()));
      continue;
    }
    eng_->enqueue(*o.plan, o.a, o.b, o.d, workspace_, workspace_bytes_);
  }
}

std::vector<float> compiled_program::profile_steps() {
  std::vector<cudaEvent_t> ev(ops_.size() + 1, nullptr);
  std::vector<float> ms(ops_.size(), 0.0F);
  try {
    for (auto& e : ev) TNRT_CUDA(cudaEventCreate(&e));
    TNRT_CUDA(cudaEventRecord(ev[0], eng_->stream()));
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const op& o = ops_[i];
      if (!o.plan) {
        TNRT_CUDA(cudaMemcpyAsync(o.d, o.a, o.bytes, cudaMemcpyDeviceToDevice, eng_->stream()));
      } else {
        eng_->enqueue(*o.plan, o.a, o.b, o.d, workspace_, workspace_bytes_);
      }
      TNRT_CUDA(cudaEventRecord(ev[i + 1], eng_->stream()));
    }
    TNRT_CUDA(cudaEventSynchronize(ev.back()));
    for (std::size_t i = 0; i < ops_.size(); ++i) TNRT_CUDA(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
  } catch (...) {
    for (auto& e : ev)
      if (e != nullptr) (void)cudaEventDestroy(e);
    throw;
  }
  for (auto& e : ev) (void)cudaEventDestroy(e);
  return ms;
}

void compiled_program::run() {
  if (exec_ != nullptr) {
    TNRT_CUDA(cudaGraphLaunch(exec_, eng_->stream()));
    return;
  }
  enqueue_all();
}

}  // namespace tnrt::cuda
