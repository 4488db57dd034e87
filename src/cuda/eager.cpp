#include "cuda/eager.hpp"

#include <memory>

#include "core/fusion.hpp"
#include "core/step_plan.hpp"
#include "core/tiled.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/tiled.hpp"
#include "cuda/small_steps.hpp"
#include "cuda/strided_copy.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {

namespace {
device_operand contract_eager_impl(engine& eng, const problem& p, const eager_call& call, std::vector<device_operand>& ops);

// Eager's step plan (core/step_plan.hpp: every layout and lowered step, the fusion plan, each
// step's consumer and kernel, the tiled steps' records). Users contract the same network many
// times: the last few plans are kept per thread, found by a hash of their full structural key and
// reused only when that whole key is equal (a hash collision must never run another problem's
// strides), so a repeated call skips straight to allocating and launching (the host work was
// measured on the critical path: the GPU waited for it).
struct eager_analysis {
  std::uint64_t hash = 0;
  std::vector<std::int64_t> key;
  step_plan plan;
};

// Everything the plan depends on, flattened: the options that shape it, the type, extents,
// input labels, the tree and the input and output strides. Sizes precede each list, so two
// different structures never flatten alike.
void analysis_key(const engine& eng, const problem& p, const eager_call& call, std::vector<std::int64_t>& k) {
  k.clear();
  const options& o = eng.opts();
  auto add_all = [&k](const auto& v) {
    k.push_back(static_cast<std::int64_t>(v.size()));
    for (const auto& x : v) k.push_back(static_cast<std::int64_t>(x));
  };
  k.push_back(static_cast<std::int64_t>(p.type));
  k.push_back(static_cast<std::int64_t>(o.intermediate_layout));
  k.push_back(o.fuse_small_steps ? 1 : 0);
  k.push_back(o.fuse_max_elements);
  k.push_back(static_cast<std::int64_t>(o.tiled_kernel));
  k.push_back(o.tiled_min_elements);
  add_all(p.net.extents);
  k.push_back(static_cast<std::int64_t>(p.net.inputs.size()));
  for (const auto& in : p.net.inputs) add_all(in);
  k.push_back(static_cast<std::int64_t>(p.tree.steps.size()));
  for (const step& s : p.tree.steps) {
    k.push_back(s.lhs);
    k.push_back(s.rhs);
    add_all(s.out);
  }
  k.push_back(call.input_strides != nullptr ? 1 : 0);
  if (call.input_strides != nullptr)
    for (const auto& st : *call.input_strides) add_all(st);
  k.push_back(call.output_strides != nullptr ? 1 : 0);
  if (call.output_strides != nullptr) add_all(*call.output_strides);
}

std::uint64_t hash_of(const std::vector<std::int64_t>& key) noexcept {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the 64-bit words
  for (std::int64_t x : key) {
    h ^= static_cast<std::uint64_t>(x);
    h *= 1099511628211ULL;
  }
  return h;
}

constexpr std::size_t analyses_kept = 8;

const step_plan& analysis_of(engine& eng, const problem& p, const eager_call& call) {
  thread_local std::vector<std::unique_ptr<eager_analysis>> memo;  // most recently used first
  thread_local std::vector<std::int64_t> key;
  analysis_key(eng, p, call, key);
  const std::uint64_t h = hash_of(key);
  for (std::size_t i = 0; i < memo.size(); ++i) {
    if (memo[i]->hash != h || memo[i]->key != key) continue;
    if (i > 0) std::rotate(memo.begin(), memo.begin() + static_cast<std::ptrdiff_t>(i), memo.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    eng.count_analysis(true);
    return memo.front()->plan;
  }
  eng.count_analysis(false);
  auto a = std::make_unique<eager_analysis>();
  a->plan = plan_steps(p, eng.opts(), call.input_strides, call.output_strides);
  a->hash = h;
  a->key = key;
  if (memo.size() == analyses_kept) memo.pop_back();
  memo.insert(memo.begin(), std::move(a));
  return memo.front()->plan;
}
}  // namespace

// Exception safety: when a step fails (a cuTENSOR plan failure, out of memory), every intermediate
// already taken from the pool goes back to it, stream-ordered, before the error propagates.
device_operand contract_eager(engine& eng, const problem& p, const eager_call& call) {
  std::vector<device_operand> ops;
  try {
    return contract_eager_impl(eng, p, call, ops);
  } catch (...) {
    for (device_operand& o : ops)
      if (o.owned && o.ptr != nullptr) eng.pool().deallocate(o.ptr, call.stream);
    throw;
  }
}

device_operand contract_eager(engine& eng, const problem& p, std::span<void* const> inputs) {
  eager_call call;
  call.inputs = inputs;
  call.stream = eng.stream();
  return contract_eager(eng, p, call);
}

namespace {
device_operand contract_eager_impl(engine& eng, const problem& p, const eager_call& call, std::vector<device_operand>& ops) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  const std::span<void* const> inputs = call.inputs;
  if (inputs.size() != n) throw internal_error("contract_eager: " + std::to_string(inputs.size()) + " inputs for " + std::to_string(n) + " operands");
  const std::size_t elem = size_of(p.type);
  ops.assign(n + p.tree.steps.size(), device_operand{});
  for (std::size_t i = 0; i < n; ++i) ops[i].ptr = inputs[i];
  device::caching_pool& pool = eng.pool();
  cudaStream_t const cuda_stream = call.stream;
  const device::stream_handle stream = cuda_stream;
  // The final result: the caller's buffer, or a pool block handed to the caller.
  auto result_buffer = [&](std::size_t bytes) {
    return call.output != nullptr ? device_operand{call.output, false} : device_operand{pool.allocate(bytes, stream), true};
  };

  refuse_tensors_beyond_device(eng, p);
  const step_plan& plan = analysis_of(eng, p, call);
  if (plan.kernel.front() == step_kernel::copy) {  // the single input already is the result: hand back a copy
    const std::vector<std::int64_t> shape = net.shape_of(net.inputs[0]);
    const std::size_t bytes = static_cast<std::size_t>(element_count(shape)) * elem;
    device_operand r = result_buffer(bytes);
    ops[0] = r;  // owned from here on, so a failed copy gives it back
    launch_strided_copy(strided_copy_of(shape, plan.strides[0], inputs[0], call.output_strides != nullptr ? *call.output_strides : row_major_strides(shape),
                                        r.ptr, elem),
                        cuda_stream);
    ops[0] = {};
    return r;
  }

  const std::size_t steps = p.tree.steps.size();
  const std::vector<lowered_step>& lowered = plan.lowered;
  const fusion_plan& fusion = plan.fusion;
  auto bytes_of = [&](std::size_t k) { return static_cast<std::size_t>(element_count(net.shape_of(p.tree.steps[k].out))) * elem; };

  // Small subtrees: all of them first, in launches that carry their records as parameters.
  if (fusion.subtrees() > 0) {
    const std::vector<int>& consumer = plan.consumer;
    // Absorbed intermediates share one scratch block (no reuse inside: a few KiB each); roots get
    // pool buffers of their own, consumed later by library steps.
    std::vector<std::size_t> offset(steps, 0);
    std::size_t scratch_bytes = 0;
    for (int kk : fusion.absorbed) {
      const auto k = static_cast<std::size_t>(kk);
      const bool root = consumer[k] < 0 || fusion.is_absorbed[static_cast<std::size_t>(consumer[k])] == 0;
      if (root) {
        ops[n + k] = k + 1 == steps ? result_buffer(bytes_of(k)) : device_operand{pool.allocate(bytes_of(k), stream), true};
      } else {
        offset[k] = scratch_bytes;
        scratch_bytes += (bytes_of(k) + 255) / 256 * 256;
      }
    }
    void* scratch = scratch_bytes > 0 ? pool.allocate(scratch_bytes, stream) : nullptr;
    for (int kk : fusion.absorbed) {
      const auto k = static_cast<std::size_t>(kk);
      if (ops[n + k].ptr == nullptr) ops[n + k].ptr = static_cast<unsigned char*>(scratch) + offset[k];
    }
    std::vector<small_step_record> records(fusion.absorbed.size());
    for (std::size_t i = 0; i < fusion.absorbed.size(); ++i) {
      const auto k = static_cast<std::size_t>(fusion.absorbed[i]);
      const step& s = p.tree.steps[k];
      (void)describe_small_step(lowered[k], ops[static_cast<std::size_t>(s.lhs)].ptr, s.rhs >= 0 ? ops[static_cast<std::size_t>(s.rhs)].ptr : nullptr,
                                ops[n + k].ptr, records[i]);
    }
    try {
      launch_small_steps_from_host(p.type, records.data(), fusion.subtree_begin.data(), static_cast<int>(fusion.subtrees()), cuda_stream);
    } catch (...) {
      if (scratch != nullptr) pool.deallocate(scratch, stream);
      throw;
    }
    if (scratch != nullptr) pool.deallocate(scratch, stream);
  }

  // The library steps and the tiled kernel's, in tree order: the one switch over the plan's kinds
  // (eager has no time to measure, so it runs every tiled candidate with the tiled kernel).
  for (std::size_t k = 0; k < steps; ++k) {
    const step_kernel kind = plan.kernel[k];
    if (kind == step_kernel::fused) continue;  // ran above
    const step& s = p.tree.steps[k];
    device_operand& a = ops[static_cast<std::size_t>(s.lhs)];
    device_operand* b = s.rhs >= 0 ? &ops[static_cast<std::size_t>(s.rhs)] : nullptr;
    device_operand& d = ops[n + k];
    d = k + 1 == steps ? result_buffer(bytes_of(k)) : device_operand{pool.allocate(bytes_of(k), stream), true};
    switch (kind) {
      case step_kernel::tiled: {
        tiled_record tiled = plan.tiled[k];
        bind_tiled(tiled, a.ptr, b != nullptr ? b->ptr : nullptr, d.ptr);
        launch_tiled(p.type, tiled, cuda_stream);
        break;
      }
      case step_kernel::library:
        eng.execute(lowered[k], p.type, a.ptr, b != nullptr ? b->ptr : nullptr, d.ptr, cuda_stream);
        break;
      case step_kernel::fused:
      case step_kernel::copy:
        throw internal_error("contract_eager: step " + std::to_string(k) + " planned as " + name_of(kind));
    }
    // Stream-ordered frees: the pool hands these blocks only to later work on this stream.
    if (a.owned) pool.deallocate(a.ptr, stream);
    if (b != nullptr && b->owned) pool.deallocate(b->ptr, stream);
    a = {};
    if (b != nullptr) *b = {};
  }
  device_operand result = std::move(ops.back());
  ops.back() = {};
  return result;
}
}  // namespace

}  // namespace tnrt::cuda
