#include "cuda/compiled.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/eager.hpp"
#include "cuda/skinny.hpp"
#include "cuda/tiled.hpp"
#include "cuda/small_steps.hpp"
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
  const std::size_t steps = p.tree.steps.size();
  const std::size_t elem = size_of(p.type);

  // 1. Layouts and lowered forms of every step (step ids are topological: operands first).
  std::vector<std::vector<std::int64_t>> strides = input_strides(p);
  std::vector<lowered_step> lowered(steps);
  for (std::size_t k = 0; k < steps; ++k) lowered[k] = lower_tree_step(eng, p, k, strides);

  // 2. Which small steps one fused launch absorbs; every absorbed step must fit a record.
  fusion_ = checked_fusion(fusion_of(eng, p), steps, lowered);
  // Large x small steps go to tnrt's tiled streaming kernel, or else (when chosen) to the skinny
  // kernel; neither needs a plan unless the choice is `automatic` (then both are timed below).
  enum : char { library = 0, skinny_kernel = 1, tiled_kernel = 2 };
  std::vector<char> own(steps, library);
  const auto skinny_choice = eng.opts().skinny_kernel;
  const auto tiled_choice = eng.opts().tiled_kernel;
  std::vector<tiled_record> tiled_plan(steps);  // planned once here, bound to the arena below
  for (int kk : fusion_.library_steps) {
    const auto k = static_cast<std::size_t>(kk);
    skinny_record sprobe;
    if (tiled_choice != options::choice::never && describe_tiled_for(eng, lowered[k], elem, nullptr, nullptr, nullptr, tiled_plan[k])) {
      own[k] = tiled_kernel;
    } else if (skinny_choice != options::choice::never && describe_skinny(lowered[k], elem, nullptr, nullptr, nullptr, sprobe, skinny_limits_of(eng))) {
      own[k] = skinny_kernel;
    }
  }
  std::vector<std::shared_ptr<plan_entry>> plans(steps);
  for (int k : fusion_.library_steps) {
    const char kind = own[static_cast<std::size_t>(k)];
    if ((kind == tiled_kernel && tiled_choice == options::choice::always) || (kind == skinny_kernel && skinny_choice == options::choice::always)) continue;
    plans[static_cast<std::size_t>(k)] = eng.plan(lowered[static_cast<std::size_t>(k)], p.type);
    workspace_bytes_ = std::max<std::size_t>(workspace_bytes_, plans[static_cast<std::size_t>(k)]->workspace_bytes());
  }

  // 3. The static memory plan. Schedule: the fused launch first (position 0) when there is one,
  //    then the library steps in tree order. Arena: library results and subtree roots, each live
  //    from its producer's position to its consumer's; absorbed intermediates live in a separate
  //    scratch laid out subtree by subtree. Inputs have their own block so that the program can be
  //    replayed on new data.
  const bool fused = fusion_.subtrees() > 0;
  std::vector<int> position(steps, -1);
  const std::vector<int> consumer = step_consumers(net, p.tree);
  int next_position = fused ? 1 : 0;
  for (int k : fusion_.library_steps) position[static_cast<std::size_t>(k)] = next_position++;
  for (int k : fusion_.absorbed) position[static_cast<std::size_t>(k)] = 0;
  const int end_position = next_position;
  std::vector<buffer_request> requests;
  std::vector<int> request_of_step(steps, -1);
  auto result_bytes_of = [&](std::size_t k) {
    return (static_cast<std::size_t>(element_count(net.shape_of(p.tree.steps[k].out))) * elem + arena_alignment - 1) / arena_alignment * arena_alignment;
  };
  for (std::size_t k = 0; k < steps; ++k) {
    const bool root = fusion_.is_absorbed[k] != 0 && (consumer[k] < 0 || fusion_.is_absorbed[static_cast<std::size_t>(consumer[k])] == 0);
    if (fusion_.is_absorbed[k] != 0 && !root) continue;
    const int last = consumer[k] < 0 ? end_position : position[static_cast<std::size_t>(consumer[k])];
    request_of_step[k] = static_cast<int>(requests.size());
    requests.push_back(buffer_request{result_bytes_of(k), position[k], last});
  }
  // Each library step's cuTENSOR workspace is one more buffer of the plan, live at its step only:
  // it takes arena bytes that are free at that step instead of a block of its own.
  const std::size_t tensor_requests = requests.size();
  std::vector<int> workspace_request(steps, -1);
  for (int kk : fusion_.library_steps) {
    const auto k = static_cast<std::size_t>(kk);
    if (!plans[k] || plans[k]->workspace_bytes() == 0) continue;
    workspace_request[k] = static_cast<int>(requests.size());
    const auto ws = static_cast<std::size_t>(plans[k]->workspace_bytes());
    requests.push_back(buffer_request{(ws + arena_alignment - 1) / arena_alignment * arena_alignment, position[k], position[k]});
  }
  mplan_ = plan_memory(requests, arena_alignment);
  tensor_bound_bytes_ = live_bytes_bound(std::span<const buffer_request>(requests).first(tensor_requests));
  // Scratch for absorbed intermediates: per subtree, a plan over the subtree's own step order.
  std::vector<std::size_t> scratch_offset(steps, 0);
  std::size_t scratch_bytes = 0;
  for (std::size_t t = 0; t < fusion_.subtrees(); ++t) {
    const auto b = static_cast<std::size_t>(fusion_.subtree_begin[t]), e = static_cast<std::size_t>(fusion_.subtree_begin[t + 1]);
    std::vector<buffer_request> local;
    std::vector<int> local_step;
    for (std::size_t i = b; i + 1 < e; ++i) {  // the root (last) goes to the arena
      const auto k = static_cast<std::size_t>(fusion_.absorbed[i]);
      const auto c = std::find(fusion_.absorbed.begin() + static_cast<std::ptrdiff_t>(b), fusion_.absorbed.begin() + static_cast<std::ptrdiff_t>(e), consumer[k]);
      local.push_back(buffer_request{result_bytes_of(k), static_cast<int>(i - b), static_cast<int>(c - fusion_.absorbed.begin()) - static_cast<int>(b)});
      local_step.push_back(static_cast<int>(k));
    }
    const memory_plan lp = plan_memory(local, arena_alignment);
    for (std::size_t j = 0; j < local.size(); ++j) scratch_offset[static_cast<std::size_t>(local_step[j])] = scratch_bytes + lp.offsets[j];
    scratch_bytes += lp.arena_bytes;
  }
  scratch_bytes_ = scratch_bytes;
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
    const std::size_t need = mplan_.arena_bytes + inputs_total_ + scratch_bytes_;
    if (need > free_bytes + cached)
      throw out_of_memory("the network needs " + gib(need) + " on the device (arena with workspaces " + gib(mplan_.arena_bytes) + ", inputs " +
                          gib(inputs_total_) + ", scratch " + gib(scratch_bytes_) + ") but only " + gib(free_bytes + cached) +
                          " is free of " + gib(total_bytes));
  }
  const device::stream_handle stream = eng.stream_handle();
  input_block_ = eng.pool().allocate(inputs_total_, stream);
  try {
    arena_ = eng.pool().allocate(mplan_.arena_bytes, stream);
    scratch_ = scratch_bytes_ > 0 ? eng.pool().allocate(scratch_bytes_, stream) : nullptr;
  } catch (...) {
    release_buffers();
    throw;
  }
  auto* ib = static_cast<unsigned char*>(input_block_);
  auto* ab = static_cast<unsigned char*>(arena_);
  auto* sb = static_cast<unsigned char*>(scratch_);
  for (std::size_t i = 0; i < n; ++i) inputs_.push_back(ib + input_offsets[i]);
  auto ptr_of = [&](int id) -> void* {
    if (static_cast<std::size_t>(id) < n) return inputs_[static_cast<std::size_t>(id)];
    const auto k = static_cast<std::size_t>(id) - n;
    if (request_of_step[k] >= 0) return ab + mplan_.offsets.at(static_cast<std::size_t>(request_of_step[k]));
    return sb + scratch_offset[k];
  };
  if (p.tree.steps.empty()) {
    result_ = arena_;
    op copy;
    copy.a = inputs_[0];
    copy.d = arena_;
    copy.bytes = result_bytes_;
    ops_.push_back(std::move(copy));
    op_steps_.push_back(-2);
  }
  if (fused) {
    std::vector<small_step_record> records(fusion_.absorbed.size());
    for (std::size_t i = 0; i < fusion_.absorbed.size(); ++i) {
      const auto k = static_cast<std::size_t>(fusion_.absorbed[i]);
      const step& s = p.tree.steps[k];
      if (!describe_small_step(lowered[k], ptr_of(s.lhs), s.rhs >= 0 ? ptr_of(s.rhs) : nullptr, ptr_of(static_cast<int>(n + k)), records[i]))
        throw internal_error("compiled_program: an absorbed step no longer fits a record");
    }
    const std::size_t rec_bytes = records.size() * sizeof(small_step_record);
    const std::size_t begin_bytes = fusion_.subtree_begin.size() * sizeof(int);
    table_bytes_ = rec_bytes + begin_bytes;
    table_ = eng.pool().allocate(table_bytes_, stream);
    TNRT_CUDA(cudaMemcpyAsync(table_, records.data(), rec_bytes, cudaMemcpyHostToDevice, eng.stream()));
    TNRT_CUDA(cudaMemcpyAsync(static_cast<unsigned char*>(table_) + rec_bytes, fusion_.subtree_begin.data(), begin_bytes, cudaMemcpyHostToDevice, eng.stream()));
    TNRT_CUDA(cudaStreamSynchronize(eng.stream()));  // compile time, not run time: the host vectors die here
    op o;
    o.fused_records = static_cast<const small_step_record*>(table_);
    o.fused_begin = reinterpret_cast<const int*>(static_cast<unsigned char*>(table_) + rec_bytes);
    o.fused_subtrees = static_cast<int>(fusion_.subtrees());
    ops_.push_back(o);
    op_steps_.push_back(-1);
  }
  for (int kk : fusion_.library_steps) {
    const auto k = static_cast<std::size_t>(kk);
    const step& s = p.tree.steps[k];
    op o;
    o.plan = plans[k];
    if (workspace_request[k] >= 0) {
      o.workspace = ab + mplan_.offsets.at(static_cast<std::size_t>(workspace_request[k]));
      o.workspace_bytes = plans[k]->workspace_bytes();
    }
    o.a = ptr_of(s.lhs);
    o.b = s.rhs >= 0 ? ptr_of(s.rhs) : nullptr;
    o.d = ptr_of(static_cast<int>(n + k));
    if (own[k] == skinny_kernel) {
      if (!describe_skinny(lowered[k], elem, o.a, o.b, o.d, o.skinny_rec, skinny_limits_of(eng))) throw internal_error("compiled_program: a skinny step no longer fits its record");
      o.skinny = true;
    } else if (own[k] == tiled_kernel) {
      o.tiled_rec = tiled_plan[k];
      bind_tiled(o.tiled_rec, o.a, o.b, o.d);
      o.tiled = true;
      if (tiled_choice == options::choice::automatic) {  // the other plans, timed too
        o.tiled_alts = tiled_alternatives(lowered[k], elem, tiled_limits_of(eng), o.tiled_rec);
        for (tiled_record& alt : o.tiled_alts) bind_tiled(alt, o.a, o.b, o.d);
      }
      if (tiled_choice == options::choice::always) ++tiled_chosen_;
    }
    ops_.push_back(std::move(o));
    op_steps_.push_back(kk);
  }
  type_ = p.type;  // before the timing below: the launches dispatch on it
  if (skinny_choice == options::choice::automatic || tiled_choice == options::choice::automatic) choose_kernels_by_timing();
  if (!p.tree.steps.empty()) {
    result_ = ptr_of(static_cast<int>(n + steps - 1));
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
  release_buffers();
}

void compiled_program::release_buffers() noexcept {
  try {
    const device::stream_handle stream = eng_->stream_handle();
    for (void** b : {&table_, &scratch_, &arena_, &input_block_}) {
      if (*b != nullptr) eng_->pool().deallocate(*b, stream);
      *b = nullptr;
    }
  } catch (...) {
    // never throw from cleanup; a block the pool refuses stays allocated (leak, never race)
  }
}

// Times each step that tnrt's own kernels can take both ways, on the program's own buffers (their
// contents do not matter to the speed), and keeps the faster. Compile time only: it synchronizes.
void compiled_program::choose_kernels_by_timing() {
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  TNRT_CUDA(cudaEventCreate(&e0));
  TNRT_CUDA(cudaEventCreate(&e1));
  auto time_op = [&](const op& o) {
    float best = 1e30F;
    for (int rep = 0; rep < 3; ++rep) {  // the first run warms caches and loads the module
      TNRT_CUDA(cudaEventRecord(e0, eng_->stream()));
      enqueue_op(o);
      TNRT_CUDA(cudaEventRecord(e1, eng_->stream()));
      TNRT_CUDA(cudaEventSynchronize(e1));
      float ms = 0;
      TNRT_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      if (rep > 0) best = std::min(best, ms);
    }
    return best;
  };
  try {
    for (op& o : ops_) {
      if ((!o.skinny && !o.tiled) || !o.plan) continue;
      const bool was_skinny = o.skinny, was_tiled = o.tiled;
      float with_kernel = time_op(o);
      if (o.tiled) {
        for (tiled_record& alt : o.tiled_alts) {
          std::swap(o.tiled_rec, alt);
          const float with_alt = time_op(o);
          if (with_alt < with_kernel) {
            with_kernel = with_alt;
          } else {
            std::swap(o.tiled_rec, alt);
          }
        }
      }
      o.skinny = o.tiled = false;
      const float with_library = time_op(o);
      const bool keep = with_kernel < with_library;
      o.skinny = was_skinny && keep;
      o.tiled = was_tiled && keep;
      if (was_tiled) {
        (keep ? tiled_chosen_ : tiled_rejected_) += 1;
      } else {
        (keep ? skinny_chosen_ : skinny_rejected_) += 1;
      }
    }
  } catch (...) {
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    throw;
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
}

void compiled_program::enqueue_op(const op& o) {
  if (o.fused_records != nullptr) {
    launch_small_steps(type_, o.fused_records, o.fused_begin, o.fused_subtrees, eng_->stream());
  } else if (o.tiled) {
    launch_tiled(type_, o.tiled_rec, eng_->stream());
  } else if (o.skinny) {
    launch_skinny(type_, o.skinny_rec, eng_->stream());
  } else if (!o.plan) {
    TNRT_CUDA(cudaMemcpyAsync(o.d, o.a, o.bytes, cudaMemcpyDeviceToDevice, eng_->stream()));
  } else {
    eng_->enqueue(*o.plan, o.a, o.b, o.d, o.workspace, o.workspace_bytes);
  }
}

void compiled_program::enqueue_all() {
  for (const op& o : ops_) enqueue_op(o);
}

std::vector<std::string> compiled_program::op_kernels() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const op& o : ops_) {
    if (o.fused_records != nullptr) {
      out.emplace_back("fused");
    } else if (o.tiled) {
      const tiled_record& r = o.tiled_rec;
      std::string s = r.contracted_first != 0 ? "tiled k-first" : r.d_first != 0 ? "tiled d-first" : "tiled";
      s += r.vec_kind == tiled_run_values ? " runs-values" : r.vec_kind == tiled_run_coefs ? " runs-coefs" : r.reuse != 0 ? " reuse" : "";
      out.push_back(s);
    } else if (o.skinny) {
      out.emplace_back("skinny");
    } else {
      out.emplace_back(o.plan ? "library" : "copy");
    }
  }
  return out;
}

std::vector<float> compiled_program::profile_steps() {
  std::vector<cudaEvent_t> ev(ops_.size() + 1, nullptr);
  std::vector<float> ms(ops_.size(), 0.0F);
  try {
    for (auto& e : ev) TNRT_CUDA(cudaEventCreate(&e));
    TNRT_CUDA(cudaEventRecord(ev[0], eng_->stream()));
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      enqueue_op(ops_[i]);
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
