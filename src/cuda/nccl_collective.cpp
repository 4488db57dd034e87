// NCCL's collective for ranks as processes on GPUs (tnrt/distributed.hpp): libnccl.so.2 opened at
// run time like cuTENSOR and cuBLAS, so one binary runs with or without it. The few NCCL types and
// entry points tnrt calls are declared here from NCCL's documented C ABI (no NVIDIA header).
#include <cuda_runtime_api.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/dynamic_library.hpp"
#include "cuda/cuda_check.hpp"
#include "tnrt/distributed.hpp"
#include "tnrt/errors.hpp"

#ifndef TNRT_PYTHON_SITE_DIR
#define TNRT_PYTHON_SITE_DIR ""
#endif
#ifndef TNRT_CUDA_TOOLKIT_LIBDIR
#define TNRT_CUDA_TOOLKIT_LIBDIR ""
#endif

namespace tnrt::cuda {
namespace {

// ---- NCCL's C ABI, as much as tnrt uses -------------------------------------------------------
struct nccl_comm;
using nccl_comm_t = nccl_comm*;
struct nccl_unique_id {
  char internal[128];  // NCCL_UNIQUE_ID_BYTES
};
using nccl_result = int;                // ncclResult_t
constexpr nccl_result nccl_success = 0, nccl_in_progress = 7;
constexpr int nccl_float32 = 7, nccl_float64 = 8;  // ncclDataType_t
constexpr int nccl_sum = 0;                        // ncclRedOp_t
// ncclConfig_t as NCCL 2.17 declared it (version 21700): NCCL copies `size` bytes of the caller's
// struct over its defaults, so the fields of later releases keep their defaults.
struct nccl_config {
  std::size_t size = sizeof(nccl_config);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 21700;
  int blocking = INT_MIN;  // NCCL_CONFIG_UNDEF_INT
  int cga_cluster_size = INT_MIN;
  int min_ctas = INT_MIN;
  int max_ctas = INT_MIN;
  const char* net_name = nullptr;  // NCCL_CONFIG_UNDEF_PTR
  int split_share = INT_MIN;
};

struct nccl_api {
  nccl_result (*ncclGetVersion)(int*) = nullptr;
  nccl_result (*ncclGetUniqueId)(nccl_unique_id*) = nullptr;
  nccl_result (*ncclCommInitRank)(nccl_comm_t*, int, nccl_unique_id, int) = nullptr;
  nccl_result (*ncclCommInitRankConfig)(nccl_comm_t*, int, nccl_unique_id, int, nccl_config*) = nullptr;  // optional (2.14+)
  nccl_result (*ncclReduce)(const void*, void*, std::size_t, int, int, int, nccl_comm_t, cudaStream_t) = nullptr;
  nccl_result (*ncclCommGetAsyncError)(nccl_comm_t, nccl_result*) = nullptr;
  nccl_result (*ncclCommAbort)(nccl_comm_t) = nullptr;
  nccl_result (*ncclCommDestroy)(nccl_comm_t) = nullptr;
  const char* (*ncclGetErrorString)(nccl_result) = nullptr;
  std::string path, version;
};

struct loaded {
  nccl_api api;
  std::string error;  // empty when loaded
};

std::vector<std::string> candidates() {
  if (const char* p = std::getenv("TNRT_NCCL_PATH"); p != nullptr && *p != '\0') return {p};
  std::vector<std::string> c{"libnccl.so.2", "/opt/tnrt-deps/lib/libnccl.so.2"};
  if (const std::string site = TNRT_PYTHON_SITE_DIR; !site.empty()) c.push_back(site + "/nvidia/nccl/lib/libnccl.so.2");
  if (const std::string dir = TNRT_CUDA_TOOLKIT_LIBDIR; !dir.empty()) c.push_back(dir + "/libnccl.so.2");
  c.emplace_back("/usr/local/cuda/lib64/libnccl.so.2");
  c.emplace_back("/usr/local/cuda/lib/libnccl.so.2");
  return c;
}

loaded open_nccl() {
  loaded out;
  const opened_library opened = open_first(candidates());
  void* lib = opened.handle;
  out.api.path = opened.path;
  if (lib == nullptr) {
    out.error = "NCCL not found: tried " + opened.tried + "; set TNRT_NCCL_PATH to libnccl.so.2 (pip: nvidia-nccl-cu13)";
    return out;
  }
  std::string missing;
  auto& a = out.api;
#define TNRT_RESOLVE(name) resolve_function(lib, #name, a.name, missing);
  TNRT_RESOLVE(ncclGetVersion)
  TNRT_RESOLVE(ncclGetUniqueId)
  TNRT_RESOLVE(ncclCommInitRank)
  TNRT_RESOLVE(ncclReduce)
  TNRT_RESOLVE(ncclCommGetAsyncError)
  TNRT_RESOLVE(ncclCommAbort)
  TNRT_RESOLVE(ncclCommDestroy)
  TNRT_RESOLVE(ncclGetErrorString)
#undef TNRT_RESOLVE
  if (!missing.empty()) {
    out.error = "NCCL at " + a.path + " lacks " + missing;
    return out;
  }
  std::string optional;
  resolve_function(lib, "ncclCommInitRankConfig", a.ncclCommInitRankConfig, optional);
  int v = 0;
  if (a.ncclGetVersion(&v) == nccl_success)
    a.version = std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." + std::to_string(v % 100);
  return out;
}

const loaded& instance() {
  static const loaded l = open_nccl();
  return l;
}

using clock_type = std::chrono::steady_clock;
double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

std::string of(int rank, int size) { return "rank " + std::to_string(rank) + " of " + std::to_string(size); }

struct device_free {
  void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using device_buffer = std::unique_ptr<void, device_free>;
struct stream_destroy {
  void operator()(cudaStream_t s) const noexcept { (void)cudaStreamDestroy(s); }
};
using owned_stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_destroy>;
struct event_destroy {
  void operator()(cudaEvent_t e) const noexcept { (void)cudaEventDestroy(e); }
};
using owned_event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, event_destroy>;

device_buffer allocate(std::size_t bytes) {
  void* p = nullptr;
  TNRT_CUDA(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  return device_buffer(p);
}

class nccl_collective final : public collective {
 public:
  nccl_collective(rendezvous r, int device) : r_(std::move(r)), device_(device) {
    // NVLink multicast (NVLS) stays off unless the caller chose otherwise: the lent machines need it off
    ::setenv("NCCL_NVLS_ENABLE", "0", 0);
    const loaded& l = instance();
    if (!l.error.empty()) throw device_error(l.error);
    api_ = &l.api;
    TNRT_CUDA(cudaSetDevice(device_));
    nccl_unique_id id{};
    if (r_.rank() == 0) {
      check(api_->ncclGetUniqueId(&id), "ncclGetUniqueId");
      r_.publish("nccl-id", std::string_view(id.internal, sizeof id.internal));
    } else {
      r_.wait_for("nccl-id", 0);
      const std::string bytes = r_.read("nccl-id");
      if (bytes.size() != sizeof id.internal) throw io_error("rendezvous: the NCCL id in " + r_.path("nccl-id") + " is not 128 bytes");
      std::memcpy(id.internal, bytes.data(), sizeof id.internal);
    }
    if (api_->ncclCommInitRankConfig != nullptr) {
      nccl_config config;
      config.blocking = 0;  // init and collectives return at once; tnrt polls them against its deadline
      const nccl_result st = api_->ncclCommInitRankConfig(&comm_, r_.size(), id, r_.rank(), &config);
      if (st != nccl_success && st != nccl_in_progress) {
        abort_comm();
        check(st, "ncclCommInitRankConfig");
      }
      wait_async("ncclCommInitRankConfig");
    } else {
      check(api_->ncclCommInitRank(&comm_, r_.size(), id, r_.rank()), "ncclCommInitRank");  // blocking: NCCL before 2.14
    }
  }
  ~nccl_collective() override {
    if (comm_ != nullptr) (void)api_->ncclCommDestroy(comm_);
  }
  nccl_collective(const nccl_collective&) = delete;
  nccl_collective& operator=(const nccl_collective&) = delete;

  int rank() const override { return r_.rank(); }
  int size() const override { return r_.size(); }
  std::string name() const override { return "nccl " + api_->version; }

  void reduce(const problem& p, const reduction_plan&, const tensor_view& partial, stream_handle stream) override {
    if (comm_ == nullptr) throw device_error(of(r_.rank(), r_.size()) + ": the NCCL communicator was aborted");
    if (partial.device != device_) throw not_supported("NCCL reduces device memory of the rank's GPU " + std::to_string(device_));
    std::int64_t n = 1;
    for (std::int64_t e : p.net.shape_of(p.net.output)) n *= e;
    const std::size_t count = static_cast<std::size_t>(n) * (is_complex(p.type) ? 2 : 1);
    const int type = is_double(p.type) ? nccl_float64 : nccl_float32;
    auto* s = static_cast<cudaStream_t>(stream);
    TNRT_CUDA(cudaSetDevice(device_));
    // sum of the whole output into rank 0, in place: a block only one rank computed is that rank's
    // values plus zeros, the gathered block, at the cost of one reduce of the output
    const nccl_result st = api_->ncclReduce(partial.data, partial.data, count, type, nccl_sum, 0, comm_, s);
    if (st != nccl_success && st != nccl_in_progress) {
      abort_comm();
      check(st, "ncclReduce");
    }
    wait_async("ncclReduce");
    cudaEvent_t raw = nullptr;
    TNRT_CUDA(cudaEventCreateWithFlags(&raw, cudaEventDisableTiming));
    const owned_event done(raw);
    TNRT_CUDA(cudaEventRecord(done.get(), s));
    const auto t0 = clock_type::now();
    for (;;) {
      const cudaError_t q = cudaEventQuery(done.get());
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) {
        abort_comm();
        TNRT_CUDA(q);
      }
      poll_once("ncclReduce", t0);
    }
  }

  void abort(const std::exception& e) noexcept override {
    r_.report_failure(e);
    abort_comm();
  }

 private:
  void check(nccl_result st, const char* call) const {
    if (st == nccl_success) return;
    throw device_error(std::string("NCCL ") + call + " failed: " + api_->ncclGetErrorString(st) + " (" + of(r_.rank(), r_.size()) + ")");
  }
  void abort_comm() noexcept {
    if (comm_ != nullptr) (void)api_->ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  // One look at the communicator's state, the other ranks' status files and the deadline; aborts
  // the communicator before throwing.
  void poll_once(const char* call, clock_type::time_point t0) {
    nccl_result async = nccl_success;
    const nccl_result st = api_->ncclCommGetAsyncError(comm_, &async);
    if (st != nccl_success || (async != nccl_success && async != nccl_in_progress)) {
      const nccl_result bad = st != nccl_success ? st : async;
      abort_comm();
      check(bad, call);
    }
    try {
      r_.check_peers();
    } catch (...) {
      abort_comm();
      throw;
    }
    if (since(t0) > r_.timeout_seconds()) {
      abort_comm();
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", r_.timeout_seconds());
      throw device_error(of(r_.rank(), r_.size()) + ": NCCL " + call + " did not complete within " + secs +
                         " s (a rank died, hangs or is still contracting; communicator aborted; --collective-timeout S raises the limit)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // A non-blocking communicator's call returns ncclInProgress; its async error says when it is done.
  void wait_async(const char* call) {
    const auto t0 = clock_type::now();
    for (;;) {
      nccl_result async = nccl_success;
      const nccl_result st = api_->ncclCommGetAsyncError(comm_, &async);
      if (st == nccl_success && async == nccl_success) return;
      poll_once(call, t0);
    }
  }

  rendezvous r_;
  int device_;
  const nccl_api* api_ = nullptr;
  nccl_comm_t comm_ = nullptr;
};

}  // namespace

std::string nccl_unavailable_reason() { return instance().error; }

std::string nccl_library() {
  const loaded& l = instance();
  return l.error.empty() ? l.api.path + " (NCCL " + l.api.version + ")" : "";
}

int visible_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<collective> make_nccl_collective(rendezvous r, int device, bool nccl_for_one_rank) {
  if (r.size() == 1 && !nccl_for_one_rank) return make_one_rank_collective();
  return std::make_unique<nccl_collective>(std::move(r), device);
}

host_tensor contract_sliced_rank(sliced_program& sp, std::span<const host_tensor> inputs, int device, slice_schedule how, collective& coll,
                                 distributed_report* report) {
  distributed_report rep;
  const problem& p = sp.source();
  const auto shape = p.net.shape_of(p.net.output);
  host_tensor result;
  try {
    if (how != slice_schedule::contiguous)
      throw not_supported("round-robin shares on the GPU: its sliced program runs ranges of slices (use contiguous)");
    rep.ranks = coll.size();
    rep.schedule = how;
    rep.plan = plan_reduction(p, sp.report().plan.labels, coll.size(), how);
    rank_report me;
    me.rank = coll.rank();
    me.share = share_of(sp.slices(), coll.size(), coll.rank(), how);
    TNRT_CUDA(cudaSetDevice(device));
    cudaStream_t raw = nullptr;
    TNRT_CUDA(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
    const owned_stream stream(raw);
    const auto t0 = clock_type::now();
    std::vector<device_buffer> in;
    std::vector<tensor_view> views;
    for (const host_tensor& t : inputs) {
      in.push_back(allocate(t.bytes()));
      TNRT_CUDA(cudaMemcpyAsync(in.back().get(), t.data(), t.bytes(), cudaMemcpyHostToDevice, stream.get()));
      views.push_back(tensor_view{in.back().get(), t.type(), t.shape(), {}, device});
    }
    host_tensor host_out(p.type, shape);
    const device_buffer out = allocate(host_out.bytes());
    const tensor_view out_view{out.get(), p.type, host_out.shape(), {}, device};
    if (me.share.count == 0) {
      TNRT_CUDA(cudaMemsetAsync(out.get(), 0, host_out.bytes(), stream.get()));
      rep.notes.push_back(idle_note(me.rank, rep.ranks, rep.plan.slices));
    } else {
      sp.run(views, out_view, stream.get(), me.share.first, me.share.count);
    }
    TNRT_CUDA(cudaStreamSynchronize(stream.get()));  // this rank's own work: the collective's deadline starts after it
    me.seconds = since(t0);
    rep.contract_seconds = me.seconds;
    rep.per_rank.push_back(me);
    const auto t1 = clock_type::now();
    coll.reduce(p, rep.plan, out_view, stream.get());
    if (coll.rank() == 0) {
      TNRT_CUDA(cudaMemcpyAsync(host_out.data(), out.get(), host_out.bytes(), cudaMemcpyDeviceToHost, stream.get()));
      TNRT_CUDA(cudaStreamSynchronize(stream.get()));
      result = std::move(host_out);
    }
    rep.reduce_seconds = since(t1);
  } catch (const std::exception& e) {
    coll.abort(e);
    rethrow_for_rank(e, coll.rank(), coll.size());
  }
  if (report) *report = std::move(rep);
  return result;
}

}  // namespace tnrt::cuda
