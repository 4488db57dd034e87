#pragma once
// Eager's timed alternatives (its "route"): which library steps of a step plan may run as one
// cuBLAS GEMM, as they lie (lower_to_gemm) or after copies of their operands
// (lower_to_gemm_with_copies), and how; and which tiled steps may run on cuTENSOR instead of the
// tiled kernel. Eager has no compile to time them in, so it learns per network
// (src/cuda/eager.cpp): once its layout is settled, one warm call runs every candidate its other
// way, then two calls are timed step by step, one with the alternatives and one without, each
// candidate keeps the faster (by 3% and 2 us), and a call timed whole keeps those choices only when
// it beats the call without them by 3%. Compiled programs time the tiled kernel against cuTENSOR
// on every candidate; eager ran every tiled step the rule admits on the kernel, untimed, and on
// lm-sliding-d2 (row layout) four steps were tiled where compiled kept one (step 21: 8 x 64 x 2^20,
// 64 contracted combinations, on cuTENSOR in compiled).
// This file decides the candidates and prepares each route's pieces; it needs no GPU.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/gemm_lowering.hpp"
#include "core/step_plan.hpp"
#include "tnrt/options.hpp"

namespace tnrt {

/// One library step as cuBLAS would run it: `direct` when it is one GEMM as it lies, else `copies`
/// with the permutations that copy A and B into the GEMM's operands and D's copy back into place.
struct gemm_route {
  /// A tiled step (step_kernel::tiled in the plan) whose alternative is cuTENSOR's kernel (the
  /// step's lowered form through the engine): then direct and copies are empty.
  bool library = false;
  std::optional<gemm_form> direct;
  std::optional<gemm_with_copies> copies;
  /// With copies: copy_steps[i] for each copied operand i (0 A, 1 B, 2 D), a lowered reduction
  /// whose a is the source and d the destination (A and B: into their copies; D: out of its copy).
  lowered_step copy_steps[3];
  double multiply_adds = 0;

  /// Elements of each copy (0 when that operand is not copied).
  [[nodiscard]] std::int64_t copy_elements(int i) const noexcept {
    return copies && copies->copied[i] ? copies->elements[i] : 0;
  }
};

/// Eager's route rule. Under options::gemm_lowering `always` every library contraction step that
/// is one GEMM as it lies is routed, and under gemm_copies `always` every one that is one after
/// copies, untimed (tests). Under `automatic` a step is a timed candidate when its GEMM has at least
/// min_multiply_adds multiply-adds and, with copies, at least copies_min_intensity of them per
/// element the copies move (compiled's floor); at most max_candidates steps, the largest first.
struct gemm_route_rule {
  double min_multiply_adds = 1 << 20;
  double copies_min_intensity = 8;
  std::size_t max_candidates = 64;
};

/// What eager's route learning starts from: per step, its route (empty where none), and the
/// candidates in tree order. `learn` true: they are to be timed (`automatic`); false: every one of
/// them runs through cuBLAS from the first call (`always`).
struct gemm_routes {
  std::vector<std::optional<gemm_route>> route;  // per step
  std::vector<int> candidates;                   // step indices, ascending
  bool learn = false;
};

/// The routes of `plan`'s library steps (the plan of `p`) under `opt` (gemm_lowering, gemm_copies,
/// compute_precision) for element type `t`: no cuBLAS ones when gemm_lowering is `never`, or for
/// 3xTF32 on a single-precision type (cuBLAS has no twin of it), or when `blas_there` is false.
/// With tiled_kernel `automatic` and the routes timed (`learn`), every tiled step of the plan is a
/// candidate too (`library`): cuTENSOR against the tiled kernel.
gemm_routes plan_gemm_routes(const problem& p, const step_plan& plan, const options& opt, dtype t, bool blas_there,
                             const gemm_route_rule& rule = {});

}  // namespace tnrt
