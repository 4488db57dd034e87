#include "cuda/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "cuda/cuda_check.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {

std::string device_unavailable_reason(int device) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
  }
  if (count == 0) return "no CUDA device found";
  if (device < 0 || device >= count) return "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " found)";
  return {};
}

void require_device(int device) {
  if (auto why = device_unavailable_reason(device); !why.empty()) throw device_error(why);
}

std::size_t engine::device_total_bytes() {
  if (device_total_bytes_ == 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (runtime_->memory_info(&free_bytes, &total_bytes) == device::status::ok) device_total_bytes_ = total_bytes;
  }
  return device_total_bytes_;
}

// Eager calls it on every call: no driver call (the total is the engine's, asked once) and no
// allocation unless it refuses.
void refuse_tensors_beyond_device(engine& eng, const problem& p) {
  const double total = static_cast<double>(eng.device_total_bytes());
  if (total == 0) return;
  const network& net = p.net;
  const double elem = static_cast<double>(size_of(p.type));
  auto elements_of = [&](const std::vector<label_t>& labels) {
    double elements = 1;
    for (label_t l : labels) elements *= static_cast<double>(net.extents[static_cast<std::size_t>(l)]);
    return elements;
  };
  auto refuse = [&](const std::string& what, double elements) {
    std::size_t free_bytes = 0, total_bytes = 0;
    (void)eng.runtime().memory_info(&free_bytes, &total_bytes);
    char text[320];
    std::snprintf(text, sizeof text, "%s needs %.4g GiB (%.6g elements), more than the device's %.4g GiB in all (%.4g GiB free); slice it (tnrt contract --memory-limit / --slice, slice_request) or choose another path",
                  what.c_str(), elements * elem / 1073741824.0, elements, total / 1073741824.0, static_cast<double>(free_bytes) / 1073741824.0);
    throw out_of_memory(text);
  };
  for (std::size_t i = 0; i < net.inputs.size(); ++i)
    if (const double e = elements_of(net.inputs[i]); e * elem > total) refuse("input " + std::to_string(i), e);
  for (std::size_t k = 0; k < p.tree.steps.size(); ++k)
    if (const double e = elements_of(p.tree.steps[k].out); e * elem > total) refuse("the result of step " + std::to_string(k), e);
}

engine::engine(const options& opt) : opt_(opt), api_(&cutensor()) {
  require_device(opt.device);
  TNRT_CUDA(cudaSetDevice(opt.device));
  TNRT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    library_ = std::make_unique<cutensor_library>(*api_);
    runtime_ = std::make_unique<cuda_runtime>(opt.device);
    pool_ = std::make_unique<device::caching_pool>(*runtime_);
    device::caching_pool* pool = pool_.get();
    queue_ = std::make_unique<device::retirement_queue>(
        *runtime_, [pool](void* block) { pool->deallocate_unowned(block); }, opt.retirement_capacity, opt.retire);
    pool_->set_retirement_queue(queue_.get());
    workspace_ = std::make_unique<device::shared_workspace>(*pool_, *queue_, opt.workspace_cap);
    plans_ = std::make_unique<device::plan_cache>(*library_, opt.plan_cache_entries);
  } catch (...) {
    // The members already built go with the exception (plans_, then library_'s handle).
    (void)cudaStreamDestroy(stream_);
    throw;
  }
}

engine::~engine() {
  try {
    (void)cudaStreamSynchronize(stream_);
    if (plans_) {
      plans_->clear();
      plans_->destroy_evicted();
    }
    workspace_.reset();
    if (queue_) queue_->drain_all();
    if (pool_) pool_->set_retirement_queue(nullptr);
    queue_.reset();
    pool_.reset();
  } catch (...) {
    // Destructors never throw; what could not be released is leaked, never raced.
  }
  plans_.reset();
  library_.reset();
  blas_.reset();
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

std::uint32_t engine::alignment_of(const void* a, const void* b, const void* d) noexcept {
  std::uintptr_t bits = max_alignment;
  for (const void* ptr : {a, b, d})
    if (ptr != nullptr) bits |= reinterpret_cast<std::uintptr_t>(ptr);
  return static_cast<std::uint32_t>(bits & (~bits + 1));  // the lowest set bit
}

std::size_t engine::slot_of(cudaStream_t stream) {
  for (std::size_t i = 0; i < slot_streams_.size(); ++i)
    if (slot_streams_[i] == stream) return i;
  // Streams come and go (and a new one may reuse an old handle): past 256 the list starts over; a
  // slot that then moves to another stream retires its buffer there (shared_workspace's rule).
  if (slot_streams_.size() == 256) slot_streams_.clear();
  slot_streams_.push_back(stream);
  return slot_streams_.size() - 1;
}

std::shared_ptr<device::library_plan> engine::plan(const lowered_step& s, dtype t, std::uint32_t alignment) {
  return plans_->plan(s, t, {opt_.jit, opt_.autotune, opt_.algo, alignment, static_cast<std::uint8_t>(opt_.compute_precision)});
}

std::shared_ptr<device::library_plan> engine::plan_with_algo(const lowered_step& s, dtype t, int algo, int kernel_rank,
                                                             std::uint32_t alignment) {
  return plans_->plan(s, t, {opt_.jit, opt_.autotune, algo, alignment, static_cast<std::uint8_t>(opt_.compute_precision), kernel_rank});
}

std::shared_ptr<device::library_plan> engine::plan_jit(const lowered_step& s, dtype t, std::uint32_t alignment) {
  return plans_->plan(s, t, {true, opt_.autotune, -1, alignment, static_cast<std::uint8_t>(opt_.compute_precision)});
}

void engine::enqueue(const device::library_plan& p, const void* a, const void* b, void* d, void* workspace,
                     std::uint64_t workspace_bytes, cudaStream_t stream) {
  library_->enqueue(p, a, b, d, workspace, workspace_bytes, stream);
}

void engine::execute(const lowered_step& s, dtype t, const void* a, const void* b, void* d, cudaStream_t stream) {
  // Every element must be aligned to its type at least (cuTENSOR's minimum); the descriptors
  // promise the operands' common alignment, part of the plan's key.
  const std::uint32_t alignment = alignment_of(a, b, d);
  if (alignment < std::min<std::size_t>(size_of(t), 16))
    throw not_supported("operand pointer is not aligned to its element type (" + std::to_string(alignment) + "-byte aligned " +
                        std::string(name_of(t)) + ")");
  std::shared_ptr<device::library_plan> p = plan(s, t, alignment);
  const std::uint64_t need = p->workspace_bytes();
  const device::shared_workspace::lease lease = workspace_->acquire(slot_of(stream), need, stream);
  enqueue(*p, a, b, d, lease.ptr, lease.bytes, stream);
  workspace_->finish(lease, stream);
}

blas_handle* engine::blas() {
  if (blas_tried_) return blas_.get();
  blas_tried_ = true;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) current = opt_.device;
  try {
    TNRT_CUDA(cudaSetDevice(opt_.device));
    blas_ = std::make_unique<blas_handle>(opt_.compute_precision == precision::tf32);
  } catch (const error& e) {
    blas_note_ = e.what();
  }
  (void)cudaSetDevice(current);
  return blas_.get();
}

void engine::synchronize() {
  queue_->drain_all();
  if (runtime_->synchronize_stream(stream_) != device::status::ok)
    throw device_error("stream synchronize failed in engine::synchronize (evicted plans kept until a later synchronize succeeds)");
  plans_->destroy_evicted();
}

void engine::clear_caches() {
  plans_->clear();
  workspace_->clear();
  synchronize();
}

void engine::set_plan_cache_entries(std::size_t n) { plans_->set_capacity(n); }

counters engine::stats() const {
  counters c;
  c.plan_cache = plans_->stats();
  c.workspace = workspace_->stats();
  c.retirement = queue_->stats();
  c.pool = pool_->stats();
  const auto rc = runtime_->counts();
  c.syncs.stream_syncs = rc.stream_syncs;
  c.syncs.event_syncs = rc.event_syncs;
  c.api.analysis_hits = analysis_hits_;
  c.api.analysis_misses = analysis_misses_;
  c.api.eager_layout_trials = layout_trials_;
  c.api.eager_layouts_row = layouts_learned_[static_cast<std::size_t>(layout_policy::row_major)];
  c.api.eager_layouts_column = layouts_learned_[static_cast<std::size_t>(layout_policy::column_major)];
  c.api.eager_layouts_follow = layouts_learned_[static_cast<std::size_t>(layout_policy::follow)];
  c.api.eager_layouts_planned = layouts_learned_[static_cast<std::size_t>(layout_policy::planned)];
  c.api.eager_route_trials = route_trials_;
  c.api.eager_route_steps = route_steps_;
  c.api.eager_route_tiled = route_tiled_;
  c.api.eager_route_picked = route_picked_;
  c.api.eager_route_saving_us = route_saving_us_;
  c.api.eager_route_check_library_us = route_check_library_us_;
  c.api.eager_route_check_route_us = route_check_route_us_;
  return c;
}

}  // namespace tnrt::cuda
