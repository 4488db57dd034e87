#include "cuda/engine.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/cuda_check.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cuda {
namespace {

cudaDataType_t data_type(dtype t) noexcept {
  switch (t) {
    case dtype::f32: return CUDA_R_32F;
    case dtype::f64: return CUDA_R_64F;
    case dtype::c64: return CUDA_C_32F;
    case dtype::c128: break;
  }
  return CUDA_C_64F;
}

// cuTENSOR reads alpha/beta in the operation's scalar type; a complex 1 starts with a real 1, so
// one 16-byte buffer serves every type.
struct scalar_one {
  alignas(16) unsigned char bytes[16] = {};
  explicit scalar_one(dtype t) noexcept {
    if (is_double(t)) {
      const double one = 1.0;
      std::memcpy(bytes, &one, sizeof one);
    } else {
      const float one = 1.0F;
      std::memcpy(bytes, &one, sizeof one);
    }
  }
};

cutensorTensorDescriptor_t make_descriptor(const cutensor_api& api, cutensorHandle_t h, const strided_operand& o, dtype t,
                                           std::uint32_t alignment) {
  cutensorTensorDescriptor_t d = nullptr;
  TNRT_CUTENSOR(api.cutensorCreateTensorDescriptor(h, &d, static_cast<std::uint32_t>(o.modes.size()), o.extents.data(),
                                                   o.strides.data(), data_type(t), alignment));
  return d;
}

}  // namespace

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

plan_entry::plan_entry(const cutensor_api& api, cutensorHandle_t handle, const lowered_step& s, dtype t, bool jit, bool autotune, int algo,
                       std::uint32_t alignment)
    : api_(&api), kind_(s.kind), type_(t) {
  try {
    const cutensorComputeDescriptor_t compute = is_double(t) ? api.compute_64f : api.compute_32f;
    desc_a_ = make_descriptor(api, handle, s.a, t, alignment);
    desc_d_ = make_descriptor(api, handle, s.d, t, alignment);
    if (s.kind == lowered_kind::contraction) {
      desc_b_ = make_descriptor(api, handle, s.b, t, alignment);
      // C and D are the same buffer with beta = 0, so C is never read.
      TNRT_CUTENSOR(api.cutensorCreateContraction(handle, &op_, desc_a_, s.a.modes.data(), CUTENSOR_OP_IDENTITY, desc_b_,
                                                  s.b.modes.data(), CUTENSOR_OP_IDENTITY, desc_d_, s.d.modes.data(),
                                                  CUTENSOR_OP_IDENTITY, desc_d_, s.d.modes.data(), compute));
    } else {
      TNRT_CUTENSOR(api.cutensorCreateReduction(handle, &op_, desc_a_, s.a.modes.data(), CUTENSOR_OP_IDENTITY, desc_d_,
                                                s.d.modes.data(), CUTENSOR_OP_IDENTITY, desc_d_, s.d.modes.data(),
                                                CUTENSOR_OP_ADD, compute));
    }
    TNRT_CUTENSOR(api.cutensorCreatePlanPreference(handle, &pref_, static_cast<cutensorAlgo_t>(algo),
                                                   jit ? CUTENSOR_JIT_MODE_DEFAULT : CUTENSOR_JIT_MODE_NONE));
    if (autotune) {
      const cutensorAutotuneMode_t mode = CUTENSOR_AUTOTUNE_MODE_INCREMENTAL;
      TNRT_CUTENSOR(api.cutensorPlanPreferenceSetAttribute(handle, pref_, CUTENSOR_PLAN_PREFERENCE_AUTOTUNE_MODE, &mode, sizeof mode));
      const std::int32_t count = 4;
      TNRT_CUTENSOR(api.cutensorPlanPreferenceSetAttribute(handle, pref_, CUTENSOR_PLAN_PREFERENCE_INCREMENTAL_COUNT, &count, sizeof count));
    }
    std::uint64_t estimate = 0;
    TNRT_CUTENSOR(api.cutensorEstimateWorkspaceSize(handle, op_, pref_, CUTENSOR_WORKSPACE_DEFAULT, &estimate));
    TNRT_CUTENSOR(api.cutensorCreatePlan(handle, &plan_, op_, pref_, estimate));
    // The plan's exact need, never the estimate (which can be far larger).
    TNRT_CUTENSOR(api.cutensorPlanGetAttribute(handle, plan_, CUTENSOR_PLAN_REQUIRED_WORKSPACE, &workspace_bytes_, sizeof workspace_bytes_));
  } catch (...) {
    release();
    throw;
  }
}

plan_entry::~plan_entry() { release(); }

void plan_entry::release() noexcept {
  if (plan_ != nullptr) (void)api_->cutensorDestroyPlan(plan_);
  if (pref_ != nullptr) (void)api_->cutensorDestroyPlanPreference(pref_);
  if (op_ != nullptr) (void)api_->cutensorDestroyOperationDescriptor(op_);
  for (auto* d : {desc_a_, desc_b_, desc_d_})
    if (d != nullptr) (void)api_->cutensorDestroyTensorDescriptor(d);
  plan_ = nullptr;
  pref_ = nullptr;
  op_ = nullptr;
  desc_a_ = desc_b_ = desc_d_ = nullptr;
}

engine::engine(const options& opt) : opt_(opt), api_(&cutensor()) {
  require_device(opt.device);
  TNRT_CUDA(cudaSetDevice(opt.device));
  TNRT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    TNRT_CUTENSOR(api_->cutensorCreate(&handle_));
    runtime_ = std::make_unique<cuda_runtime>(opt.device);
    pool_ = std::make_unique<device::caching_pool>(*runtime_);
    device::caching_pool* pool = pool_.get();
    queue_ = std::make_unique<device::retirement_queue>(
        *runtime_, [pool](void* block) { pool->deallocate_unowned(block); }, opt.retirement_capacity, opt.retire);
    pool_->set_retirement_queue(queue_.get());
    workspace_ = std::make_unique<device::shared_workspace>(*pool_, *queue_, opt.workspace_cap);
    cache_ = std::make_unique<lru_cache<plan_entry>>(
        opt.plan_cache_entries, [this](std::shared_ptr<plan_entry>& p) { on_evict(p); },
        [](const plan_entry&) { return std::size_t{4096}; });
  } catch (...) {
    if (handle_ != nullptr) (void)api_->cutensorDestroy(handle_);
    (void)cudaStreamDestroy(stream_);
    throw;
  }
}

engine::~engine() {
  try {
    (void)cudaStreamSynchronize(stream_);
    if (cache_) cache_->clear();
    destroy_graveyard();
    workspace_.reset();
    if (queue_) queue_->drain_all();
    if (pool_) pool_->set_retirement_queue(nullptr);
    queue_.reset();
    pool_.reset();
  } catch (...) {
    // Destructors never throw; what could not be released is leaked, never raced.
  }
  if (handle_ != nullptr) (void)api_->cutensorDestroy(handle_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

void engine::on_evict(std::shared_ptr<plan_entry>& p) {
  graveyard_.push_back(p);
  // Bounded: a long eager session that never synchronizes must not hold every evicted plan. The
  // plans hold no device memory we own and cuTENSOR's plan does not outlive enqueued work's need
  // for it (kernels are already launched), so destroying them here is safe, only slower.
  if (graveyard_.size() > graveyard_limit) destroy_graveyard();
}

void engine::destroy_graveyard() noexcept { graveyard_.clear(); }

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

std::shared_ptr<plan_entry> engine::plan(const lowered_step& s, dtype t, std::uint32_t alignment) {
  s.key_into(key_scratch_);  // reuses the buffer: no allocation on a cache hit
  key_scratch_.push_back(static_cast<std::int64_t>(t));
  key_scratch_.push_back((opt_.jit ? 1 : 0) | (opt_.autotune ? 2 : 0));
  key_scratch_.push_back(opt_.algo);
  key_scratch_.push_back(alignment);
  return cache_->ensure(key_scratch_, [&] {
    if (injected_plan_failures_ > 0) {
      --injected_plan_failures_;
      throw device_error("cuTENSOR cutensorCreatePlan failed: injected failure (fault injection)");
    }
    return std::make_shared<plan_entry>(*api_, handle_, s, t, opt_.jit, opt_.autotune, opt_.algo, alignment);
  });
}

void engine::enqueue(const plan_entry& p, const void* a, const void* b, void* d, void* workspace, std::uint64_t workspace_bytes,
                     cudaStream_t stream) {
  const scalar_one one(p.type());
  alignas(16) static constexpr unsigned char zero[16] = {};
  if (p.kind() == lowered_kind::contraction) {
    TNRT_CUTENSOR(api_->cutensorContract(handle_, p.plan(), one.bytes, a, b, zero, d, d, workspace, workspace_bytes, stream));
  } else {
    TNRT_CUTENSOR(api_->cutensorReduce(handle_, p.plan(), one.bytes, a, zero, d, d, workspace, workspace_bytes, stream));
  }
}

void engine::execute(const lowered_step& s, dtype t, const void* a, const void* b, void* d, cudaStream_t stream) {
  // Every element must be aligned to its type at least (cuTENSOR's minimum); the descriptors
  // promise the operands' common alignment, part of the plan's key.
  const std::uint32_t alignment = alignment_of(a, b, d);
  if (alignment < std::min<std::size_t>(size_of(t), 16))
    throw not_supported("operand pointer is not aligned to its element type (" + std::to_string(alignment) + "-byte aligned " +
                        std::string(name_of(t)) + ")");
  std::shared_ptr<plan_entry> p = plan(s, t, alignment);
  const std::uint64_t need = p->workspace_bytes();
  const device::shared_workspace::lease lease = workspace_->acquire(slot_of(stream), need, stream);
  enqueue(*p, a, b, d, lease.ptr, lease.bytes, stream);
  workspace_->finish(lease, stream);
}

void engine::synchronize() {
  queue_->drain_all();
  if (runtime_->synchronize_stream(stream_) != device::status::ok)
    throw device_error("stream synchronize failed in engine::synchronize (evicted plans kept until a later synchronize succeeds)");
  destroy_graveyard();
}

void engine::clear_caches() {
  cache_->clear();
  workspace_->clear();
  synchronize();
}

void engine::set_plan_cache_entries(std::size_t n) { cache_->set_capacity(n); }

counters engine::stats() const {
  counters c;
  const lru_stats l = cache_->stats();
  c.plan_cache = {l.entries, l.capacity, l.hits, l.misses, l.evictions, l.clears, l.retained_bytes};
  c.workspace = workspace_->stats();
  c.retirement = queue_->stats();
  c.pool = pool_->stats();
  const auto rc = runtime_->counts();
  c.syncs.stream_syncs = rc.stream_syncs;
  c.syncs.event_syncs = rc.event_syncs;
  c.api.analysis_hits = analysis_hits_;
  c.api.analysis_misses = analysis_misses_;
  return c;
}

}  // namespace tnrt::cuda
