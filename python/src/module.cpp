// tnrt._tnrt: the nanobind bindings of tnrt's library API (include/tnrt/context.hpp). The package
// (python/tnrt) turns what users write (einsum expressions, DLPack operands, framework streams)
// into these few entry points: Problem (a network, its tree and element type), Context (eager
// contractions), Program (compiled), and the error translator.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tnrt/cpu.hpp"
#include "tnrt/dtype.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/network.hpp"
#include "tnrt/options.hpp"
#include "tnrt/path.hpp"
#include "tnrt/search.hpp"
#include "tnrt/tensor.hpp"
#if TNRT_PY_CONTEXT
#include "tnrt/context.hpp"
#endif
#if TNRT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// Python exception types, handed over once by tnrt/_errors.py (they subclass both TnrtError and the
// matching builtin, which nb::exception<> cannot express).
enum error_slot : std::size_t { e_base, e_parse, e_shape, e_path, e_dtype, e_oom, e_device, e_not_supported, e_io, e_usage, e_count };
std::array<PyObject*, e_count> error_types{};

void raise_as(error_slot slot, const std::exception& e) {
  PyObject* type = error_types[slot] != nullptr ? error_types[slot] : PyExc_RuntimeError;
  PyErr_SetString(type, e.what());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const tnrt::parse_error& e) {
    raise_as(e_parse, e);
  } catch (const tnrt::shape_error& e) {
    raise_as(e_shape, e);
  } catch (const tnrt::path_error& e) {
    raise_as(e_path, e);
  } catch (const tnrt::dtype_error& e) {
    raise_as(e_dtype, e);
  } catch (const tnrt::out_of_memory& e) {
    raise_as(e_oom, e);
  } catch (const tnrt::device_error& e) {
    raise_as(e_device, e);
  } catch (const tnrt::not_supported& e) {
    raise_as(e_not_supported, e);
  } catch (const tnrt::io_error& e) {
    raise_as(e_io, e);
  } catch (const tnrt::usage_error& e) {
    raise_as(e_usage, e);
  } catch (const tnrt::error& e) {
    raise_as(e_base, e);
  }
}

std::optional<tnrt::dtype> dtype_of(const nb::dlpack::dtype& t) {
  const auto code = static_cast<nb::dlpack::dtype_code>(t.code);
  if (t.lanes != 1) return std::nullopt;
  if (code == nb::dlpack::dtype_code::Float && t.bits == 32) return tnrt::dtype::f32;
  if (code == nb::dlpack::dtype_code::Float && t.bits == 64) return tnrt::dtype::f64;
  if (code == nb::dlpack::dtype_code::Complex && t.bits == 64) return tnrt::dtype::c64;
  if (code == nb::dlpack::dtype_code::Complex && t.bits == 128) return tnrt::dtype::c128;
  return std::nullopt;
}

nb::dlpack::dtype dlpack_of(tnrt::dtype t) {
  switch (t) {
    case tnrt::dtype::f32: return nb::dtype<float>();
    case tnrt::dtype::f64: return nb::dtype<double>();
    case tnrt::dtype::c64: return nb::dtype<std::complex<float>>();
    case tnrt::dtype::c128: break;
  }
  return nb::dtype<std::complex<double>>();
}

std::string dlpack_name(const nb::dlpack::dtype& t) {
  const char* kind = "dlpack type ";
  switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Int: kind = "int"; break;
    case nb::dlpack::dtype_code::UInt: kind = "uint"; break;
    case nb::dlpack::dtype_code::Float: kind = "float"; break;
    case nb::dlpack::dtype_code::Complex: kind = "complex"; break;
    case nb::dlpack::dtype_code::Bool: kind = "bool"; break;
    case nb::dlpack::dtype_code::Bfloat: kind = "bfloat"; break;
    default: break;
  }
  return std::string(kind) + std::to_string(t.bits);
}


/// Element type, shape and strides (in elements) of one operand, checked against the problem.
struct operand_info {
  void* data = nullptr;
  tnrt::dtype type = tnrt::dtype::f32;
  std::vector<std::int64_t> shape, strides;
  int device_type = 0, device_id = 0;
};

template <class Array>
operand_info describe(const Array& a, std::size_t index, const std::vector<std::int64_t>& want, tnrt::dtype want_type,
                      const char* what) {
  operand_info o;
  const auto t = dtype_of(a.dtype());
  if (!t) {
    throw tnrt::dtype_error(std::string(what) + " " + std::to_string(index) + " has element type " + dlpack_name(a.dtype()) +
                            "; tnrt computes in float32, float64, complex64 and complex128");
  }
  if (*t != want_type) {
    throw tnrt::dtype_error(std::string(what) + " " + std::to_string(index) + " is " + std::string(tnrt::name_of(*t)) +
                            " but the problem is " + std::string(tnrt::name_of(want_type)) + " (mixed element types)");
  }
  o.type = *t;
  o.data = const_cast<void*>(static_cast<const void*>(a.data()));  // inputs are only read
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    o.shape.push_back(a.shape(i));
    o.strides.push_back(a.stride(i));
  }
  if (o.shape != want) {
    auto text = [](const std::vector<std::int64_t>& s) {
      std::string r = "(";
      for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
      return r + (s.size() == 1 ? ",)" : ")");
    };
    throw tnrt::shape_error(std::string(what) + " " + std::to_string(index) + " has shape " + text(o.shape) + " but the problem expects " +
                            text(want));
  }
  o.device_type = a.device_type();
  o.device_id = a.device_id();
  return o;
}

/// Copies a strided host array (any strides, negative included) into a row-major host tensor.
tnrt::host_tensor to_host_tensor(const operand_info& o) {
  tnrt::host_tensor t(o.type, o.shape);
  const std::size_t es = tnrt::size_of(o.type);
  const auto* src = static_cast<const std::byte*>(o.data);
  auto* dst = static_cast<std::byte*>(t.data());
  const std::size_t rank = o.shape.size();
  if (t.size() == 0) return t;
  bool row_major = true;
  std::int64_t expect = 1;
  for (std::size_t i = rank; i-- > 0;) {
    if (o.shape[i] != 1 && o.strides[i] != expect) row_major = false;
    expect *= o.shape[i];
  }
  if (row_major) {
    std::memcpy(dst, src, t.bytes());
    return t;
  }
  std::vector<std::int64_t> idx(rank, 0);
  const std::int64_t n = t.size();
  std::int64_t offset = 0;  // in elements, of idx in the source
  for (std::int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + static_cast<std::size_t>(k) * es, src + offset * static_cast<std::int64_t>(es), es);
    for (std::size_t d = rank; d-- > 0;) {
      offset += o.strides[d];
      if (++idx[d] < o.shape[d]) break;
      offset -= o.strides[d] * o.shape[d];
      idx[d] = 0;
    }
  }
  return t;
}

nb::object numpy_of(tnrt::host_tensor&& result) {
  auto* owned = new tnrt::host_tensor(std::move(result));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<tnrt::host_tensor*>(p); });
  std::vector<std::size_t> shape(owned->shape().begin(), owned->shape().end());
  return nb::cast(nb::ndarray<nb::numpy>(owned->data(), shape.size(), shape.data(), owner, nullptr, dlpack_of(owned->type()),
                                         nb::device::cpu::value));
}

tnrt::path_optimizer optimizer_of(const std::string& name) {
  if (name == "greedy") return tnrt::path_optimizer::greedy;
  if (name == "exhaustive" || name == "optimal") return tnrt::path_optimizer::exhaustive;
  if (name == "auto" || name == "automatic") return tnrt::path_optimizer::automatic;
  if (name == "hyper" || name == "random-greedy") return tnrt::path_optimizer::hyper;
  throw tnrt::usage_error("unknown path optimizer '" + name + "' (greedy, exhaustive, auto, hyper, a linear path or a cotengra tree)");
}

tnrt::problem problem_from_expression(const std::string& expr, const std::vector<std::vector<std::int64_t>>& shapes,
                                      const std::string& type, const std::optional<std::vector<std::vector<int>>>& path,
                                      const std::string& optimizer) {
  tnrt::problem p;
  p.net = tnrt::parse_expression(expr, shapes);
  p.type = tnrt::parse_dtype(type);
  p.tree = tnrt::tree_from_linear_path(p.net, path ? *path : tnrt::optimize_path(p.net, optimizer_of(optimizer), p.type));
  tnrt::validate(p.net, p.tree);
  p.source = "python";
  return p;
}

std::vector<std::vector<std::int64_t>> input_shapes(const tnrt::problem& p) {
  std::vector<std::vector<std::int64_t>> r;
  for (const auto& labels : p.net.inputs) r.push_back(p.net.shape_of(labels));
  return r;
}

std::vector<operand_info> describe_all(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs) {
  if (inputs.size() != p.net.inputs.size()) {
    throw tnrt::shape_error("the problem has " + std::to_string(p.net.inputs.size()) + " operands but " + std::to_string(inputs.size()) +
                            " were given");
  }
  std::vector<operand_info> r;
  for (std::size_t i = 0; i < inputs.size(); ++i) r.push_back(describe(inputs[i], i, p.net.shape_of(p.net.inputs[i]), p.type, "operand"));
  return r;
}

nb::object contract_host_impl(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs, void* ctx);

#if TNRT_PY_CONTEXT
/// A view of `o`: its shape and strides stay in `o`, which must outlive the view.
tnrt::tensor_view view_of(const operand_info& o) {
  tnrt::tensor_view t;
  t.data = o.data;
  t.type = o.type;
  t.shape = o.shape;
  t.strides = o.strides;
  t.device = o.device_type == nb::device::cpu::value ? tnrt::cpu_device : o.device_id;
  return t;
}

std::vector<tnrt::tensor_view> views_of(const std::vector<operand_info>& ops) {
  std::vector<tnrt::tensor_view> v;
  for (const auto& o : ops) v.push_back(view_of(o));
  return v;
}

nb::object export_device_tensor(tnrt::device_tensor&& result) {
  auto* owned = new tnrt::device_tensor(std::move(result));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<tnrt::device_tensor*>(p); });
  std::vector<std::size_t> shape(owned->shape().begin(), owned->shape().end());
  const auto& strides = owned->strides();
  return nb::cast(nb::ndarray<>(owned->data(), shape.size(), shape.data(), owner, strides.empty() ? nullptr : strides.data(),
                                dlpack_of(owned->type()), nb::device::cuda::value, owned->device()));
}

nb::dict dict_of(const tnrt::memory_report& m) {
  nb::dict d;
  d["arena_bytes"] = m.arena_bytes;
  d["lower_bound_bytes"] = m.lower_bound_bytes;
  d["tensor_bound_bytes"] = m.tensor_bound_bytes;
  d["workspace_bytes"] = m.workspace_bytes;
  d["input_bytes"] = m.input_bytes;
  d["scratch_bytes"] = m.scratch_bytes;
  d["total_bytes"] = m.total_bytes;
  return d;
}

nb::dict dict_of(const tnrt::counters& c) {
  nb::dict d, pc, api, syncs;
  pc["entries"] = c.plan_cache.entries;
  pc["capacity"] = c.plan_cache.capacity;
  pc["hits"] = c.plan_cache.hits;
  pc["misses"] = c.plan_cache.misses;
  pc["evictions"] = c.plan_cache.evictions;
  api["eager_calls"] = c.api.eager_calls;
  api["program_runs"] = c.api.program_runs;
  api["programs_compiled"] = c.api.programs_compiled;
  api["analysis_hits"] = c.api.analysis_hits;
  api["analysis_misses"] = c.api.analysis_misses;
  api["eager_layout_trials"] = c.api.eager_layout_trials;
  api["eager_layouts_column"] = c.api.eager_layouts_column;
  api["eager_layouts_row"] = c.api.eager_layouts_row;
  api["eager_layouts_follow"] = c.api.eager_layouts_follow;
  api["eager_layouts_planned"] = c.api.eager_layouts_planned;
  api["eager_route_trials"] = c.api.eager_route_trials;
  api["eager_route_steps"] = c.api.eager_route_steps;
  api["eager_route_tiled"] = c.api.eager_route_tiled;
  api["eager_route_picked"] = c.api.eager_route_picked;
  api["eager_route_saving_us"] = c.api.eager_route_saving_us;
  api["eager_route_check_library_us"] = c.api.eager_route_check_library_us;
  api["eager_route_check_route_us"] = c.api.eager_route_check_route_us;
  api["bridged_calls"] = c.api.bridged_calls;
  syncs["stream_syncs"] = c.syncs.stream_syncs;
  syncs["device_syncs"] = c.syncs.device_syncs;
  syncs["event_syncs"] = c.syncs.event_syncs;
  d["plan_cache"] = pc;
  d["api"] = api;
  d["syncs"] = syncs;
  return d;
}

nb::object contract_host_impl(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs, void* ctx) {
  auto ops = describe_all(p, inputs);
  tnrt::host_tensor result;
  {
    nb::gil_scoped_release release;
    std::vector<tnrt::host_tensor> host;
    for (const auto& o : ops) host.push_back(to_host_tensor(o));
    result = static_cast<tnrt::context*>(ctx)->contract(p, host);
  }
  return numpy_of(std::move(result));
}
#else
nb::object contract_host_impl(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs, void*) {
  auto ops = describe_all(p, inputs);
  tnrt::host_tensor result;
  {
    nb::gil_scoped_release release;
    std::vector<tnrt::host_tensor> host;
    for (const auto& o : ops) host.push_back(to_host_tensor(o));
    result = tnrt::cpu::contract(p, host);
  }
  return numpy_of(std::move(result));
}
#endif

/// One context: the CPU engine (device -1) or a GPU. Calls from several Python threads are fine:
/// the C++ context serializes them on its own lock (with the GIL released).
class py_context {
  /// "never" | "always" | "automatic" (a typed error for anything else).
  static tnrt::kernel_choice choice_of(const std::string& key, nb::handle v) {
    const auto s = nb::cast<std::string>(v);
    if (s == "never") return tnrt::kernel_choice::never;
    if (s == "always") return tnrt::kernel_choice::always;
    if (s == "automatic") return tnrt::kernel_choice::automatic;
    throw tnrt::usage_error("option '" + key + "' is 'never', 'always' or 'automatic', not '" + s + "'");
  }

 public:
  py_context(int device, const nb::dict& kw) {
    opt_.device = device;
    for (auto [k, v] : kw) {
      const std::string key = nb::cast<std::string>(k);
      if (key == "plan_cache_entries") opt_.plan_cache_entries = nb::cast<std::size_t>(v);
      else if (key == "workspace_cap") opt_.workspace_cap = nb::cast<std::size_t>(v);
      else if (key == "jit") opt_.jit = nb::cast<bool>(v);
      else if (key == "jit_steps") opt_.jit_steps = nb::cast<int>(v);
      else if (key == "kernel_ranks") {  // the CLI's --kernel-ranks: 0 (none) to 64
        opt_.kernel_ranks = nb::cast<int>(v);
        if (opt_.kernel_ranks < 0 || opt_.kernel_ranks > 64)
          throw tnrt::usage_error("option 'kernel_ranks' must be in [0, 64], got " + std::to_string(opt_.kernel_ranks));
      }
      else if (key == "gemm_algos") {  // the CLI's --gemm-algos: 0 (none) to 64
        opt_.gemm_algos = nb::cast<int>(v);
        if (opt_.gemm_algos < 0 || opt_.gemm_algos > 64)
          throw tnrt::usage_error("option 'gemm_algos' must be in [0, 64], got " + std::to_string(opt_.gemm_algos));
      }
      else if (key == "autotune") opt_.autotune = nb::cast<bool>(v);
      else if (key == "algo") opt_.algo = nb::cast<int>(v);
      else if (key == "use_graph") opt_.use_graph = nb::cast<bool>(v);
      else if (key == "fuse_small_steps") opt_.fuse_small_steps = nb::cast<bool>(v);
      else if (key == "fuse_max_elements") opt_.fuse_max_elements = nb::cast<std::int64_t>(v);
      else if (key == "tiled_kernel") opt_.tiled_kernel = choice_of(key, v);
      else if (key == "full_dot") opt_.full_dot = choice_of(key, v);
      else if (key == "fuse_stage") opt_.fuse_stage = nb::cast<bool>(v);
      else if (key == "fuse_levels") opt_.fuse_levels = nb::cast<bool>(v);
      else if (key == "tiled_table") opt_.tiled_table = nb::cast<bool>(v);
      else if (key == "algo_timing") opt_.library_algos = choice_of(key, v);
      else if (key == "step_timing") {
        const auto s = nb::cast<std::string>(v);
        if (s != "device" && s != "enqueue") throw tnrt::usage_error("option 'step_timing' is 'device' or 'enqueue', not '" + s + "'");
        opt_.step_timing = s == "device" ? tnrt::timing_method::device : tnrt::timing_method::enqueue;
      }
      else if (key == "gemm") opt_.gemm_lowering = choice_of(key, v);
      else if (key == "gemm_copies") opt_.gemm_copies = choice_of(key, v);
      else if (key == "gemm_check") opt_.gemm_check = choice_of(key, v);
      else if (key == "grid_steps") opt_.grid_steps = choice_of(key, v);
      else if (key == "chains") opt_.chain_steps = choice_of(key, v);
      else if (key == "gemm_workspace_bytes") opt_.gemm_workspace_bytes = nb::cast<std::size_t>(v);
      else if (key == "branches") opt_.concurrent_branches = choice_of(key, v);
      else if (key == "split_sums") opt_.split_sums = choice_of(key, v);
      else if (key == "time_layouts") opt_.time_layouts = nb::cast<bool>(v);
      else if (key == "layout") {  // the CLI's --layout: 'auto' times (compiled) or learns (eager) it, else fixed
        const auto s = nb::cast<std::string>(v);
        const std::optional<tnrt::layout_policy> l = tnrt::layout_named(s);
        if (s != "auto" && !l) throw tnrt::usage_error("option 'layout' is 'auto', 'column', 'row', 'follow' or 'planned', not '" + s + "'");
        opt_.time_layouts = !l;
        if (l) opt_.intermediate_layout = *l;
      }
      else if (key == "precision") {
        const auto s = nb::cast<std::string>(v);
        if (s != "full" && s != "tf32" && s != "tf32x3") throw tnrt::usage_error("option 'precision' is 'full', 'tf32' or 'tf32x3', not '" + s + "'");
        opt_.compute_precision = s == "tf32" ? tnrt::precision::tf32 : s == "tf32x3" ? tnrt::precision::tf32x3 : tnrt::precision::full;
      }
      else {
        throw tnrt::usage_error("unknown option '" + key + "'");
      }
    }
#if TNRT_PY_CONTEXT
    nb::gil_scoped_release release;
    ctx_ = std::make_unique<tnrt::context>(opt_);
#else
    if (device != tnrt::cpu_device) {
      throw tnrt::device_error("this build of tnrt's Python module has only the CPU engine (no library context yet)");
    }
#endif
  }

  [[nodiscard]] int device() const noexcept { return opt_.device; }

  nb::object contract_host(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs) {
#if TNRT_PY_CONTEXT
    return contract_host_impl(p, inputs, ctx_.get());
#else
    return contract_host_impl(p, inputs, nullptr);
#endif
  }

#if TNRT_PY_CONTEXT
  void contract_into(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs, const nb::ndarray<>& out, std::uintptr_t stream) {
    auto ops = describe_all(p, inputs);
    auto out_info = describe(out, 0, p.net.shape_of(p.net.output), p.type, "out");
    auto views = views_of(ops);
    const auto out_view = view_of(out_info);
    nb::gil_scoped_release release;
    ctx_->contract(p, views, out_view, reinterpret_cast<tnrt::stream_handle>(stream));
  }
  nb::object contract_alloc(const tnrt::problem& p, const std::vector<nb::ndarray<nb::ro>>& inputs, std::uintptr_t stream) {
    auto ops = describe_all(p, inputs);
    auto views = views_of(ops);
    tnrt::device_tensor result;
    {
      nb::gil_scoped_release release;
      result = ctx_->contract(p, views, reinterpret_cast<tnrt::stream_handle>(stream));
    }
    return export_device_tensor(std::move(result));
  }
  [[nodiscard]] nb::dict stats() const { return dict_of(ctx_->stats()); }
  void synchronize() {
    nb::gil_scoped_release release;
    ctx_->synchronize();
  }
  [[nodiscard]] std::string device_name() const { return ctx_->device_name(); }
  tnrt::context& get() { return *ctx_; }

 private:
  std::unique_ptr<tnrt::context> ctx_;
#else
  [[noreturn]] static void no_device() { throw tnrt::not_supported("device operands need the library context, not in this build yet"); }
  void contract_into(const tnrt::problem&, const std::vector<nb::ndarray<nb::ro>>&, const nb::ndarray<>&, std::uintptr_t) { no_device(); }
  nb::object contract_alloc(const tnrt::problem&, const std::vector<nb::ndarray<nb::ro>>&, std::uintptr_t) { no_device(); }
  [[nodiscard]] nb::dict stats() const { return {}; }
  void synchronize() {}
  [[nodiscard]] std::string device_name() const { return ""; }

 private:
#endif
  tnrt::options opt_;
};

#if TNRT_PY_CONTEXT
/// A network's operands imported once (DLPack), with their views: a compiled Network runs on them
/// until reset_operands, so a call converts no operand (550 DLPack exchanges cost milliseconds).
class py_operands {
 public:
  py_operands(const tnrt::problem& p, std::vector<nb::ndarray<nb::ro>> inputs) : arrays_(std::move(inputs)) {
    ops_ = describe_all(p, arrays_);
    views_ = views_of(ops_);  // into ops_' shapes and strides, which never change from here on
  }
  [[nodiscard]] const std::vector<tnrt::tensor_view>& views() const noexcept { return views_; }

 private:
  std::vector<nb::ndarray<nb::ro>> arrays_;  // keep the producers' memory alive
  std::vector<operand_info> ops_;
  std::vector<tnrt::tensor_view> views_;
};

class py_program {
 public:
  py_program(py_context& ctx, const tnrt::problem& p) {
    nb::gil_scoped_release release;
    prog_ = ctx.get().compile(p);
  }
  void run(const std::vector<nb::ndarray<nb::ro>>& inputs, const nb::ndarray<>& out, std::uintptr_t stream) {
    const auto& p = prog_.source();
    auto ops = describe_all(p, inputs);
    auto out_info = describe(out, 0, p.net.shape_of(p.net.output), p.type, "out");
    auto views = views_of(ops);
    const auto out_view = view_of(out_info);
    nb::gil_scoped_release release;
    prog_.run(views, out_view, reinterpret_cast<tnrt::stream_handle>(stream));
  }
  void run_prepared(const py_operands& inputs, const nb::ndarray<>& out, std::uintptr_t stream) {
    const auto& p = prog_.source();
    auto out_info = describe(out, 0, p.net.shape_of(p.net.output), p.type, "out");
    const auto out_view = view_of(out_info);
    nb::gil_scoped_release release;
    prog_.run(inputs.views(), out_view, reinterpret_cast<tnrt::stream_handle>(stream));
  }
  [[nodiscard]] nb::dict memory() const { return dict_of(prog_.memory()); }
  [[nodiscard]] nb::dict info() const {
    nb::dict d;
    d["flops"] = prog_.cost().flops;
    d["bytes"] = prog_.cost().bytes;
    d["compile_ms"] = prog_.compile_ms();
    d["launches"] = prog_.launches();
    d["uses_graph"] = prog_.uses_graph();
    d["graph_note"] = prog_.graph_note();
    d["tiled_chosen"] = prog_.tiled_chosen();
    d["tiled_rejected"] = prog_.tiled_rejected();
    d["algos_changed"] = prog_.algos_changed();
    d["kernel_ranks_chosen"] = prog_.kernel_ranks_chosen();
    d["gemm_candidates"] = prog_.gemm_candidates();
    d["gemm_chosen"] = prog_.gemm_chosen();
    d["gemm_algos_chosen"] = prog_.gemm_algos_chosen();
    d["gemm_dropped"] = prog_.gemm_dropped();
    d["dots_chosen"] = prog_.dots_chosen();
    d["layout"] = prog_.layout();
    nb::dict lt;
    for (const auto& [name, ms] : prog_.layout_times()) lt[name.c_str()] = ms;
    d["layout_times_ms"] = lt;
    return d;
  }

 private:
  tnrt::program prog_;
};

/// A sliced contraction (context::compile_sliced): GPU runs on device arrays, CPU runs on host arrays.
class py_sliced {
 public:
  py_sliced(py_context& ctx, const tnrt::problem& p, const std::vector<std::string>& labels, std::size_t memory_limit) {
    tnrt::slice_request req;
    for (const std::string& name : labels) {
      const auto it = std::find(p.net.label_names.begin(), p.net.label_names.end(), name);
      if (it == p.net.label_names.end()) throw tnrt::shape_error("slicing: the network has no index '" + name + "'");
      req.labels.push_back(static_cast<tnrt::label_t>(it - p.net.label_names.begin()));
    }
    req.memory_limit_bytes = memory_limit;
    req.count_result = false;  // runs write into the caller's arrays
    nb::gil_scoped_release release;
    sp_ = ctx.get().compile_sliced(p, req);
  }
  void run(const std::vector<nb::ndarray<nb::ro>>& inputs, const nb::ndarray<>& out, std::uintptr_t stream, std::int64_t first,
           std::int64_t count) {
    const auto& p = sp_.source();
    auto ops = describe_all(p, inputs);
    auto out_info = describe(out, 0, p.net.shape_of(p.net.output), p.type, "out");
    auto views = views_of(ops);
    const auto out_view = view_of(out_info);
    nb::gil_scoped_release release;
    sp_.run(views, out_view, reinterpret_cast<tnrt::stream_handle>(stream), first, count);
  }
  nb::object run_host(const std::vector<nb::ndarray<nb::ro>>& inputs, std::int64_t first, std::int64_t count) {
    const auto& p = sp_.source();
    std::vector<tnrt::host_tensor> host;
    for (const operand_info& o : describe_all(p, inputs)) host.push_back(to_host_tensor(o));
    tnrt::host_tensor r;
    {
      nb::gil_scoped_release release;
      r = sp_.run(host, {}, first, count);
    }
    return numpy_of(std::move(r));
  }
  [[nodiscard]] nb::dict report() const {
    const tnrt::slice_report& r = sp_.report();
    const tnrt::problem& p = sp_.source();
    nb::dict d;
    std::vector<std::string> names;
    for (tnrt::label_t l : r.plan.labels) names.push_back(p.net.label_names[static_cast<std::size_t>(l)]);
    d["labels"] = names;
    d["slices"] = r.plan.slices;
    d["flops_sliced"] = r.plan.flops_sliced;
    d["flops_unsliced"] = r.plan.flops_unsliced;
    d["predicted_bytes"] = r.predicted_bytes;
    d["predicted_exactly"] = r.predicted_exactly;
    d["limit_bytes"] = r.limit_bytes;
    return d;
  }
  [[nodiscard]] nb::dict memory() const { return dict_of(sp_.memory()); }

 private:
  tnrt::sliced_program sp_;
};
#endif

}  // namespace

NB_MODULE(_tnrt, m) {
  m.doc() = "tnrt's C++ library API (use the tnrt package, not this module)";
  nb::register_exception_translator(translate);

  m.def("_register_errors", [](const std::vector<nb::object>& types) {
    if (types.size() != e_count) throw tnrt::usage_error("_register_errors: expected " + std::to_string(e_count) + " types");
    for (std::size_t i = 0; i < e_count; ++i) {
      Py_XDECREF(error_types[i]);
      error_types[i] = types[i].inc_ref().ptr();
    }
  });

  m.def(
      "linear_path",
      [](const std::string& expr, const std::vector<std::vector<std::int64_t>>& shapes, const std::string& optimizer,
         const std::string& type) {
        return tnrt::optimize_path(tnrt::parse_expression(expr, shapes), optimizer_of(optimizer), tnrt::parse_dtype(type));
      },
      "expression"_a, "shapes"_a, "optimizer"_a = "auto", "dtype"_a = "float32");

  nb::class_<tnrt::problem>(m, "Problem")
      .def_static("from_expression", &problem_from_expression, "expression"_a, "shapes"_a, "dtype"_a, "path"_a = nb::none(),
                  "optimizer"_a = "auto")
      .def_static(
          "load",
          [](const std::string& path, const std::optional<std::string>& type) {
            tnrt::load_options opt;
            if (type) {
              opt.tree.type = tnrt::parse_dtype(*type);
              opt.einsum.type = opt.tree.type;
            }
            return tnrt::load_file(path, opt);
          },
          "path"_a, "dtype"_a = nb::none())
      .def("with_dtype",
           [](const tnrt::problem& p, const std::string& type) {
             tnrt::problem q = p;
             q.type = tnrt::parse_dtype(type);
             return q;
           })
      .def_prop_ro("input_shapes", &input_shapes)
      .def_prop_ro("output_shape", [](const tnrt::problem& p) { return p.net.shape_of(p.net.output); })
      .def_prop_ro("dtype", [](const tnrt::problem& p) { return std::string(tnrt::name_of(p.type)); })
      .def_prop_ro("source", [](const tnrt::problem& p) { return p.source; })
      .def_prop_ro("steps", [](const tnrt::problem& p) { return p.tree.steps.size(); })
      .def_prop_ro("expression",
                   [](const tnrt::problem& p) {
                     std::string s;
                     for (std::size_t i = 0; i < p.net.inputs.size(); ++i) s += (i ? "," : "") + p.net.describe(p.net.inputs[i]);
                     return s + "->" + p.net.describe(p.net.output);
                   })
      .def_prop_ro("cost", [](const tnrt::problem& p) {
        const auto c = tnrt::cost_of(p.net, p.tree);
        nb::dict d;
        d["flops"] = c.flops;
        d["log2_tc"] = c.log2_tc;
        d["log2_sc"] = c.log2_sc;
        d["max_elements"] = c.max_elements;
        d["rw_bytes"] = c.rw_bytes(p.type);
        d["model_ms"] = tnrt::predicted_seconds(p.net, p.tree, tnrt::cost_model::for_dtype(p.type)) * 1e3;
        return d;
      });

  nb::class_<py_context>(m, "Context")
      .def(nb::init<int, const nb::dict&>(), "device"_a, "options"_a = nb::dict())
      .def_prop_ro("device", &py_context::device)
      .def("contract_host", &py_context::contract_host, "problem"_a, "inputs"_a)
      .def("contract_into", &py_context::contract_into, "problem"_a, "inputs"_a, "out"_a, "stream"_a)
      .def("contract_alloc", &py_context::contract_alloc, "problem"_a, "inputs"_a, "stream"_a)
      .def("stats", &py_context::stats)
      .def("synchronize", &py_context::synchronize)
      .def_prop_ro("device_name", &py_context::device_name);

#if TNRT_PY_CONTEXT
  nb::class_<py_operands>(m, "Operands").def(nb::init<const tnrt::problem&, std::vector<nb::ndarray<nb::ro>>>(), "problem"_a, "inputs"_a);
  nb::class_<py_program>(m, "Program")
      .def(nb::init<py_context&, const tnrt::problem&>(), "context"_a, "problem"_a)
      .def("run", &py_program::run, "inputs"_a, "out"_a, "stream"_a)
      .def("run_prepared", &py_program::run_prepared, "inputs"_a, "out"_a, "stream"_a)
      .def("memory", &py_program::memory)
      .def("info", &py_program::info);
  nb::class_<py_sliced>(m, "SlicedProgram")
      .def(nb::init<py_context&, const tnrt::problem&, const std::vector<std::string>&, std::size_t>(), "context"_a, "problem"_a, "labels"_a,
           "memory_limit"_a = 0)
      .def("run", &py_sliced::run, "inputs"_a, "out"_a, "stream"_a, "first"_a = 0, "count"_a = -1)
      .def("run_host", &py_sliced::run_host, "inputs"_a, "first"_a = 0, "count"_a = -1)
      .def("report", &py_sliced::report)
      .def("memory", &py_sliced::memory);
  m.def("unavailable_reason", [](int device) { return tnrt::unavailable_reason(device); }, "device"_a = 0);
  m.attr("has_context") = true;
#else
  m.def("unavailable_reason", [](int) { return std::string("this build of tnrt's Python module has only the CPU engine"); }, "device"_a = 0);
  m.attr("has_context") = false;
#endif
#if TNRT_HAVE_CUDA
  m.attr("built_with_cuda") = true;
  // consumer waits (GPU-side) for everything enqueued on producer so far.
  m.def("_stream_wait", [](std::uintptr_t consumer, std::uintptr_t producer) {
    if (consumer == producer) return;
    cudaEvent_t ev = nullptr;
    if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) throw tnrt::device_error("cudaEventCreateWithFlags failed");
    cudaError_t rc = cudaEventRecord(ev, reinterpret_cast<cudaStream_t>(producer));
    if (rc == cudaSuccess) rc = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), ev, 0);
    cudaEventDestroy(ev);
    if (rc != cudaSuccess) throw tnrt::device_error(std::string("ordering streams: ") + cudaGetErrorName(rc));
  });
#else
  m.attr("built_with_cuda") = false;
  m.def("_stream_wait", [](std::uintptr_t, std::uintptr_t) { throw tnrt::device_error("this build has no CUDA backend"); });
#endif
}
