#pragma once
// The profiler behind `tnrt contract --profile`: CUPTI, opened at run time with dlopen (like
// cuTENSOR, so a tnrt binary runs where there is no CUPTI and says so when asked to profile). Only
// profiler.cpp includes CUPTI's headers; every CUPTI function is resolved with dlsym.
//
// What it records, through the Activity API: every kernel's [start, end) on the device
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, which does not serialize kernels), and how many memory
// copies and memsets ran; through the Callback API: how many times cudaStreamSynchronize,
// cudaEventSynchronize, cudaDeviceSynchronize (runtime domain) and cuStreamSynchronize,
// cuEventSynchronize, cuCtxSynchronize (driver domain, which also sees the calls libraries such as
// cuTENSOR make) were entered. Activity recording is switched on when the profiler is constructed,
// before the engine exists, so that CUPTI's start-up cost and any graph built later are covered;
// only kernels that start inside a window begin_run() .. end_run() are kept (device timestamps
// against cuptiGetTimestamp, CUPTI's normalized clock), and synchronizations are counted inside
// those windows only.
#include <cstddef>
#include <memory>
#include <string>

#include "tnrt/cuda/profile_report.hpp"

namespace tnrt::cuda {

/// The CUPTI library this process opened.
struct cupti_library {
  std::string path;           // the file that was opened
  std::uint32_t version = 0;  // cuptiGetVersion (CUPTI_API_VERSION of its headers, e.g. 130001)
};

/// Opens CUPTI once per process: $TNRT_CUPTI_PATH alone when set (a file; nothing else is tried),
/// else $TNRT_CUPTI_DIR/libcupti.so.13, libcupti.so.13 and libcupti.so on the default search path,
/// /opt/tnrt-deps/lib, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64, and the
/// nvidia/cu13/lib and nvidia/cuda_cupti/lib folders of the Python site-packages that held the
/// cuTENSOR wheel at build time. Throws device_error naming every place tried.
const cupti_library& cupti();

/// One profiling session over the timed runs of one `run()`. At most one exists at a time in a
/// process (CUPTI's callbacks are process-wide): a second construction throws device_error.
class profiler {
 public:
  /// Opens CUPTI, subscribes to the synchronization callbacks and enables kernel, memcpy and
  /// memset activity records. Throws device_error (no CUPTI, another profiler such as Nsight
  /// attached, a CUPTI call failed).
  profiler();
  ~profiler();  // disables everything it enabled; never throws
  profiler(const profiler&) = delete;
  profiler& operator=(const profiler&) = delete;

  /// A timed run starts (call right before it): synchronizations are counted from here and
  /// kernels that start from here on belong to this run.
  void begin_run();
  /// The timed run ended (call after the synchronization that waits for its last kernel).
  void end_run();

  /// Synchronizations made by the calling thread while one of these lives are the caller's own
  /// (the runner's wait after each timed call): counted apart from those made inside the calls.
  class own_syncs {
   public:
    explicit own_syncs(profiler* p);  // p may be null: then it does nothing
    ~own_syncs();
    own_syncs(const own_syncs&) = delete;
    own_syncs& operator=(const own_syncs&) = delete;

   private:
    bool active_;
  };

  /// Flushes CUPTI's buffers (no device synchronization: call it after the last end_run) and
  /// returns the report of every window. Activity and callbacks stay off afterwards.
  profile_report finish();

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace tnrt::cuda
