#include "cuda/sliced.hpp"

#include <algorithm>
#include <string>

#include "cuda/cuda_check.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

constexpr unsigned threads_per_block = 256;

int elem_kind_of(dtype t) {
  switch (t) {
    case dtype::f32: return 0;
    case dtype::f64: return 1;
    case dtype::c64: return 2;
    case dtype::c128: return 3;
  }
  return 0;
}

unsigned blocks_for(std::int64_t largest) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((largest + threads_per_block * 4 - 1) / (threads_per_block * 4), 1, 2048));
}

// Words of a move in the table (see slice_moves_kernels.hpp) for a rank and S sliced labels.
std::size_t move_words(std::size_t rank, std::size_t sliced) { return 5 + 3 * rank + sliced; }

}  // namespace

std::size_t sliced_program::table_bytes_for(const problem& p, std::size_t sliced) {
  const std::size_t n = p.net.inputs.size();
  std::size_t words = 2 + 2 * sliced + (n + 1) * 2 + 4;  // header, two input lists, two output lists
  for (const auto& in : p.net.inputs) words += move_words(in.size(), sliced);
  words += 2 * move_words(p.net.output.size(), sliced);
  return device::caching_pool::block_bytes(words * sizeof(std::int64_t));  // what its pool block takes
}

sliced_program::sliced_program(engine& eng, const problem& p, std::span<const label_t> labels, std::size_t result_bytes, std::size_t limit_bytes)
    : eng_(&eng), full_(p), layout_(layout_slices(p, labels)), elem_kind_(elem_kind_of(p.type)) {
  for (const slice_move& m : layout_.input_moves)
    if (m.extents.size() > static_cast<std::size_t>(slice_move_max_rank))
      throw not_supported("a sliced input has " + std::to_string(m.extents.size()) + " modes after merging; at most " +
                          std::to_string(slice_move_max_rank) + " are supported");
  if (layout_.output_zero.extents.size() > static_cast<std::size_t>(slice_move_max_rank))
    throw not_supported("the result has too many modes to slice");
  table_bytes_ = table_bytes_for(p, labels.size());
  prog_ = std::make_unique<compiled_program>(eng, slice_problem(p, labels), table_bytes_ + result_bytes, limit_bytes);
  table_ = device::pool_block(eng.pool(), table_bytes_, eng.stream_handle());
  const std::size_t s = labels.size();
  list_sliced_ = static_cast<std::int64_t>(2 + 2 * s);
  list_fixed_ = list_sliced_ + 1 + static_cast<std::int64_t>(layout_.sliced_inputs.size());
  list_out_ = list_fixed_ + 1 + static_cast<std::int64_t>(layout_.fixed_inputs.size());
  list_zero_ = list_out_ + 2;
  std::int64_t largest_sliced = 0, largest_fixed = 0;
  for (std::size_t i : layout_.sliced_inputs) largest_sliced = std::max(largest_sliced, layout_.input_moves[i].count);
  for (std::size_t i : layout_.fixed_inputs) largest_fixed = std::max(largest_fixed, layout_.input_moves[i].count);
  blocks_sliced_ = blocks_for(largest_sliced);
  blocks_fixed_ = blocks_for(largest_fixed);
  blocks_out_ = blocks_for(layout_.output_move.count);
  blocks_zero_ = blocks_for(layout_.output_zero.count);
  if (prog_->graph() != nullptr) {
    try {
      build_graph();
    } catch (const error&) {
      (void)cudaGetLastError();
      exec_.reset();  // slices are enqueued launch by launch instead
    }
  }
}

std::vector<std::int64_t> sliced_program::table_words(std::span<const void* const> inputs, std::span<const std::vector<std::int64_t>> input_strides,
                                                      void* out, std::span<const std::int64_t> out_strides) const {
  const bool row_major_everywhere =
      out_strides.empty() && std::all_of(input_strides.begin(), input_strides.end(), [](const auto& v) { return v.empty(); });
  const slice_layout strided = row_major_everywhere ? slice_layout{} : layout_slices(full_, layout_.labels, input_strides, out_strides);
  const slice_layout& l = row_major_everywhere ? layout_ : strided;
  const std::size_t s = l.labels.size();
  std::vector<std::int64_t> w;
  w.reserve(table_bytes_ / sizeof(std::int64_t));
  w.push_back(0);
  w.push_back(static_cast<std::int64_t>(s));
  w.insert(w.end(), l.radix.begin(), l.radix.end());
  w.insert(w.end(), l.extents.begin(), l.extents.end());
  // The lists, then the moves; list entries are filled as the moves are laid out.
  w.resize(static_cast<std::size_t>(list_zero_) + 2, 0);
  auto add_move = [&](const slice_move& m, const void* src, void* dst) {
    if (m.extents.size() > static_cast<std::size_t>(slice_move_max_rank))
      throw not_supported("a sliced contraction's operand has " + std::to_string(m.extents.size()) + " strided modes after merging; at most " +
                          std::to_string(slice_move_max_rank) + " are supported");
    const auto at = static_cast<std::int64_t>(w.size());
    w.push_back(m.count);
    w.push_back(static_cast<std::int64_t>(m.extents.size()));
    w.push_back(m.slices_src ? 1 : 0);
    w.push_back(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(src)));
    w.push_back(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(dst)));
    w.insert(w.end(), m.extents.begin(), m.extents.end());
    w.insert(w.end(), m.src_strides.begin(), m.src_strides.end());
    w.insert(w.end(), m.dst_strides.begin(), m.dst_strides.end());
    w.insert(w.end(), m.label_strides.begin(), m.label_strides.end());
    return at;
  };
  auto fill_list = [&](std::int64_t list, const std::vector<std::size_t>& which) {
    w[static_cast<std::size_t>(list)] = static_cast<std::int64_t>(which.size());
    for (std::size_t k = 0; k < which.size(); ++k) {
      const std::size_t i = which[k];
      w[static_cast<std::size_t>(list) + 1 + k] = add_move(l.input_moves[i], inputs[i], prog_->input(i));
    }
  };
  fill_list(list_sliced_, l.sliced_inputs);
  fill_list(list_fixed_, l.fixed_inputs);
  w[static_cast<std::size_t>(list_out_)] = 1;
  w[static_cast<std::size_t>(list_out_) + 1] = add_move(l.output_move, prog_->result(), out);
  w[static_cast<std::size_t>(list_zero_)] = 1;
  w[static_cast<std::size_t>(list_zero_) + 1] = add_move(l.output_zero, nullptr, out);
  if (w.size() * sizeof(std::int64_t) > table_bytes_) throw internal_error("sliced program: the table outgrew its block");
  return w;
}

// One slice: its inputs gathered, the steps, its result added, the counter advanced.
void sliced_program::build_graph() {
  cudaGraph_t raw = nullptr;
  TNRT_CUDA(cudaGraphCreate(&raw, 0));
  graph_owner g(raw);
  auto* table = static_cast<std::int64_t*>(table_.get());
  const slice_moves_launch gather{table, list_sliced_, static_cast<unsigned>(layout_.sliced_inputs.size()), blocks_sliced_, elem_kind_, move_mode::copy};
  cudaGraphNode_t n_gather = nullptr, n_steps = nullptr, n_add = nullptr, n_next = nullptr;
  TNRT_CUDA(add_slice_moves_node(g.get(), nullptr, 0, gather, &n_gather));
  TNRT_CUDA(cudaGraphAddChildGraphNode(&n_steps, g.get(), &n_gather, 1, prog_->graph()));
  const slice_moves_launch add{table, list_out_, 1, blocks_out_, elem_kind_, move_mode::add};
  TNRT_CUDA(add_slice_moves_node(g.get(), &n_steps, 1, add, &n_add));
  TNRT_CUDA(add_next_slice_node(g.get(), &n_add, 1, table, &n_next));
  cudaGraphExec_t exec = nullptr;
  TNRT_CUDA(cudaGraphInstantiate(&exec, g.get(), 0));
  exec_.reset(exec);
  graph_ = std::move(g);
}

void sliced_program::enqueue_slice(cudaStream_t stream) {
  if (exec_ != nullptr) {
    TNRT_CUDA(cudaGraphLaunch(exec_.get(), stream));
    return;
  }
  auto* table = static_cast<std::int64_t*>(table_.get());
  launch_slice_moves({table, list_sliced_, static_cast<unsigned>(layout_.sliced_inputs.size()), blocks_sliced_, elem_kind_, move_mode::copy}, stream);
  prog_->run(stream);
  launch_slice_moves({table, list_out_, 1, blocks_out_, elem_kind_, move_mode::add}, stream);
  launch_next_slice(table, stream);
}

void sliced_program::run(std::span<const void* const> inputs, std::span<const std::vector<std::int64_t>> input_strides, void* out,
                         std::span<const std::int64_t> out_strides, std::int64_t first, std::int64_t count, bool zero, cudaStream_t stream) {
  if (inputs.size() != full_.net.inputs.size()) throw internal_error("sliced program: wrong number of inputs");
  if (first < 0 || count < 0 || first > layout_.slices || count > layout_.slices - first)
    throw shape_error("slices [" + std::to_string(first) + ", " + std::to_string(first + count) + ") are not within the " +
                      std::to_string(layout_.slices) + " slices");
  std::vector<std::int64_t> w = table_words(inputs, input_strides, out, out_strides);
  w[0] = first;
  // Store what differs from the device's copy (all of it the first time), in launches of at most
  // store_words_per_launch words; the counter (word 0) every run.
  auto* table = static_cast<std::int64_t*>(table_.get());
  last_store_words_ = 0;
  std::size_t i = 0;
  while (i < w.size()) {
    if (i != 0 && i < stored_.size() && w[i] == stored_[i]) {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < w.size() && j - i < static_cast<std::size_t>(store_words_per_launch) && (j >= stored_.size() || w[j] != stored_[j] || j - i < 8)) ++j;
    launch_store_words(table + i, w.data() + i, static_cast<int>(j - i), stream);
    last_store_words_ += j - i;
    i = j;
  }
  stored_ = std::move(w);
  if (zero) launch_slice_moves({table, list_zero_, 1, blocks_zero_, elem_kind_, move_mode::zero}, stream);
  launch_slice_moves({table, list_fixed_, static_cast<unsigned>(layout_.fixed_inputs.size()), blocks_fixed_, elem_kind_, move_mode::copy}, stream);
  for (std::int64_t k = 0; k < count; ++k) enqueue_slice(stream);
  stored_[0] = first + count;  // what the counter holds once the slices ran
}

}  // namespace tnrt::cuda
