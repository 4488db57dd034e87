#pragma once
// The kernels of a sliced program (C++17: included by the .cu); src/cuda/sliced.hpp drives them.
//
// A sliced program keeps its moves (core/slicing's slice_move) in one device table of 64-bit words,
// read by every kernel, so the graph of one slice never changes: the slice it runs is the table's
// counter, which the last node of each slice advances.
//   [0] the slice counter, [1] S (sliced labels), [2, 2+S) their radix, [2+S, 2+2S) their extents;
//   a list at word L: [L] n, [L+1, L+1+n) the word offsets of its n moves;
//   a move at word M: [M] count, [M+1] rank, [M+2] 1 when the source's base moves with the slice
//   (else the destination's), [M+3] source pointer, [M+4] destination pointer, then extents[rank],
//   source strides[rank], destination strides[rank] and label strides[S] (in elements).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tnrt::cuda {

enum class move_mode : int { copy = 0, add = 1, zero = 2 };

inline constexpr int slice_move_max_rank = 32;
/// Words one store launch writes (its kernel parameters hold them: 16 KiB).
inline constexpr int store_words_per_launch = 2048;

/// Kernel arguments of one launch over a list of moves: blocks (x, y) with y the move.
struct slice_moves_launch {
  const std::int64_t* table = nullptr;
  std::int64_t list = 0;  // word offset of the list
  unsigned moves = 0;     // grid y: the list's length
  unsigned blocks_x = 1;  // grid x: enough for the largest move
  int elem_kind = 0;      // 0 f32, 1 f64, 2 c64, 3 c128 (the problem's dtype)
  move_mode mode = move_mode::copy;
};

void launch_slice_moves(const slice_moves_launch& l, cudaStream_t stream);
cudaError_t add_slice_moves_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t n_deps, const slice_moves_launch& l,
                                 cudaGraphNode_t* node);
/// table[0] += 1, one thread.
void launch_next_slice(std::int64_t* table, cudaStream_t stream);
cudaError_t add_next_slice_node(cudaGraph_t graph, const cudaGraphNode_t* deps, std::size_t n_deps, std::int64_t* table,
                                cudaGraphNode_t* node);
/// dst[i] += src[i] for i < count elements of the kind (dense buffers: partial results of slices
/// run at once).
void launch_add_dense(void* dst, const void* src, std::int64_t count, int elem_kind, cudaStream_t stream);
/// dst[i] = words[i] for i < n <= store_words_per_launch (the words travel in the launch's
/// parameters: nothing on the host needs to outlive the call).
void launch_store_words(std::int64_t* dst, const std::int64_t* words, int n, cudaStream_t stream);

}  // namespace tnrt::cuda
