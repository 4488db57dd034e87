#include "cuda/profiler.hpp"

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/dynamic_library.hpp"
#include "tnrt/errors.hpp"

#ifndef TNRT_PYTHON_SITE_DIR
#define TNRT_PYTHON_SITE_DIR ""
#endif

namespace tnrt::cuda {

const char* name_of(sync_call call) noexcept {
  switch (call) {
    case sync_call::cuda_stream_synchronize: return "cudaStreamSynchronize";
    case sync_call::cuda_event_synchronize: return "cudaEventSynchronize";
    case sync_call::cuda_device_synchronize: return "cudaDeviceSynchronize";
    case sync_call::cu_stream_synchronize: return "cuStreamSynchronize";
    case sync_call::cu_event_synchronize: return "cuEventSynchronize";
    case sync_call::cu_ctx_synchronize: return "cuCtxSynchronize";
  }
  return "?";
}

namespace {

// Records are read by these fields only, whose offsets have not moved since CUPTI 4 (kernel records
// 1 to 10, memcpy 1 to 6, memset 1 to 4 all agree), so a CUPTI older or newer than the headers
// tnrt was built with still reads right.
static_assert(offsetof(CUpti_ActivityKernel10, start) == 16 && offsetof(CUpti_ActivityKernel10, end) == 24);
static_assert(offsetof(CUpti_ActivityMemcpy6, start) == 16 && offsetof(CUpti_ActivityMemset4, start) == 16);

#define TNRT_CUPTI_FUNCTIONS(X)           \
  X(cuptiGetVersion)                      \
  X(cuptiGetResultString)                 \
  X(cuptiGetTimestamp)                    \
  X(cuptiSubscribe)                       \
  X(cuptiUnsubscribe)                     \
  X(cuptiEnableCallback)                  \
  X(cuptiActivityRegisterCallbacks)       \
  X(cuptiActivityEnable)                  \
  X(cuptiActivityDisable)                 \
  X(cuptiActivityFlushAll)                \
  X(cuptiActivityGetNextRecord)           \
  X(cuptiActivityGetNumDroppedRecords)

struct cupti_api {
#define TNRT_CUPTI_FN(name) decltype(&::name) name = nullptr;
  TNRT_CUPTI_FUNCTIONS(TNRT_CUPTI_FN)
#undef TNRT_CUPTI_FN
};

struct loaded {
  cupti_api api;
  cupti_library library;
  std::string error;  // empty when loaded
};

std::vector<std::string> cupti_candidates() {
  if (const char* p = std::getenv("TNRT_CUPTI_PATH"); p != nullptr && *p != '\0') return {p};
  std::vector<std::string> c;
  if (const char* d = std::getenv("TNRT_CUPTI_DIR"); d != nullptr && *d != '\0') c.push_back(std::string(d) + "/libcupti.so.13");
  c.emplace_back("libcupti.so.13");
  c.emplace_back("/opt/tnrt-deps/lib/libcupti.so.13");
  c.emplace_back("/usr/local/cuda/lib64/libcupti.so.13");
  c.emplace_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  if (const std::string site = TNRT_PYTHON_SITE_DIR; !site.empty()) {
    c.push_back(site + "/nvidia/cu13/lib/libcupti.so.13");
    c.push_back(site + "/nvidia/cuda_cupti/lib/libcupti.so.13");
  }
  c.emplace_back("libcupti.so");  // any version: the last resort
  return c;
}

// Activity buffers are handed over through process-wide callbacks (defined below with the session
// they fill), registered when CUPTI is opened: before the CLI's first CUDA call, as older CUPTI
// asked of the Activity API; a session registers them itself if that failed.
void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                               std::size_t valid);
std::mutex active_mutex;  // guards buffer_callbacks_registered and active_session
bool buffer_callbacks_registered = false;

loaded open_cupti() {
  loaded out;
  const opened_library opened = open_first(cupti_candidates());
  void* lib = opened.handle;
  const std::string& tried = opened.tried;
  out.library.path = opened.path;
  if (lib == nullptr) {
    const char* only = std::getenv("TNRT_CUPTI_PATH");
    out.error = "CUPTI (libcupti, needed by --profile) not found: tried " + tried +
                (only != nullptr && *only != '\0' ? " (only TNRT_CUPTI_PATH, which is set)" : "") +
                "; set TNRT_CUPTI_DIR to the folder holding libcupti.so.13 (the CUDA toolkit's lib64, or "
                "'python3 -m pip install nvidia-cuda-cupti')";
    return out;
  }
  std::string missing;
#define TNRT_CUPTI_RESOLVE(name) resolve_function(lib, #name, out.api.name, missing);
  TNRT_CUPTI_FUNCTIONS(TNRT_CUPTI_RESOLVE)
#undef TNRT_CUPTI_RESOLVE
  if (!missing.empty()) {
    out.error = "CUPTI at " + out.library.path + " lacks " + missing;
    return out;
  }
  uint32_t v = 0;
  if (out.api.cuptiGetVersion(&v) != CUPTI_SUCCESS) {
    out.error = "CUPTI at " + out.library.path + ": cuptiGetVersion failed";
    return out;
  }
  out.library.version = v;
  buffer_callbacks_registered = out.api.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS;
  return out;
}

const loaded& instance() {
  static const loaded l = open_cupti();
  return l;
}

const cupti_api& api() {
  const loaded& l = instance();
  if (!l.error.empty()) throw device_error(l.error);
  return l.api;
}

void check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (api().cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI error";
  std::string msg = std::string("CUPTI ") + call + " failed: " + text + " (" + std::to_string(static_cast<int>(r)) + ")";
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    msg += "; another profiler (Nsight Systems, Nsight Compute, a CUPTI injection) is attached to this process";
  throw device_error(msg);
}

std::uint64_t now_ns() {
  std::uint64_t t = 0;
  check(api().cuptiGetTimestamp(&t), "cuptiGetTimestamp");
  return t;
}

// The synchronization calls counted, by callback domain and id. The variants (_ptsz, _v2, the
// deprecated cudaThreadSynchronize) count as their main call; a CUPTI that does not know one of
// them simply never reports it.
struct counted_call {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId id;
  sync_call kind;
  bool required;
};
constexpr counted_call counted_calls[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, sync_call::cuda_stream_synchronize, true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, sync_call::cuda_stream_synchronize, false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, sync_call::cuda_event_synchronize, true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, sync_call::cuda_device_synchronize, true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020, sync_call::cuda_device_synchronize, false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, sync_call::cu_stream_synchronize, true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz, sync_call::cu_stream_synchronize, false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, sync_call::cu_event_synchronize, true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, sync_call::cu_ctx_synchronize, true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, sync_call::cu_ctx_synchronize, false},
};

constexpr CUpti_ActivityKind recorded_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMSET};

// The runner's own waits: set by profiler::own_syncs on the thread that makes them. CUPTI calls the
// API callbacks synchronously on the calling thread, so the flag is read where it was set.
thread_local bool own_syncs_active = false;

/// Everything one profiling session collects. The API callback gets it as its userdata; the
/// activity buffer callbacks (process-wide, no userdata, possibly on CUPTI's own thread) reach it
/// through `active_session` under `active_mutex`.
struct session {
  std::atomic<bool> recording{false};
  std::array<std::atomic<std::uint64_t>, sync_call_kinds> syncs{};
  std::array<std::atomic<std::uint64_t>, sync_call_kinds> runner_syncs{};

  std::mutex mutex;  // guards what the buffer callback writes
  std::vector<kernel_interval> kernels;
  std::vector<std::uint64_t> memcpy_starts, memset_starts;
  std::uint64_t kernels_untimed = 0, dropped = 0;

  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;  // [begin, end) per timed run, CUPTI clock
  CUpti_SubscriberHandle subscriber = nullptr;
  bool activity_on = false;

  void take(std::uint8_t* buffer, std::size_t valid, CUcontext ctx, std::uint32_t stream) {
    const cupti_api& a = instance().api;
    std::lock_guard lock(mutex);
    CUpti_Activity* rec = nullptr;
    while (a.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
          if (k->start == 0 && k->end == 0) {
            ++kernels_untimed;
          } else {
            kernels.push_back({k->start, k->end});
          }
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: memcpy_starts.push_back(reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec)->start); break;
        case CUPTI_ACTIVITY_KIND_MEMSET: memset_starts.push_back(reinterpret_cast<const CUpti_ActivityMemset4*>(rec)->start); break;
        default: break;
      }
    }
    std::size_t lost = 0;
    if (a.cuptiActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS) dropped += lost;
  }
};

session* active_session = nullptr;

constexpr std::size_t buffer_bytes = std::size_t{8} << 20;  // ~40k kernel records a buffer

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, buffer_bytes));
  *size = *buffer != nullptr ? buffer_bytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t /*size*/,
                               std::size_t valid) {
  {
    std::lock_guard lock(active_mutex);
    if (active_session != nullptr && buffer != nullptr) active_session->take(buffer, valid, ctx, stream);
  }
  std::free(buffer);
}

void CUPTIAPI on_api_call(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (d == nullptr || d->callbackSite != CUPTI_API_ENTER) return;
  auto* s = static_cast<session*>(userdata);
  if (!s->recording.load(std::memory_order_relaxed)) return;
  for (const counted_call& c : counted_calls) {
    if (c.domain == domain && c.id == id) {
      const auto k = static_cast<std::size_t>(c.kind);
      s->syncs[k].fetch_add(1, std::memory_order_relaxed);
      if (own_syncs_active) s->runner_syncs[k].fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

}  // namespace

const cupti_library& cupti() {
  (void)api();  // throws when not loaded
  return instance().library;
}

std::string profiler_unavailable_reason() { return instance().error; }

std::string profiler_library() {
  const loaded& l = instance();
  return l.error.empty() ? l.library.path + " (CUPTI " + std::to_string(l.library.version) + ")" : std::string{};
}

struct profiler::state : session {
  state() {
    const cupti_api& a = api();
    {
      std::lock_guard lock(active_mutex);
      if (active_session != nullptr) throw device_error("a CUPTI profile is already being recorded in this process");
      if (!buffer_callbacks_registered) {
        check(a.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
        buffer_callbacks_registered = true;
      }
      active_session = this;
    }
    try {
      check(a.cuptiSubscribe(&subscriber, on_api_call, static_cast<session*>(this)), "cuptiSubscribe");
      for (const counted_call& c : counted_calls) {
        const CUptiResult r = a.cuptiEnableCallback(1, subscriber, c.domain, c.id);
        if (c.required) check(r, "cuptiEnableCallback");
      }
      activity_on = true;  // set first: a kind enabled before a later one fails must be disabled too
      for (CUpti_ActivityKind k : recorded_kinds) check(a.cuptiActivityEnable(k), "cuptiActivityEnable");
    } catch (...) {
      stop();
      throw;
    }
  }
  state(const state&) = delete;
  state& operator=(const state&) = delete;
  ~state() { stop(); }

  /// Disables and unsubscribes what was enabled, hands CUPTI's buffers back, and leaves the
  /// process free for another session. Never throws.
  void stop() noexcept {
    const cupti_api& a = instance().api;
    recording = false;
    if (subscriber != nullptr) {
      (void)a.cuptiUnsubscribe(subscriber);
      subscriber = nullptr;
    }
    if (activity_on) {
      for (CUpti_ActivityKind k : recorded_kinds) (void)a.cuptiActivityDisable(k);
      // Not under active_mutex: the flush may call buffer_completed on this thread.
      (void)a.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      activity_on = false;
    }
    std::lock_guard lock(active_mutex);
    if (active_session == this) active_session = nullptr;
  }
};

profiler::profiler() : s_(std::make_unique<state>()) {}
profiler::~profiler() = default;

void profiler::begin_run() {
  if (s_->recording) throw internal_error("profiler::begin_run: the previous run was not ended");
  s_->windows.emplace_back(now_ns(), 0);
  s_->recording = true;
}

void profiler::end_run() {
  if (!s_->recording) throw internal_error("profiler::end_run without begin_run");
  s_->recording = false;
  s_->windows.back().second = now_ns();
}

profiler::own_syncs::own_syncs(profiler* p) : active_(p != nullptr && !own_syncs_active) {
  if (active_) own_syncs_active = true;
}
profiler::own_syncs::~own_syncs() {
  if (active_) own_syncs_active = false;
}

profile_report profiler::finish() {
  if (s_->recording) end_run();
  const cupti_api& a = api();
  // The runner synchronized after the last run, so every record is complete: flushing delivers them.
  check(a.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  s_->stop();

  profile_report r;
  r.cupti_path = instance().library.path;
  r.cupti_version = instance().library.version;
  const auto& w = s_->windows;
  r.runs = static_cast<int>(w.size());
  // Window i holds what started in [begin_i, end_i); windows are in time order and disjoint.
  auto window_of = [&w](std::uint64_t t) -> std::ptrdiff_t {
    auto it = std::upper_bound(w.begin(), w.end(), t, [](std::uint64_t x, const auto& win) { return x < win.first; });
    if (it == w.begin()) return -1;
    --it;
    return t < it->second ? it - w.begin() : -1;
  };
  std::vector<std::vector<kernel_interval>> per_run(w.size());
  {
    std::lock_guard lock(s_->mutex);
    for (const kernel_interval& k : s_->kernels) {
      const std::ptrdiff_t i = window_of(k.start_ns);
      if (i < 0) {
        ++r.kernels_outside_runs;
      } else {
        per_run[static_cast<std::size_t>(i)].push_back(k);
      }
    }
    for (std::uint64_t t : s_->memcpy_starts) r.memcpys += window_of(t) >= 0 ? 1 : 0;
    for (std::uint64_t t : s_->memset_starts) r.memsets += window_of(t) >= 0 ? 1 : 0;
    r.kernels_untimed = s_->kernels_untimed;
    r.records_dropped = s_->dropped;
  }
  for (const auto& run : per_run) r.kernels_per_run.push_back(run.size());
  r.kernels = summarize_runs(per_run);
  for (std::size_t k = 0; k < sync_call_kinds; ++k) {
    r.syncs[k] = s_->syncs[k].load();
    r.runner_syncs[k] = s_->runner_syncs[k].load();
  }
  return r;
}

}  // namespace tnrt::cuda
