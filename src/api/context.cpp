// The library API (include/tnrt/context.hpp): validation of every view against the problem,
// ownership (results, programs and the context's state), the lock that serializes calls, and the
// CPU engine; device work goes through the GPU backend seam (src/api/gpu_backend.hpp).
#include "tnrt/context.hpp"

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "api/gpu_backend.hpp"
#include "tnrt/cpu.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace detail {

struct context_state {
  options opt;
  std::unique_ptr<gpu_backend> gpu;  // null on the CPU
  // One lock for every call into the backend: calls only enqueue, so it is held briefly; it
  // orders the plan cache, the pool, the workspace and the retirement queue between threads.
  mutable std::recursive_mutex lock;
  api_stats api;
};

struct device_block {
  std::shared_ptr<context_state> owner;
  void* ptr = nullptr;
  stream_handle stream = nullptr;
  host_tensor host;  // the storage of a CPU context's result
  device_block() = default;
  device_block(const device_block&) = delete;
  device_block& operator=(const device_block&) = delete;
  ~device_block() {
    if (ptr == nullptr || owner == nullptr || owner->gpu == nullptr) return;
    const std::lock_guard<std::recursive_mutex> g(owner->lock);
    owner->gpu->deallocate(ptr, stream);
  }
};

struct program_state {
  std::shared_ptr<context_state> owner;
  problem prob;
  std::unique_ptr<gpu_program> gpu;  // null on the CPU: each run is a CPU contraction
  cost_report cost;
  // Every view's expected shape, flat (inputs, then the output), for run()'s fast check.
  std::vector<std::int64_t> shapes;
  std::vector<std::size_t> shape_begin;  // views + 1 offsets into `shapes`
};

struct sliced_state {
  std::shared_ptr<context_state> owner;
  problem prob;
  slice_report report;
  std::unique_ptr<gpu_sliced> gpu;  // null on the CPU: runs are cpu::contract_sliced
};

}  // namespace detail

namespace {

using detail::context_state;

std::string describe_shape(std::span<const std::int64_t> s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::string view_name(int index) { return index < 0 ? std::string("the output") : "input " + std::to_string(index); }

// A view against what the problem expects there; `index` names it in messages (-1: the output).
// Allocation-free unless it throws: it runs on every call, for every view.
// `labels` give the shape the view must have (extents from `net`), compared mode by mode.
void check_view(const tensor_view& v, const network& net, const std::vector<label_t>& labels, dtype type, int device, int index) {
  const bool is_output = index < 0;
  auto what = [index] { return view_name(index); };
  if (v.type != type)
    throw dtype_error(what() + " is " + std::string(name_of(v.type)) + " but the problem is " + std::string(name_of(type)));
  bool same_shape = v.shape.size() == labels.size();
  std::int64_t count = 1;
  for (std::size_t m = 0; same_shape && m < labels.size(); ++m) {
    same_shape = v.shape[m] == net.extents[static_cast<std::size_t>(labels[m])];
    count *= v.shape[m];
  }
  if (!same_shape)
    throw shape_error(what() + " has shape " + describe_shape(v.shape) + " where " + describe_shape(net.shape_of(labels)) + " is expected");
  if (!v.strides.empty() && v.strides.size() != v.shape.size())
    throw shape_error(what() + " has " + std::to_string(v.strides.size()) + " strides for " + std::to_string(v.shape.size()) + " modes");
  if (v.device != device)
    throw device_error(what() + " is on " + (v.device == cpu_device ? std::string("the host") : "CUDA device " + std::to_string(v.device)) +
                       " but the context runs on " + (device == cpu_device ? std::string("the CPU") : "CUDA device " + std::to_string(device)));
  if (count > 0 && v.data == nullptr) throw shape_error(what() + " has no data (a null pointer)");
  if (reinterpret_cast<std::uintptr_t>(v.data) % std::min<std::size_t>(size_of(type), 16) != 0)
    throw not_supported(what() + " is not aligned to its element type (" + std::string(name_of(type)) + ")");
  for (std::size_t m = 0; m < v.strides.size(); ++m) {
    if (v.strides[m] < 0) throw not_supported(what() + " has a negative stride (mode " + std::to_string(m) + "); pass a copy");
    if (v.strides[m] == 0 && v.shape[m] > 1 && is_output) throw not_supported(what() + " has a zero stride: an output must not overlap itself");
  }
  if (is_output && !v.strides.empty() && count > 1) {
    // No two elements of an output may share an address: sorted by stride, each mode must step past
    // the whole span of the smaller ones.
    std::vector<std::size_t> order(v.shape.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v.strides[a] < v.strides[b]; });
    std::int64_t span = 1;
    for (std::size_t m : order) {
      if (v.shape[m] == 1) continue;
      if (v.strides[m] < span) throw not_supported(what() + " overlaps itself (its strides alias elements)");
      span = v.strides[m] * v.shape[m];
    }
  }
}

void check_inputs(const problem& p, std::span<const tensor_view> inputs, int device) {
  if (inputs.size() != p.net.inputs.size())
    throw shape_error("got " + std::to_string(inputs.size()) + " inputs for a network of " + std::to_string(p.net.inputs.size()) + " operands");
  for (std::size_t i = 0; i < inputs.size(); ++i) check_view(inputs[i], p.net, p.net.inputs[i], p.type, device, static_cast<int>(i));
}

void check_output(const problem& p, std::span<const tensor_view> inputs, const tensor_view& out, int device) {
  check_view(out, p.net, p.net.output, p.type, device, -1);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (out.data != nullptr && inputs[i].data == out.data)
      throw not_supported("the output aliases input " + std::to_string(i) + "; pass a buffer of its own");
}


// Host views <-> host tensors (the CPU engine takes row-major tensors).
void copy_strided(const unsigned char* src, std::span<const std::int64_t> src_strides, unsigned char* dst,
                  std::span<const std::int64_t> dst_strides, std::span<const std::int64_t> shape, std::size_t elem) {
  const std::int64_t count = element_count(shape);
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t so = 0, dof = 0;
    for (std::size_t m = 0; m < shape.size(); ++m) {
      so += idx[m] * src_strides[m];
      dof += idx[m] * dst_strides[m];
    }
    std::memcpy(dst + static_cast<std::size_t>(dof) * elem, src + static_cast<std::size_t>(so) * elem, elem);
    for (std::size_t m = shape.size(); m-- > 0;) {
      if (++idx[m] < shape[m]) break;
      idx[m] = 0;
    }
  }
}

std::vector<std::int64_t> strides_or_row_major(const tensor_view& v) {
  return v.strides.empty() ? row_major_strides(v.shape) : std::vector<std::int64_t>(v.strides.begin(), v.strides.end());
}

host_tensor host_copy(const tensor_view& v) {
  host_tensor t(v.type, std::vector<std::int64_t>(v.shape.begin(), v.shape.end()));
  const std::vector<std::int64_t> dense = row_major_strides(v.shape);
  copy_strided(static_cast<const unsigned char*>(v.data), strides_or_row_major(v), static_cast<unsigned char*>(t.data()), dense, v.shape,
               size_of(v.type));
  return t;
}

void write_host(const host_tensor& r, const tensor_view& out) {
  copy_strided(static_cast<const unsigned char*>(r.data()), row_major_strides(r.shape()), static_cast<unsigned char*>(out.data),
               strides_or_row_major(out), out.shape, size_of(r.type()));
}

// Row-major host copies of views (the CPU engine takes host tensors).
std::vector<host_tensor> host_copies(std::span<const tensor_view> views) {
  std::vector<host_tensor> host;
  host.reserve(views.size());
  for (const tensor_view& v : views) host.push_back(host_copy(v));
  return host;
}

host_tensor cpu_contract_views(const problem& p, std::span<const tensor_view> inputs) { return cpu::contract(p, host_copies(inputs)); }

cost_report cost_of_problem(const problem& p) {
  const tree_cost c = cost_of(p.net, p.tree);
  // A multiply-add is 2 real flops; a complex one is 4 real multiplies and 4 adds.
  return cost_report{c.flops * (is_complex(p.type) ? 8.0 : 2.0), c.rw_bytes(p.type)};
}

std::vector<tensor_view> views_of(std::span<const host_tensor> ts) {
  std::vector<tensor_view> v;
  v.reserve(ts.size());
  for (const host_tensor& t : ts) v.push_back(view_of(t));
  return v;
}

// A host-tensor call's device side: pool blocks on the context's own stream for the uploaded
// inputs, the result and any block handed over, each given back when the staging goes (also when
// the call throws). Declared after the context's lock, so that it goes while the lock is held.
class device_staging {
 public:
  device_staging(detail::gpu_backend& gpu, int device) : gpu_(gpu), stream_(gpu.own_stream()), device_(device) {}
  ~device_staging() {
    for (void* d : blocks_) gpu_.deallocate(d, stream_);
  }
  device_staging(const device_staging&) = delete;
  device_staging& operator=(const device_staging&) = delete;

  [[nodiscard]] stream_handle stream() const noexcept { return stream_; }
  /// Device copies of `inputs` (the uploads enqueued on the own stream), as views.
  std::vector<tensor_view> upload(std::span<const host_tensor> inputs) {
    blocks_.reserve(blocks_.size() + inputs.size() + 2);
    std::vector<tensor_view> views = views_of(inputs);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      views[i].data = hold(gpu_.allocate(inputs[i].bytes(), stream_));
      gpu_.upload(views[i].data, inputs[i].data(), inputs[i].bytes(), stream_);
      views[i].device = device_;
    }
    return views;
  }
  /// A device view of a new block for the result `out` is to receive.
  tensor_view output_for(const host_tensor& out) {
    tensor_view o = view_of(out);
    o.data = hold(gpu_.allocate(out.bytes(), stream_));
    o.device = device_;
    return o;
  }
  /// Keeps a pool block allocated elsewhere (an eager result) until the staging goes.
  void* hold(void* block) {
    blocks_.push_back(block);
    return block;
  }
  /// Copies the device `block` into `out` (blocking).
  void download(host_tensor& out, const void* block) { gpu_.download(out.data(), block, out.bytes(), stream_); }

 private:
  detail::gpu_backend& gpu_;
  stream_handle stream_;
  int device_;
  std::vector<void*> blocks_;
};

}  // namespace

tensor_view view_of(const host_tensor& t) {
  tensor_view v;
  v.data = const_cast<void*>(t.data());  // inputs are only read; an output view of a host tensor writes it
  v.type = t.type();
  v.shape = t.shape();
  v.device = cpu_device;
  return v;
}

void check_host_inputs(const problem& p, std::span<const host_tensor> inputs) {
  if (inputs.size() != p.net.inputs.size())
    throw shape_error("got " + std::to_string(inputs.size()) + " inputs for a network of " + std::to_string(p.net.inputs.size()) + " operands");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].type() != p.type)
      throw dtype_error("input " + std::to_string(i) + " is " + std::string(name_of(inputs[i].type())) + " but the problem is " + std::string(name_of(p.type)));
    if (inputs[i].shape() != p.net.shape_of(p.net.inputs[i]))
      throw shape_error("input " + std::to_string(i) + " has shape " + describe_shape(inputs[i].shape()) + " where " +
                        describe_shape(p.net.shape_of(p.net.inputs[i])) + " is expected for labels " + p.net.describe(p.net.inputs[i]));
  }
}

bool built_with_cuda() noexcept {
#ifdef TNRT_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::string unavailable_reason(int device) {
  if (device == cpu_device) return {};
#ifdef TNRT_HAVE_CUDA
  return detail::gpu_unavailable_reason(device);
#else
  return "this build of tnrt has no CUDA backend (built with TNRT_CUDA=OFF or without nvcc and the cuTENSOR headers)";
#endif
}

// ---- device_tensor --------------------------------------------------------------------------------

void* device_tensor::data() const noexcept { return block_ ? block_->ptr : nullptr; }
std::size_t device_tensor::bytes() const noexcept { return static_cast<std::size_t>(element_count(shape_)) * size_of(type_); }

tensor_view device_tensor::view() const noexcept {
  tensor_view v;
  v.data = data();
  v.type = type_;
  v.shape = shape_;
  v.strides = strides_;
  v.device = device_;
  return v;
}

host_tensor device_tensor::to_host() const {
  host_tensor h(type_, shape_);
  if (!block_) return h;
  if (block_->owner == nullptr || block_->owner->gpu == nullptr) {
    std::memcpy(h.data(), block_->ptr, h.bytes());
    return h;
  }
  const std::lock_guard<std::recursive_mutex> g(block_->owner->lock);
  block_->owner->gpu->download(h.data(), block_->ptr, h.bytes(), block_->stream);
  return h;
}

// ---- program --------------------------------------------------------------------------------------

program::program() = default;
program::~program() = default;
program::program(program&&) noexcept = default;
program& program::operator=(program&&) noexcept = default;

namespace {
detail::program_state& state_of(const std::unique_ptr<detail::program_state>& s) {
  if (!s) throw usage_error("the program is empty (moved from, or never compiled)");
  return *s;
}
}  // namespace

namespace {
// run()'s check of the common case, against the program's flat shapes: every view of the right
// type, shape and device, dense row-major (no strides given), non-null where it has elements,
// aligned, and the output aliasing no input. False sends the call to the full check, which
// accepts any valid strides and throws the one-line error otherwise.
bool dense_views_fit(const detail::program_state& s, std::span<const tensor_view> inputs, const tensor_view& output, int device) {
  if (inputs.size() + 1 != s.shape_begin.size() - 1) return false;
  const std::size_t align = std::min<std::size_t>(size_of(s.prob.type), 16);
  auto fits = [&](const tensor_view& v, std::size_t k) {
    const std::size_t b = s.shape_begin[k], n = s.shape_begin[k + 1] - b;
    if (v.type != s.prob.type || v.device != device || !v.strides.empty() || v.shape.size() != n) return false;
    if (n != 0 && std::memcmp(v.shape.data(), s.shapes.data() + b, n * sizeof(std::int64_t)) != 0) return false;
    return v.data != nullptr && reinterpret_cast<std::uintptr_t>(v.data) % align == 0;
  };
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!fits(inputs[i], i) || inputs[i].data == output.data) return false;
  return fits(output, inputs.size());
}
}  // namespace

void program::run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream) {
  detail::program_state& s = state_of(state_);
  const int device = s.owner->gpu ? s.owner->opt.device : cpu_device;
  const bool dense = dense_views_fit(s, inputs, output, device);
  if (!dense) {
    check_inputs(s.prob, inputs, device);
    check_output(s.prob, inputs, output, device);
  }
  const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
  ++s.owner->api.program_runs;
  if (!s.gpu) {
    write_host(cpu_contract_views(s.prob, inputs), output);
    return;
  }
  s.gpu->run(inputs, output, stream, dense);
}

host_tensor program::run(std::span<const host_tensor> inputs) {
  detail::program_state& s = state_of(state_);
  check_host_inputs(s.prob, inputs);
  if (!s.gpu) {
    const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
    ++s.owner->api.program_runs;
    return cpu::contract(s.prob, inputs);
  }
  const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
  device_staging staging(*s.owner->gpu, s.owner->opt.device);
  host_tensor out(s.prob.type, s.prob.net.shape_of(s.prob.net.output));
  const std::vector<tensor_view> views = staging.upload(inputs);
  const tensor_view o = staging.output_for(out);
  ++s.owner->api.program_runs;
  s.gpu->run(views, o, staging.stream(), true);
  staging.download(out, o.data);
  return out;
}

memory_report program::memory() const {
  const detail::program_state& s = state_of(state_);
  return s.gpu ? s.gpu->memory() : memory_report{};
}
cost_report program::cost() const { return state_of(state_).cost; }
double program::compile_ms() const { return state_of(state_).gpu ? state_->gpu->compile_ms() : 0.0; }
std::size_t program::launches() const { return state_of(state_).gpu ? state_->gpu->launches() : 0; }
bool program::uses_graph() const { return state_of(state_).gpu ? state_->gpu->uses_graph() : false; }
std::string program::graph_note() const { return state_of(state_).gpu ? state_->gpu->graph_note() : "the CPU engine runs each contraction"; }
std::vector<int> program::op_steps() const { return state_of(state_).gpu ? state_->gpu->op_steps() : std::vector<int>{}; }
std::vector<std::string> program::op_kernels() const { return state_of(state_).gpu ? state_->gpu->op_kernels() : std::vector<std::string>{}; }
int program::tiled_chosen() const { return state_of(state_).gpu ? state_->gpu->tiled_chosen() : 0; }
int program::tiled_rejected() const { return state_of(state_).gpu ? state_->gpu->tiled_rejected() : 0; }
int program::algos_changed() const { return state_of(state_).gpu ? state_->gpu->algos_changed() : 0; }
int program::kernel_ranks_chosen() const { return state_of(state_).gpu ? state_->gpu->kernel_ranks_chosen() : 0; }
int program::gemm_candidates() const { return state_of(state_).gpu ? state_->gpu->gemm_candidates() : 0; }
int program::gemm_chosen() const { return state_of(state_).gpu ? state_->gpu->gemm_chosen() : 0; }
int program::gemm_algos_chosen() const { return state_of(state_).gpu ? state_->gpu->gemm_algos_chosen() : 0; }
int program::gemm_dropped() const { return state_of(state_).gpu ? state_->gpu->gemm_dropped() : 0; }
int program::dots_chosen() const { return state_of(state_).gpu ? state_->gpu->dots_chosen() : 0; }
std::string program::layout() const { return state_of(state_).gpu ? state_->gpu->layout() : std::string(); }
std::vector<std::pair<std::string, double>> program::layout_times() const {
  return state_of(state_).gpu ? state_->gpu->layout_times() : std::vector<std::pair<std::string, double>>{};
}
std::vector<tensor_view> program::input_views() const {
  const detail::program_state& s = state_of(state_);
  if (!s.gpu) throw not_supported("input_views: a program of a CPU context has no device buffers of its own");
  std::vector<tensor_view> views(s.prob.net.inputs.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    tensor_view& v = views[i];
    v.data = s.gpu->input_buffer(i);
    v.type = s.prob.type;
    v.shape = std::span<const std::int64_t>(s.shapes).subspan(s.shape_begin[i], s.shape_begin[i + 1] - s.shape_begin[i]);
    v.device = s.owner->opt.device;
  }
  return views;
}

std::vector<float> program::profile_ops() {
  detail::program_state& s = state_of(state_);
  if (!s.gpu) throw not_supported("profile_ops needs a GPU program");
  const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
  return s.gpu->profile_ops();
}
const problem& program::source() const { return state_of(state_).prob; }

// ---- context --------------------------------------------------------------------------------------

context::context(const options& opt) : state_(std::make_shared<context_state>()) {
  state_->opt = opt;
  if (opt.device == cpu_device) return;
  if (opt.device < 0) throw usage_error("device " + std::to_string(opt.device) + " is neither a CUDA ordinal nor cpu_device (-1)");
  if (auto why = unavailable_reason(opt.device); !why.empty()) throw device_error(why);
#ifdef TNRT_HAVE_CUDA
  state_->gpu = detail::make_gpu_backend(opt);
#endif
}

context::~context() = default;
context::context(context&&) noexcept = default;
context& context::operator=(context&&) noexcept = default;

namespace {
context_state& live(const std::shared_ptr<context_state>& s) {
  if (!s) throw usage_error("the context is empty (moved from)");
  return *s;
}
}  // namespace

void context::contract(const problem& p, std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream) {
  context_state& s = live(state_);
  const int device = s.gpu ? s.opt.device : cpu_device;
  check_inputs(p, inputs, device);
  check_output(p, inputs, output, device);
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  ++s.api.eager_calls;
  if (!s.gpu) {
    write_host(cpu_contract_views(p, inputs), output);
    return;
  }
  (void)s.gpu->contract(p, inputs, &output, stream);
}

device_tensor context::contract(const problem& p, std::span<const tensor_view> inputs, stream_handle stream) {
  context_state& s = live(state_);
  const int device = s.gpu ? s.opt.device : cpu_device;
  check_inputs(p, inputs, device);
  device_tensor out;
  out.type_ = p.type;
  out.shape_ = p.net.shape_of(p.net.output);
  out.strides_ = row_major_strides(out.shape_);
  out.device_ = device;
  auto block = std::make_shared<detail::device_block>();
  block->stream = stream;
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  ++s.api.eager_calls;
  if (!s.gpu) {
    block->host = cpu_contract_views(p, inputs);
    block->ptr = block->host.data();
  } else {
    block->ptr = s.gpu->contract(p, inputs, nullptr, stream);
    block->stream = s.gpu->own_stream();  // the pool block belongs to the context's own stream
    block->owner = state_;
  }
  out.block_ = std::move(block);
  return out;
}

host_tensor context::contract(const problem& p, std::span<const host_tensor> inputs) {
  context_state& s = live(state_);
  check_host_inputs(p, inputs);
  if (!s.gpu) {
    const std::lock_guard<std::recursive_mutex> g(s.lock);
    ++s.api.eager_calls;
    return cpu::contract(p, inputs);
  }
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  device_staging staging(*s.gpu, s.opt.device);
  host_tensor out(p.type, p.net.shape_of(p.net.output));
  const std::vector<tensor_view> views = staging.upload(inputs);
  ++s.api.eager_calls;
  staging.download(out, staging.hold(s.gpu->contract(p, views, nullptr, staging.stream())));
  return out;
}

program context::compile(const problem& p) {
  context_state& s = live(state_);
  validate(p.net, p.tree);
  program prog;
  auto st = std::make_unique<detail::program_state>();
  st->owner = state_;
  st->prob = p;
  st->cost = cost_of_problem(p);
  st->shape_begin.push_back(0);
  auto add_shape = [&](const std::vector<label_t>& labels) {
    for (label_t l : labels) st->shapes.push_back(p.net.extents[static_cast<std::size_t>(l)]);
    st->shape_begin.push_back(st->shapes.size());
  };
  for (const std::vector<label_t>& in : p.net.inputs) add_shape(in);
  add_shape(p.net.output);
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  if (s.gpu) st->gpu = s.gpu->compile(p);
  ++s.api.programs_compiled;
  prog.state_ = std::move(st);
  return prog;
}

// ---- sliced contractions -----------------------------------------------------------------------

namespace {

std::string gib_text(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char t[32];
  std::snprintf(t, sizeof t, u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return t;
}

cost_report times(cost_report c, std::int64_t n) {
  c.flops *= static_cast<double>(n);
  c.bytes *= static_cast<double>(n);
  return c;
}

}  // namespace

// What a host-tensor run allocates beside the program: on a GPU, the result and a copy of every
// input from the pool (caching_pool::block_bytes each); on the CPU, the result. Nothing when not counted (runs on
// the caller's views).
static std::size_t host_copies_bytes(const problem& p, bool counted, bool on_gpu) {
  if (!counted) return 0;
  auto block = device::caching_pool::block_bytes;
  std::size_t sum = block(static_cast<std::size_t>(element_count(p.net.shape_of(p.net.output))) * size_of(p.type));
  if (!on_gpu) return sum;
  for (const auto& in : p.net.inputs) sum += block(static_cast<std::size_t>(element_count(p.net.shape_of(in))) * size_of(p.type));
  return sum;
}

slice_report context::plan_sliced(const problem& p, const slice_request& request) {
  context_state& s = live(state_);
  validate(p.net, p.tree);
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  slice_report r;
  r.result_bytes = static_cast<std::size_t>(element_count(p.net.shape_of(p.net.output))) * size_of(p.type);
  const std::size_t reserve = host_copies_bytes(p, request.count_result, s.gpu != nullptr);
  std::size_t limit = request.memory_limit_bytes != 0 ? request.memory_limit_bytes : s.opt.memory_limit_bytes;
  if (s.gpu) {
    // A requested limit is capped at what the device has (free plus the pool's cache), as compile's
    // admission caps it; without one, the options' limit (80% of that by default).
    std::size_t device_limit = 0, available = 0;
    if (s.gpu->memory_limit(&device_limit, &available)) limit = request.memory_limit_bytes != 0 ? std::min(limit, available) : device_limit;
  }
  if (limit == 0) limit = std::numeric_limits<std::size_t>::max();  // a CPU context without a limit
  r.limit_bytes = limit;
  r.predicted_exactly = s.gpu != nullptr;
  auto predict = [&](const std::vector<label_t>& labels) {
    const problem q = slice_problem(p, labels);
    if (!s.gpu) return slice_peak_bytes(q) + reserve;
    try {
      return s.gpu->predict_bytes(q) + s.gpu->slice_table_bytes(p, labels.size()) + reserve;
    } catch (const out_of_memory&) {  // a tensor of one slice larger than the device: does not fit
      return std::numeric_limits<std::size_t>::max();
    }
  };
  // Labels the request names are the plan (an error when one slice of them does not fit); the
  // file's own are taken when they fit, else the search below finds others.
  const std::vector<label_t>& given = !request.labels.empty() ? request.labels : p.slices;
  bool planned = false;
  if (!given.empty()) {
    r.plan = plan_slices(p, std::numeric_limits<std::size_t>::max(), given);
    r.predicted_bytes = predict(r.plan.labels);
    planned = r.predicted_bytes <= limit;
    if (!planned && !request.labels.empty())
      throw out_of_memory((p.source.empty() ? std::string("the problem") : p.source) + ": one slice over the given labels " +
                          p.net.describe(r.plan.labels) + " needs " + gib_text(r.predicted_bytes) + " but the memory limit is " +
                          gib_text(limit) + "; slice more labels, or give a larger limit");
  }
  if (!planned) {
    if (limit <= reserve)
      throw out_of_memory("the result alone (" + gib_text(reserve) + ") does not fit the memory limit of " + gib_text(limit));
    // The core estimate first; then, while the program's own plan says it does not fit, a smaller
    // budget (the labels chosen under a smaller budget extend those chosen under a larger one).
    std::size_t budget = limit - reserve;
    for (int attempt = 0;; ++attempt) {
      r.plan = plan_slices(p, budget);
      r.predicted_bytes = predict(r.plan.labels);
      if (r.predicted_bytes <= limit) break;
      if (attempt == 24 || budget < 1024)
        throw out_of_memory((p.source.empty() ? std::string("the problem") : p.source) + ": no slicing found that fits the memory limit of " +
                            gib_text(limit) + " (the smallest tried needs " + gib_text(r.predicted_bytes) + ")");
      const double over = static_cast<double>(r.predicted_bytes - reserve) / static_cast<double>(limit - reserve);
      budget = static_cast<std::size_t>(static_cast<double>(budget) / std::max(over * 1.05, 1.25));
    }
  }
  // Slices at once: as many one-slice programs (and partial results beside the first) as fit.
  if (request.parallel < 0) throw usage_error("slice_request::parallel must not be negative");
  if (s.gpu && r.plan.slices > 1) {
    const std::size_t one = r.predicted_bytes - reserve;
    const std::size_t partial = device::caching_pool::block_bytes(r.result_bytes);
    std::int64_t k = std::min<std::int64_t>(request.parallel > 0 ? request.parallel : 4, r.plan.slices);
    while (k > 1 && static_cast<double>(k) * static_cast<double>(one) + static_cast<double>(k - 1) * static_cast<double>(partial) +
                            static_cast<double>(reserve) > static_cast<double>(limit))
      --k;
    r.parallel = static_cast<int>(k);
    r.predicted_bytes = static_cast<std::size_t>(k) * one + static_cast<std::size_t>(k - 1) * partial + reserve;
  }
  r.cost_unsliced = cost_of_problem(p);
  r.cost = times(cost_of_problem(slice_problem(p, r.plan.labels)), r.plan.slices);
  return r;
}

sliced_program context::compile_sliced(const problem& p, const slice_request& request) {
  context_state& s = live(state_);
  auto st = std::make_unique<detail::sliced_state>();
  st->report = plan_sliced(p, request);
  st->owner = state_;
  st->prob = p;
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  if (s.gpu)
    st->gpu = s.gpu->compile_sliced(p, st->report.plan.labels, host_copies_bytes(p, request.count_result, true), st->report.limit_bytes,
                                    st->report.parallel);
  ++s.api.programs_compiled;
  sliced_program sp;
  sp.state_ = std::move(st);
  return sp;
}

sliced_program::sliced_program() = default;
sliced_program::~sliced_program() = default;
sliced_program::sliced_program(sliced_program&&) noexcept = default;
sliced_program& sliced_program::operator=(sliced_program&&) noexcept = default;

namespace {
detail::sliced_state& sliced_of(const std::unique_ptr<detail::sliced_state>& s) {
  if (!s) throw usage_error("the sliced program is empty (moved from, or never compiled)");
  return *s;
}
std::int64_t checked_count(const detail::sliced_state& s, std::int64_t first, std::int64_t count) {
  const std::int64_t all = s.report.plan.slices;
  if (count < 0) count = all - first;
  if (first < 0 || first > all || count > all - first)
    throw shape_error("slices [" + std::to_string(first) + ", " + std::to_string(first + count) + ") are not within the " + std::to_string(all) +
                      " slices");
  return count;
}
}  // namespace

void sliced_program::run(std::span<const tensor_view> inputs, const tensor_view& output, stream_handle stream, std::int64_t first,
                         std::int64_t count) {
  detail::sliced_state& s = sliced_of(state_);
  const int device = s.owner->gpu ? s.owner->opt.device : cpu_device;
  check_inputs(s.prob, inputs, device);
  check_output(s.prob, inputs, output, device);
  count = checked_count(s, first, count);
  const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
  ++s.owner->api.program_runs;
  if (!s.gpu) {
    write_host(cpu::contract_sliced(s.prob, host_copies(inputs), s.report.plan.labels, {}, first, count), output);
    return;
  }
  s.gpu->run(inputs, output, stream, first, count, true);
}

host_tensor sliced_program::run(std::span<const host_tensor> inputs, const slice_progress_fn& progress, std::int64_t first, std::int64_t count) {
  detail::sliced_state& s = sliced_of(state_);
  check_host_inputs(s.prob, inputs);
  count = checked_count(s, first, count);
  if (!s.gpu) {
    const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
    ++s.owner->api.program_runs;
    return cpu::contract_sliced(s.prob, inputs, s.report.plan.labels, progress, first, count);
  }
  const std::lock_guard<std::recursive_mutex> g(s.owner->lock);
  device_staging staging(*s.owner->gpu, s.owner->opt.device);
  host_tensor out(s.prob.type, s.prob.net.shape_of(s.prob.net.output));
  const std::vector<tensor_view> views = staging.upload(inputs);
  const tensor_view o = staging.output_for(out);
  ++s.owner->api.program_runs;
  // In chunks of about a hundredth when progress is asked for, the first zeroing the result and
  // the rest adding to it: progress then follows the device (a wait per chunk).
  const std::int64_t chunk = progress ? std::max<std::int64_t>(1, count / 100) : std::max<std::int64_t>(count, 1);
  std::int64_t done = 0;
  do {
    const std::int64_t n = std::min(chunk, count - done);
    s.gpu->run(views, o, staging.stream(), first + done, n, done == 0);
    done += n;
    if (progress) {
      s.owner->gpu->wait(staging.stream());
      progress(done, count);
    }
  } while (done < count);
  staging.download(out, o.data);
  return out;
}

const slice_report& sliced_program::report() const { return sliced_of(state_).report; }
std::int64_t sliced_program::slices() const { return sliced_of(state_).report.plan.slices; }
memory_report sliced_program::memory() const {
  const detail::sliced_state& s = sliced_of(state_);
  return s.gpu ? s.gpu->memory() : memory_report{};
}
bool sliced_program::uses_graph() const {
  const detail::sliced_state& s = sliced_of(state_);
  return s.gpu ? s.gpu->uses_graph() : false;
}
const problem& sliced_program::source() const { return sliced_of(state_).prob; }

counters context::stats() const {
  const context_state& s = live(state_);
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  counters c = s.gpu ? s.gpu->stats() : counters{};
  const api_stats backend = c.api;
  c.api = s.api;
  c.api.analysis_hits = backend.analysis_hits;
  c.api.analysis_misses = backend.analysis_misses;
  c.api.eager_layout_trials = backend.eager_layout_trials;
  c.api.eager_layouts_column = backend.eager_layouts_column;
  c.api.eager_layouts_row = backend.eager_layouts_row;
  c.api.eager_layouts_follow = backend.eager_layouts_follow;
  c.api.eager_layouts_planned = backend.eager_layouts_planned;
  c.api.eager_route_trials = backend.eager_route_trials;
  c.api.eager_route_steps = backend.eager_route_steps;
  c.api.eager_route_tiled = backend.eager_route_tiled;
  c.api.eager_route_picked = backend.eager_route_picked;
  c.api.eager_route_saving_us = backend.eager_route_saving_us;
  c.api.eager_route_check_library_us = backend.eager_route_check_library_us;
  c.api.eager_route_check_route_us = backend.eager_route_check_route_us;
  c.api.bridged_calls = backend.bridged_calls;
  return c;
}

void context::synchronize() {
  context_state& s = live(state_);
  const std::lock_guard<std::recursive_mutex> g(s.lock);
  if (s.gpu) s.gpu->synchronize();
}

const options& context::opts() const noexcept { return state_->opt; }
bool context::on_cpu() const noexcept { return state_ == nullptr || state_->gpu == nullptr; }
std::string context::device_name() const { return on_cpu() ? std::string() : state_->gpu->device_name(); }
std::string context::driver_version() const { return on_cpu() ? std::string() : state_->gpu->driver_version(); }
std::string context::cuda_version() const { return on_cpu() ? std::string() : state_->gpu->cuda_version(); }
std::string context::cutensor_version() const { return on_cpu() ? std::string() : state_->gpu->cutensor_version(); }

}  // namespace tnrt
