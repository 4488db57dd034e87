#include "cuda/eager.hpp"

#include "cuda/cuda_check.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {

std::vector<std::int64_t> result_strides(const engine& eng, const network& net, const step& s, bool last) {
  return dense_strides(net.shape_of(s.out), eng.opts().column_major_intermediates && !last);
}

device_operand contract_eager(engine& eng, const problem& p, std::span<void* const> inputs) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  if (inputs.size() != n) throw internal_error("contract_eager: " + std::to_string(inputs.size()) + " inputs for " + std::to_string(n) + " operands");
  const std::size_t elem = size_of(p.type);
  std::vector<device_operand> ops(n + p.tree.steps.size());
  for (std::size_t i = 0; i < n; ++i) {
    ops[i].ptr = inputs[i];
    ops[i].strides = row_major_strides(net.shape_of(net.inputs[i]));
  }
  auto labels_of = [&](int id) -> const std::vector<label_t>& {
    return static_cast<std::size_t>(id) < n ? net.inputs[static_cast<std::size_t>(id)] : p.tree.steps[static_cast<std::size_t>(id) - n].out;
  };
  device::caching_pool& pool = eng.pool();
  const device::stream_handle stream = eng.stream_handle();

  if (p.tree.steps.empty()) {  // the single input already is the result: hand back a copy
    const std::size_t bytes = static_cast<std::size_t>(element_count(net.shape_of(net.inputs[0]))) * elem;
    device_operand r{pool.allocate(bytes, stream), ops[0].strides, true};
    TNRT_CUDA(cudaMemcpyAsync(r.ptr, inputs[0], bytes, cudaMemcpyDeviceToDevice, eng.stream()));
    return r;
  }

  for (std::size_t k = 0; k < p.tree.steps.size(); ++k) {
    const step& s = p.tree.steps[k];
    const bool last = k + 1 == p.tree.steps.size();
    device_operand& a = ops[static_cast<std::size_t>(s.lhs)];
    device_operand* b = s.rhs >= 0 ? &ops[static_cast<std::size_t>(s.rhs)] : nullptr;
    device_operand& d = ops[n + k];
    d.strides = result_strides(eng, net, s, last);
    const labelled_layout la{&labels_of(s.lhs), a.strides};
    labelled_layout lb;
    if (b != nullptr) lb = labelled_layout{&labels_of(s.rhs), b->strides};
    const labelled_layout ld{&s.out, d.strides};
    const lowered_step low = lower_step(la, b != nullptr ? &lb : nullptr, ld, net.extents);
    const std::size_t bytes = static_cast<std::size_t>(element_count(net.shape_of(s.out))) * elem;
    d.ptr = pool.allocate(bytes, stream);
    d.owned = true;
    eng.execute(low, p.type, a.ptr, b != nullptr ? b->ptr : nullptr, d.ptr);
    // Stream-ordered frees: the pool hands these blocks only to later work on this stream.
    if (a.owned) pool.deallocate(a.ptr, stream);
    if (b != nullptr && b->owned) pool.deallocate(b->ptr, stream);
    a = {};
    if (b != nullptr) *b = {};
  }
  return std::move(ops.back());
}

}  // namespace tnrt::cuda
