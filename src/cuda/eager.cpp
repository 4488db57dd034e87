#include "cuda/eager.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <span>

#include "core/fusion.hpp"
#include "core/gemm_route.hpp"
#include "core/step_plan.hpp"
#include "core/tiled.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/tiled.hpp"
#include "cuda/small_steps.hpp"
#include "cuda/strided_copy.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cuda {

namespace {
struct eager_analysis;
struct route_turn;
device_operand contract_eager_impl(engine& eng, const problem& p, const eager_call& call, const step_plan& plan, const route_turn& route,
                                   std::vector<device_operand>& ops);

// Eager learns its intermediate layout (options::time_layouts, the default). Which layout is
// fastest depends on the network: measured on the families suite (bench/results/
// 2026-12-03-h200-own-sitting/eager-layouts.md) row-major took 1.61x column-major's time on the
// reference network and 0.63x on lattice-10x10, follow 0.60x on hyper-n100, and neither flops per
// byte nor the largest tensor told such networks apart. Users contract the same network many
// times, so a network's first eight calls on a thread learn it (column, row, follow, planned), two
// calls a layout: the first warm
// (its plans built, the pool grown), the second timed between two events on the call's stream.
// Each timed call follows its own layout's warm call, so it finds that layout's plans cached even
// when the plan cache cannot hold every layout's at once. (The first version ran the three warm
// calls first and then the three timed ones: at 64 entries it chose steady states up to 1.19x
// slower than column-major, because its timed calls rebuilt evicted plans; bench/results/
// 2026-12-03-h200-eager-learn.) The first later call whose timed calls have all finished
// (an event query, never a wait) picks the fastest, the options' own layout unless another is at
// least 3% faster (compiled's rule), and every later call takes it. Until then calls take the
// options' layout, and a call on a stream being captured into a graph takes part in no trial (no
// events are recorded into a capture). Results under different layouts differ only in rounding
// (the order of sums). The learning's events and how they are read come first.

// Timing events of a learning (its calls' starts and stops): made together, freed together. A
// pending event is freed once it completes.
void destroy_events(std::span<cudaEvent_t> events) noexcept {
  for (cudaEvent_t& e : events) {
    if (e != nullptr) (void)cudaEventDestroy(e);
    e = nullptr;
  }
}
bool create_events(std::span<cudaEvent_t> events) noexcept {
  for (cudaEvent_t& e : events) {
    if (cudaEventCreate(&e) != cudaSuccess) {
      e = nullptr;
      (void)cudaGetLastError();
      destroy_events(events);
      return false;
    }
  }
  return true;
}

// Milliseconds between two recorded events; -1 while `stop` is pending, -2 when it cannot be read
// (a record failed, or its call threw before it).
float elapsed_or(cudaEvent_t start, cudaEvent_t stop) noexcept {
  const cudaError_t q = cudaEventQuery(stop);
  float ms = 0;
  if (q == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return -1;
  }
  if (q != cudaSuccess || cudaEventElapsedTime(&ms, start, stop) != cudaSuccess) {
    (void)cudaGetLastError();
    return -2;
  }
  return ms;
}

struct layout_learning {
  std::array<layout_policy, layout_count> order{};
  int calls = 0;    // calls that took part so far
  int chosen = -1;  // index into order, once decided
  std::array<cudaEvent_t, 2 * layout_count> events{};  // start and stop of each layout's timed call

  explicit layout_learning(layout_policy first) {
    std::size_t n = 0;
    order[n++] = first;
    for (layout_policy x : all_layouts)
      if (x != first) order[n++] = x;
  }
  layout_learning(const layout_learning&) = delete;
  layout_learning& operator=(const layout_learning&) = delete;
  ~layout_learning() { release(); }
  void release() noexcept { destroy_events(events); }
  bool make_events() noexcept { return create_events(events); }
};

// Eager's cuBLAS route (core/gemm_route.hpp), learned once the network's layout is settled: a warm
// call runs every candidate step through cuBLAS (its copies' plans built, cuBLAS's kernels loaded),
// then one call is timed with the route and one without, an event pair around each candidate step.
// A later call whose events have all completed (a query, never a wait) picks the steps where the
// route was at least 3% and 2 us faster; if any, that call runs without the route and the next one
// (timed_picked) with the picked steps, each timed whole (no step events: their records add host
// time, and the first version compared a call that carried them with one that did not), and the
// call after keeps the picked steps only when the routed call was 3% faster. The whole-call check is
// there because steps timed alone can mislead: on mpo-heis-L40-f64 (119 steps of about 10 us,
// host-bound) the steps' choice made eager 8-50% slower under every layout (H100, 2026-12-05). Why
// the route: torch runs batched einsums' steps through cuBLAS, and on lm-sliding-d2 eager trailed
// torch eager (2.37 against 1.95 ms, H200) where compiled, which times cuBLAS per step, led. A rule
// without timing (every GEMM step of 2^22 multiply-adds through cuBLAS) was measured and taken out:
// it slowed chain-n12 0.331 -> 0.476 ms (design.md). Tiled steps take part with cuTENSOR as their
// other way (gemm_route::library): eager's rule put steps on the tiled kernel that compiled, which
// times both, runs on cuTENSOR (lm-sliding-d2, design.md).
struct route_learning {
  enum class phase : std::uint8_t { start, warm, timed_route, deciding, timed_picked, confirming, done };
  phase at = phase::start;
  layout_policy layout = layout_policy::column_major;  // the layout the routes were planned under
  gemm_routes routes;
  std::vector<int> slot;          // per step: its index among the candidates, or -1
  std::vector<std::uint8_t> use;  // per step: through cuBLAS (all candidates while warming; then the kept ones)
  /// Per candidate: route start, stop, library start, stop; then the whole library call's start and
  /// stop, and the whole routed call's.
  std::vector<cudaEvent_t> events;
  int kept = 0;

  route_learning() = default;
  route_learning(const route_learning&) = delete;
  route_learning& operator=(const route_learning&) = delete;
  ~route_learning() { release(); }
  void release() noexcept {
    destroy_events(events);
    events.clear();
  }
  bool make_events() noexcept {
    events.assign(4 * routes.candidates.size() + 4, nullptr);
    if (create_events(events)) return true;
    events.clear();
    return false;
  }
};

// What eager keeps of a network it contracted: its step plan under each layout it ran
// (core/step_plan.hpp: every layout and lowered step, the fusion plan, each step's consumer and
// kernel, the tiled steps' records) and its layout learning. Users contract the same network many
// times: the last few are kept per thread, found by a hash of their full structural key and reused
// only when that whole key is equal (a hash collision must never run another problem's strides),
// so a repeated call skips straight to allocating and launching (the host work was measured on the
// critical path: the GPU waited for it). One key, built once a call, finds both.
struct eager_analysis {
  std::uint64_t hash = 0;
  std::vector<std::int64_t> key;
  std::array<std::optional<step_plan>, layout_count> plans;  // by layout_policy
  layout_learning learning;
  route_learning route;

  explicit eager_analysis(layout_policy first) : learning(first) {}
};

// Everything the plans depend on but the layout, flattened: the options that shape them, the
// type, extents, input labels, the tree, the input and output strides, and the device (the
// learning's events belong to it). Sizes precede each list, so two different structures never
// flatten alike.
void analysis_key(engine& eng, const problem& p, const eager_call& call, std::vector<std::int64_t>& k) {
  k.clear();
  const options& o = eng.opts();
  auto add_all = [&k](const auto& v) {
    k.push_back(static_cast<std::int64_t>(v.size()));
    for (const auto& x : v) k.push_back(static_cast<std::int64_t>(x));
  };
  k.push_back(static_cast<std::int64_t>(p.type));
  k.push_back(o.fuse_small_steps ? 1 : 0);
  k.push_back(o.fuse_max_elements);
  k.push_back(static_cast<std::int64_t>(o.tiled_kernel));
  k.push_back(o.tiled_min_elements);
  k.push_back(static_cast<std::int64_t>(o.gemm_lowering));
  k.push_back(static_cast<std::int64_t>(o.gemm_copies));
  k.push_back(static_cast<std::int64_t>(o.compute_precision));
  add_all(p.net.extents);
  k.push_back(static_cast<std::int64_t>(p.net.inputs.size()));
  for (const auto& in : p.net.inputs) add_all(in);
  k.push_back(static_cast<std::int64_t>(p.tree.steps.size()));
  for (const step& s : p.tree.steps) {
    k.push_back(s.lhs);
    k.push_back(s.rhs);
    add_all(s.out);
  }
  k.push_back(call.input_strides != nullptr ? 1 : 0);
  if (call.input_strides != nullptr)
    for (const auto& st : *call.input_strides) add_all(st);
  k.push_back(call.output_strides != nullptr ? 1 : 0);
  if (call.output_strides != nullptr) add_all(*call.output_strides);
  k.push_back(eng.runtime().device());
}

std::uint64_t hash_of(const std::vector<std::int64_t>& key) noexcept {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the 64-bit words
  for (std::int64_t x : key) {
    h ^= static_cast<std::uint64_t>(x);
    h *= 1099511628211ULL;
  }
  return h;
}

constexpr std::size_t analyses_kept = 8;

eager_analysis& analysis_of(engine& eng, const problem& p, const eager_call& call) {
  thread_local std::vector<std::unique_ptr<eager_analysis>> memo;  // most recently used first
  thread_local std::vector<std::int64_t> key;
  analysis_key(eng, p, call, key);
  const std::uint64_t h = hash_of(key);
  for (std::size_t i = 0; i < memo.size(); ++i) {
    if (memo[i]->hash != h || memo[i]->key != key) continue;
    if (i > 0) std::rotate(memo.begin(), memo.begin() + static_cast<std::ptrdiff_t>(i), memo.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    return *memo.front();
  }
  auto a = std::make_unique<eager_analysis>(eng.opts().intermediate_layout);
  a->hash = h;
  a->key = key;
  if (memo.size() == analyses_kept) memo.pop_back();
  memo.insert(memo.begin(), std::move(a));
  return *memo.front();
}

// The step plan under `layout`, built on the network's first call under it.
const step_plan& plan_of(engine& eng, const problem& p, const eager_call& call, eager_analysis& a, layout_policy layout) {
  std::optional<step_plan>& plan = a.plans[static_cast<std::size_t>(layout)];
  eng.count_analysis(plan.has_value());
  if (!plan) {
    options o = eng.opts();
    o.intermediate_layout = layout;
    plan = plan_steps(p, o, call.input_strides, call.output_strides);
  }
  return *plan;
}

// One call's layout, and the events around it when the call is a timed trial.
struct layout_turn {
  layout_policy layout = layout_policy::column_major;
  cudaEvent_t start = nullptr, stop = nullptr;
  bool settled = false;  // the network's layout from now on (learned, or the options' when none is learned)
};

constexpr int trial_layouts = static_cast<int>(layout_count);

bool capturing(cudaStream_t stream) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;  // unknown: no events
  }
  return status != cudaStreamCaptureStatusNone;
}

layout_turn next_layout(engine& eng, const problem& p, const eager_call& call, layout_learning& l) {
  const options& o = eng.opts();
  if (!o.time_layouts || p.tree.steps.size() < 2) return {o.intermediate_layout, nullptr, nullptr, true};
  if (l.chosen >= 0) return {l.order[static_cast<std::size_t>(l.chosen)], nullptr, nullptr, true};
  if (capturing(call.stream)) return {l.order[0]};
  if (l.calls < 2 * trial_layouts) {
    if (l.calls == 0 && !l.make_events()) {
      l.chosen = 0;
      return {l.order[0], nullptr, nullptr, true};
    }
    const int k = l.calls++;
    const auto i = static_cast<std::size_t>(k / 2);
    if (k % 2 == 0) return {l.order[i]};  // the layout's warm call
    eng.count_layout_trial();
    return {l.order[i], l.events[2 * i], l.events[2 * i + 1]};
  }
  float ms[trial_layouts] = {};
  for (std::size_t i = 0; i < trial_layouts; ++i) {
    ms[i] = elapsed_or(l.events[2 * i], l.events[2 * i + 1]);
    if (ms[i] == -1) return {l.order[0]};  // not finished yet: ask again on a later call
    if (ms[i] < 0) {
      l.chosen = 0;  // a trial failed (its call threw before the stop event): keep the options' layout
      l.release();
      return {l.order[0], nullptr, nullptr, true};
    }
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < trial_layouts; ++i)
    if (ms[i] < 0.97F * ms[best]) best = i;
  l.chosen = static_cast<int>(best);
  l.release();
  eng.count_layout_learned(l.order[best]);
  return {l.order[best], nullptr, nullptr, true};
}

// One call's cuBLAS route: which steps run through cuBLAS, and the event pair around each candidate
// step when the call is timed.
struct route_turn {
  const gemm_routes* routes = nullptr;
  const std::vector<std::uint8_t>* use = nullptr;  // null: every step as planned
  const std::vector<int>* slot = nullptr;          // with events: per step, its candidate index or -1
  cudaEvent_t* events = nullptr;                   // per candidate i: events[4 * i] and events[4 * i + 1]
  cudaEvent_t start = nullptr, stop = nullptr;     // around the whole call, when it is timed whole
};

route_turn next_route(engine& eng, const problem& p, const eager_call& call, const step_plan& plan, const layout_turn& layout, route_learning& r) {
  if (!layout.settled) return {};
  const options& o = eng.opts();
  if (r.at != route_learning::phase::start && r.layout != layout.layout) {  // not expected: a settled layout stays
    r.release();
    r.at = route_learning::phase::start;
  }
  if (r.at == route_learning::phase::start) {
    if (capturing(call.stream)) return {};  // no trial into a graph: start on a later call
    r.layout = layout.layout;
    r.routes = plan_gemm_routes(p, plan, o, p.type, eng.blas() != nullptr);
    const std::size_t steps = plan.lowered.size();
    r.slot.assign(steps, -1);
    r.use.assign(steps, 0);
    for (std::size_t i = 0; i < r.routes.candidates.size(); ++i) {
      const auto k = static_cast<std::size_t>(r.routes.candidates[i]);
      r.slot[k] = static_cast<int>(i);
      r.use[k] = 1;
    }
    if (r.routes.candidates.empty() || (r.routes.learn && !r.make_events())) {
      r.use.assign(steps, 0);
      r.at = route_learning::phase::done;
      return {};
    }
    if (!r.routes.learn) {  // `always`: every candidate through cuBLAS, untimed
      r.kept = static_cast<int>(r.routes.candidates.size());
      r.at = route_learning::phase::done;
      eng.count_route_steps(static_cast<std::uint64_t>(r.kept));
      return {&r.routes, &r.use};
    }
    r.at = route_learning::phase::warm;
    return {&r.routes, &r.use};  // the warm call
  }
  using phase = route_learning::phase;
  if (r.at == phase::done) return r.kept > 0 ? route_turn{&r.routes, &r.use} : route_turn{};
  if (capturing(call.stream)) return {};  // no events into a capture: as planned, and the trial waits
  switch (r.at) {
    case phase::warm:
      r.at = phase::timed_route;
      eng.count_route_trial();
      return {&r.routes, &r.use, &r.slot, r.events.data()};
    case phase::timed_route:
      r.at = phase::deciding;
      eng.count_route_trial();
      return {&r.routes, nullptr, &r.slot, r.events.data() + 2};
    default:
      break;
  }
  const std::size_t n = r.routes.candidates.size();
  cudaEvent_t* whole = r.events.data() + 4 * n;  // library call start, stop; routed call start, stop
  if (r.at == phase::timed_picked) {  // the picked steps through cuBLAS, timed whole
    r.at = phase::confirming;
    eng.count_route_trial();
    route_turn t{&r.routes, &r.use};
    t.start = whole[2];
    t.stop = whole[3];
    return t;
  }
  auto finish = [&](int kept) {
    r.release();
    if (kept == 0) std::fill(r.use.begin(), r.use.end(), std::uint8_t{0});
    r.kept = kept;
    r.at = phase::done;
    eng.count_route_steps(static_cast<std::uint64_t>(kept));
    std::uint64_t tiled_back = 0;  // of those, tiled steps now on cuTENSOR
    for (int k : r.routes.candidates)
      if (r.use[static_cast<std::size_t>(k)] != 0 && r.routes.route[static_cast<std::size_t>(k)]->library) ++tiled_back;
    eng.count_route_tiled(tiled_back);
    return kept > 0 ? route_turn{&r.routes, &r.use} : route_turn{};
  };
  if (r.at == phase::confirming) {
    const float lib = elapsed_or(whole[0], whole[1]), confirmed = elapsed_or(whole[2], whole[3]);
    if (lib == -1 || confirmed == -1) return {};  // not finished yet: as planned, and ask again later
    const bool timed = lib >= 0 && confirmed >= 0;  // else a timed call threw: no route
    if (timed) eng.count_route_check(lib, confirmed);
    return finish(timed && confirmed < 0.97F * lib ? r.kept : 0);
  }
  // deciding: every timed step's events must have completed.
  std::vector<float> ms(2 * n, 0.0F);
  for (std::size_t i = 0; i < 2 * n; ++i) {
    ms[i] = elapsed_or(r.events[2 * i], r.events[2 * i + 1]);
    if (ms[i] == -1) return {};  // not finished yet: as planned, and ask again on a later call
    if (ms[i] < 0) return finish(0);  // a timed call threw before this step's stop event: no route
  }
  constexpr float min_saving_ms = 0.002F;
  int kept = 0;
  double saving = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(r.routes.candidates[i]);
    const float route = ms[2 * i], library = ms[2 * i + 1];
    const bool keep = route < 0.97F * library && library - route >= min_saving_ms;
    r.use[k] = keep ? 1 : 0;
    kept += keep ? 1 : 0;
    if (keep) saving += library - route;
  }
  eng.count_route_picked(static_cast<std::uint64_t>(kept), saving);
  if (kept == 0) return finish(0);
  // This call runs every step as planned, timed whole; the next runs the picked steps through
  // cuBLAS, timed whole; the one after compares them.
  r.kept = kept;
  r.at = phase::timed_picked;
  eng.count_route_trial();
  route_turn t;
  t.start = whole[0];
  t.stop = whole[1];
  return t;
}
}  // namespace

// Exception safety: when a step fails (a cuTENSOR plan failure, out of memory), every intermediate
// already taken from the pool goes back to it, stream-ordered, before the error propagates.
device_operand contract_eager(engine& eng, const problem& p, const eager_call& call) {
  std::vector<device_operand> ops;
  try {
    refuse_tensors_beyond_device(eng, p);
    eager_analysis& analysis = analysis_of(eng, p, call);
    const layout_turn turn = next_layout(eng, p, call, analysis.learning);
    const step_plan& plan = plan_of(eng, p, call, analysis, turn.layout);
    const route_turn route = next_route(eng, p, call, plan, turn, analysis.route);
    // A failed record loses that trial (its elapsed time cannot be read later, so the learning
    // keeps the options' layout); the call itself goes on.
    for (cudaEvent_t e : {turn.start, route.start})
      if (e != nullptr && cudaEventRecord(e, call.stream) != cudaSuccess) (void)cudaGetLastError();
    device_operand r = contract_eager_impl(eng, p, call, plan, route, ops);
    for (cudaEvent_t e : {turn.stop, route.stop})
      if (e != nullptr && cudaEventRecord(e, call.stream) != cudaSuccess) (void)cudaGetLastError();
    return r;
  } catch (...) {
    for (device_operand& o : ops)
      if (o.owned && o.ptr != nullptr) eng.pool().deallocate(o.ptr, call.stream);
    throw;
  }
}

device_operand contract_eager(engine& eng, const problem& p, std::span<void* const> inputs) {
  eager_call call;
  call.inputs = inputs;
  call.stream = eng.stream();
  return contract_eager(eng, p, call);
}

namespace {
// A library step through cuBLAS (core/gemm_route.hpp): one GEMM, or copies of the operands that
// keep it from the form (cuTENSOR permutations into pool blocks), the GEMM, and D's copy into place.
// The blocks go back to the pool stream-ordered, also when a launch throws.
void run_gemm_route(engine& eng, dtype t, const gemm_route& r, const void* a, const void* b, void* d, cudaStream_t stream) {
  blas_handle* blas = eng.blas();
  if (blas == nullptr) throw internal_error("contract_eager: a cuBLAS route without cuBLAS");
  if (r.direct) {
    blas->gemm(*r.direct, t, a, b, d, nullptr, 0, stream);
    return;
  }
  device::caching_pool& pool = eng.pool();
  const device::stream_handle sh = stream;
  void* copy[3] = {nullptr, nullptr, nullptr};
  auto give_back = [&] {
    for (void*& c : copy)
      if (c != nullptr) pool.deallocate(c, sh);
  };
  try {
    for (int i = 0; i < 3; ++i)
      if (r.copy_elements(i) > 0) copy[i] = pool.allocate(static_cast<std::size_t>(r.copy_elements(i)) * size_of(t), sh);
    const void* x[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
      if (copy[i] == nullptr) continue;
      eng.execute(r.copy_steps[i], t, x[i], nullptr, copy[i], stream);
      x[i] = copy[i];
    }
    blas->gemm(r.copies->gemm, t, x[0], x[1], copy[2] != nullptr ? copy[2] : d, nullptr, 0, stream);
    if (copy[2] != nullptr) eng.execute(r.copy_steps[2], t, copy[2], nullptr, d, stream);
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

device_operand contract_eager_impl(engine& eng, const problem& p, const eager_call& call, const step_plan& plan, const route_turn& route,
                                   std::vector<device_operand>& ops) {
  const network& net = p.net;
  const std::size_t n = net.inputs.size();
  const std::span<void* const> inputs = call.inputs;
  if (inputs.size() != n) throw internal_error("contract_eager: " + std::to_string(inputs.size()) + " inputs for " + std::to_string(n) + " operands");
  const std::size_t elem = size_of(p.type);
  ops.assign(n + p.tree.steps.size(), device_operand{});
  for (std::size_t i = 0; i < n; ++i) ops[i].ptr = inputs[i];
  device::caching_pool& pool = eng.pool();
  cudaStream_t const cuda_stream = call.stream;
  const device::stream_handle stream = cuda_stream;
  // The final result: the caller's buffer, or a pool block handed to the caller.
  auto result_buffer = [&](std::size_t bytes) {
    return call.output != nullptr ? device_operand{call.output, false} : device_operand{pool.allocate(bytes, stream), true};
  };

  if (plan.kernel.front() == step_kernel::copy) {  // the single input already is the result: hand back a copy
    const std::vector<std::int64_t> shape = net.shape_of(net.inputs[0]);
    const std::size_t bytes = static_cast<std::size_t>(element_count(shape)) * elem;
    device_operand r = result_buffer(bytes);
    ops[0] = r;  // owned from here on, so a failed copy gives it back
    launch_strided_copy(strided_copy_of(shape, plan.strides[0], inputs[0], call.output_strides != nullptr ? *call.output_strides : row_major_strides(shape),
                                        r.ptr, elem),
                        cuda_stream);
    ops[0] = {};
    return r;
  }

  const std::size_t steps = p.tree.steps.size();
  const std::vector<lowered_step>& lowered = plan.lowered;
  const fusion_plan& fusion = plan.fusion;
  auto bytes_of = [&](std::size_t k) { return static_cast<std::size_t>(element_count(net.shape_of(p.tree.steps[k].out))) * elem; };

  // Small subtrees: all of them first, in launches that carry their records as parameters.
  if (fusion.subtrees() > 0) {
    const std::vector<int>& consumer = plan.consumer;
    // Absorbed intermediates share one scratch block (no reuse inside: a few KiB each); roots get
    // pool buffers of their own, consumed later by library steps.
    std::vector<std::size_t> offset(steps, 0);
    std::size_t scratch_bytes = 0;
    for (int kk : fusion.absorbed) {
      const auto k = static_cast<std::size_t>(kk);
      const bool root = consumer[k] < 0 || fusion.is_absorbed[static_cast<std::size_t>(consumer[k])] == 0;
      if (root) {
        ops[n + k] = k + 1 == steps ? result_buffer(bytes_of(k)) : device_operand{pool.allocate(bytes_of(k), stream), true};
      } else {
        offset[k] = scratch_bytes;
        scratch_bytes += (bytes_of(k) + 255) / 256 * 256;
      }
    }
    void* scratch = scratch_bytes > 0 ? pool.allocate(scratch_bytes, stream) : nullptr;
    for (int kk : fusion.absorbed) {
      const auto k = static_cast<std::size_t>(kk);
      if (ops[n + k].ptr == nullptr) ops[n + k].ptr = static_cast<unsigned char*>(scratch) + offset[k];
    }
    std::vector<small_step_record> records(fusion.absorbed.size());
    for (std::size_t i = 0; i < fusion.absorbed.size(); ++i) {
      const auto k = static_cast<std::size_t>(fusion.absorbed[i]);
      const step& s = p.tree.steps[k];
      (void)describe_small_step(lowered[k], ops[static_cast<std::size_t>(s.lhs)].ptr, s.rhs >= 0 ? ops[static_cast<std::size_t>(s.rhs)].ptr : nullptr,
                                ops[n + k].ptr, records[i], eng.opts().fuse_stage);
    }
    group_small_steps(fusion, records, eng.opts().fuse_levels);
    try {
      launch_small_steps_from_host(p.type, records.data(), fusion.subtree_begin.data(), static_cast<int>(fusion.subtrees()), cuda_stream);
    } catch (...) {
      if (scratch != nullptr) pool.deallocate(scratch, stream);
      throw;
    }
    if (scratch != nullptr) pool.deallocate(scratch, stream);
  }

  // The library steps and the tiled kernel's, in tree order: the one switch over the plan's kinds
  // (each tiled step on the tiled kernel unless the route learned that cuTENSOR runs it faster).
  for (std::size_t k = 0; k < steps; ++k) {
    const step_kernel kind = plan.kernel[k];
    if (kind == step_kernel::fused) continue;  // ran above
    const step& s = p.tree.steps[k];
    device_operand& a = ops[static_cast<std::size_t>(s.lhs)];
    device_operand* b = s.rhs >= 0 ? &ops[static_cast<std::size_t>(s.rhs)] : nullptr;
    device_operand& d = ops[n + k];
    d = k + 1 == steps ? result_buffer(bytes_of(k)) : device_operand{pool.allocate(bytes_of(k), stream), true};
    switch (kind) {
      case step_kernel::tiled:
      case step_kernel::library: {
        // A timed route call records an event pair around each candidate step (a failed record
        // loses the trial: its elapsed time cannot be read, and the route is not taken).
        const int slot = route.events != nullptr ? (*route.slot)[k] : -1;
        cudaEvent_t* ev = slot >= 0 ? route.events + 4 * static_cast<std::size_t>(slot) : nullptr;
        if (ev != nullptr && cudaEventRecord(ev[0], cuda_stream) != cudaSuccess) (void)cudaGetLastError();
        const bool alternative = route.use != nullptr && (*route.use)[k] != 0;
        if (kind == step_kernel::tiled && !alternative) {
          tiled_record tiled = plan.tiled[k];
          bind_tiled(tiled, a.ptr, b != nullptr ? b->ptr : nullptr, d.ptr);
          launch_tiled(p.type, tiled, cuda_stream);
        } else if (alternative && !route.routes->route[k]->library) {
          run_gemm_route(eng, p.type, *route.routes->route[k], a.ptr, b != nullptr ? b->ptr : nullptr, d.ptr, cuda_stream);
        } else {  // a library step, or a tiled one on its alternative: cuTENSOR
          eng.execute(lowered[k], p.type, a.ptr, b != nullptr ? b->ptr : nullptr, d.ptr, cuda_stream);
        }
        if (ev != nullptr && cudaEventRecord(ev[1], cuda_stream) != cudaSuccess) (void)cudaGetLastError();
        break;
      }
      case step_kernel::fused:
      case step_kernel::copy:
        throw internal_error("contract_eager: step " + std::to_string(k) + " planned as " + name_of(kind));
    }
    // Stream-ordered frees: the pool hands these blocks only to later work on this stream.
    if (a.owned) pool.deallocate(a.ptr, stream);
    if (b != nullptr && b->owned) pool.deallocate(b->ptr, stream);
    a = {};
    if (b != nullptr) *b = {};
  }
  device_operand result = std::move(ops.back());
  ops.back() = {};
  return result;
}
}  // namespace

}  // namespace tnrt::cuda
