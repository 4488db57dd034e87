#include "support/fake_runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tnrt::test {

using device::event_handle;
using device::status;
using device::stream_handle;

namespace {

constexpr std::size_t alignment = 256;

std::size_t index_of(call_kind kind) noexcept { return static_cast<std::size_t>(kind); }

std::uintptr_t address(const void* ptr) noexcept { return reinterpret_cast<std::uintptr_t>(ptr); }

std::uintptr_t event_id(event_handle event) noexcept { return reinterpret_cast<std::uintptr_t>(event); }

}  // namespace

const char* to_string(call_kind kind) noexcept {
  switch (kind) {
    case call_kind::allocate: return "allocate";
    case call_kind::free: return "free";
    case call_kind::memory_info: return "memory_info";
    case call_kind::create_event: return "create_event";
    case call_kind::record_event: return "record_event";
    case call_kind::query_event: return "query_event";
    case call_kind::synchronize_event: return "synchronize_event";
    case call_kind::destroy_event: return "destroy_event";
    case call_kind::synchronize_stream: return "synchronize_stream";
    case call_kind::stream_wait_event: return "stream_wait_event";
    case call_kind::is_capturing: return "is_capturing";
    case call_kind::count_: break;
  }
  return "?";
}

fake_runtime::~fake_runtime() {
  for (const auto& [ptr, bytes] : allocations_) std::free(reinterpret_cast<void*>(ptr));
}

stream_handle fake_runtime::stream(std::size_t index) noexcept {
  return reinterpret_cast<stream_handle>(static_cast<std::uintptr_t>(index + 1));
}

bool fake_runtime::take_failure(call_kind kind) {
  ++calls_[index_of(kind)];
  auto& left = failures_[index_of(kind)];
  if (left == 0) return false;
  if (left != always) --left;
  return true;
}

fake_runtime::stream_state& fake_runtime::stream_locked(stream_handle stream) { return streams_[stream]; }

void fake_runtime::violation_locked(std::string message) {
  if (fail_on_violation_) ADD_FAILURE() << "fake_runtime violation: " << message;
  violations_.push_back(std::move(message));
}

// --- the seam -------------------------------------------------------------------------------------

status fake_runtime::allocate(void** ptr, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  *ptr = nullptr;
  if (take_failure(call_kind::allocate)) return status::error;
  const std::size_t rounded = std::max<std::size_t>(alignment, (bytes + alignment - 1) / alignment * alignment);
  if (rounded < bytes || allocated_bytes_ + rounded > memory_limit_ || allocated_bytes_ + rounded < allocated_bytes_) {
    return status::error;
  }
  void* memory = std::aligned_alloc(alignment, rounded);
  if (memory == nullptr) return status::error;
  allocations_.emplace(address(memory), rounded);
  allocated_bytes_ += rounded;
  *ptr = memory;
  return status::ok;
}

status fake_runtime::free(void* ptr) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::free)) return status::error;
  const auto it = allocations_.find(address(ptr));
  if (it == allocations_.end()) {
    violation_locked("free of a pointer the driver never handed out");
    return status::error;
  }
  const std::uintptr_t begin = it->first;
  const std::uintptr_t end = begin + it->second;
  for (const auto& use : uses_) {
    if (use.begin < end && begin < use.end && use_pending_locked(use)) {
      std::ostringstream message;
      message << "driver free of " << it->second << " bytes while work tick " << use.tick << " on stream "
              << use.stream << " still uses it";
      violation_locked(message.str());
      break;
    }
  }
  // The memory is gone: forget every use of it, so that a later allocation at the same address is
  // not blamed for work on the old one.
  std::erase_if(uses_, [&](const pending_use& use) { return use.begin < end && begin < use.end; });
  allocated_bytes_ -= it->second;
  allocations_.erase(it);
  std::free(ptr);
  return status::ok;
}

status fake_runtime::memory_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::memory_info)) return status::error;
  *total_bytes = memory_limit_;
  *free_bytes = memory_limit_ - allocated_bytes_;
  return status::ok;
}

status fake_runtime::create_event(event_handle* event) {
  std::lock_guard lock(mutex_);
  *event = nullptr;
  if (take_failure(call_kind::create_event)) return status::error;
  const std::uintptr_t id = next_event_++;
  events_.emplace(id, event_state{});
  *event = reinterpret_cast<event_handle>(id);
  return status::ok;
}

status fake_runtime::record_event(event_handle event, stream_handle stream) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::record_event)) return status::error;
  const auto it = events_.find(event_id(event));
  if (it == events_.end()) {
    violation_locked("record of an unknown event");
    return status::error;
  }
  // Recording during capture is legal (it becomes a graph node); the fake keeps the tick.
  it->second = event_state{true, stream, stream_locked(stream).enqueued};
  return status::ok;
}

status fake_runtime::query_event(event_handle event) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::query_event)) return status::error;
  const auto it = events_.find(event_id(event));
  if (it == events_.end()) {
    violation_locked("query of an unknown event");
    return status::error;
  }
  if (!it->second.recorded) return status::ok;  // as cudaEventQuery on a never-recorded event
  auto& s = stream_locked(it->second.stream);
  ++s.queries;
  if (s.capturing) {
    violation_locked("query_event while its stream is capturing");
    return status::error;
  }
  return s.completed >= it->second.tick ? status::ok : status::not_ready;
}

status fake_runtime::synchronize_event(event_handle event) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::synchronize_event)) return status::error;
  const auto it = events_.find(event_id(event));
  if (it == events_.end()) {
    violation_locked("synchronize of an unknown event");
    return status::error;
  }
  if (!it->second.recorded) return status::ok;
  auto& s = stream_locked(it->second.stream);
  ++s.event_syncs;
  if (s.capturing) {
    violation_locked("synchronize_event while its stream is capturing");
    return status::error;
  }
  complete_through_locked(it->second.stream, it->second.tick, 0);
  return status::ok;
}

status fake_runtime::destroy_event(event_handle event) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::destroy_event)) return status::error;
  if (events_.erase(event_id(event)) == 0) {
    violation_locked("destroy of an unknown event");
    return status::error;
  }
  return status::ok;
}

status fake_runtime::synchronize_stream(stream_handle stream) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::synchronize_stream)) return status::error;
  auto& s = stream_locked(stream);
  ++s.stream_syncs;
  if (s.capturing) {
    violation_locked("synchronize_stream while the stream is capturing");
    return status::error;
  }
  complete_through_locked(stream, s.enqueued, 0);
  return status::ok;
}

status fake_runtime::stream_wait_event(stream_handle stream, event_handle event) {
  std::lock_guard lock(mutex_);
  if (take_failure(call_kind::stream_wait_event)) return status::error;
  const auto it = events_.find(event_id(event));
  if (it == events_.end()) {
    violation_locked("wait on an unknown event");
    return status::error;
  }
  if (!it->second.recorded) return status::ok;
  const event_state e = it->second;
  auto& s = stream_locked(stream);
  // The wait is itself work on `stream` (synchronizing `stream` waits for it, as on the device);
  // it and everything after it completes only after the awaited work.
  const std::uint64_t wait_tick = ++s.enqueued;
  s.dependencies.push_back({wait_tick - 1, e.stream, e.tick});
  return status::ok;
}

bool fake_runtime::is_capturing(stream_handle stream) {
  std::lock_guard lock(mutex_);
  ++calls_[index_of(call_kind::is_capturing)];
  return stream_locked(stream).capturing;
}

// --- memory and work ------------------------------------------------------------------------------

void fake_runtime::set_memory_limit(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  memory_limit_ = bytes;
}

std::size_t fake_runtime::driver_bytes() const {
  std::lock_guard lock(mutex_);
  return allocated_bytes_;
}

std::size_t fake_runtime::driver_allocations() const {
  std::lock_guard lock(mutex_);
  return allocations_.size();
}

std::uint64_t fake_runtime::enqueue(stream_handle stream) {
  std::lock_guard lock(mutex_);
  return ++stream_locked(stream).enqueued;
}

std::uint64_t fake_runtime::use(const void* ptr, std::size_t bytes, stream_handle stream) {
  std::lock_guard lock(mutex_);
  const std::uint64_t tick = ++stream_locked(stream).enqueued;
  uses_.push_back({address(ptr), address(ptr) + bytes, stream, tick});
  return tick;
}

void fake_runtime::complete_through_locked(stream_handle stream, std::uint64_t tick, int depth) {
  // Work that waited on another stream cannot finish before that stream's awaited work: complete
  // the dependency first, as the GPU would. Dependencies point at ticks recorded in the past, so
  // the recursion is shallow; the depth guard only protects the fake from a test's own cycle.
  if (depth > 64) return;
  auto& s = stream_locked(stream);
  tick = std::min(tick, s.enqueued);
  if (tick <= s.completed) return;
  std::vector<stream_state::dependency> needed;
  for (const auto& dep : s.dependencies) {
    if (dep.after_tick < tick) needed.push_back(dep);
  }
  for (const auto& dep : needed) complete_through_locked(dep.other, dep.other_tick, depth + 1);
  auto& again = stream_locked(stream);  // the map node is stable, but stay explicit
  again.completed = std::max(again.completed, tick);
  std::erase_if(again.dependencies, [&](const stream_state::dependency& dep) { return dep.after_tick < again.completed; });
}

void fake_runtime::advance(stream_handle stream, std::uint64_t n) {
  std::lock_guard lock(mutex_);
  const auto& s = stream_locked(stream);
  const std::uint64_t target = s.completed + std::min(n, s.enqueued - s.completed);
  complete_through_locked(stream, target, 0);
}

void fake_runtime::complete_through(stream_handle stream, std::uint64_t tick) {
  std::lock_guard lock(mutex_);
  complete_through_locked(stream, tick, 0);
}

void fake_runtime::complete(stream_handle stream) {
  std::lock_guard lock(mutex_);
  complete_through_locked(stream, stream_locked(stream).enqueued, 0);
}

void fake_runtime::complete_all() {
  std::lock_guard lock(mutex_);
  std::vector<stream_handle> all;
  for (const auto& [handle, s] : streams_) all.push_back(handle);
  for (auto* handle : all) complete_through_locked(handle, stream_locked(handle).enqueued, 0);
  uses_.clear();
}

std::uint64_t fake_runtime::enqueued(stream_handle stream) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second.enqueued;
}

std::uint64_t fake_runtime::completed(stream_handle stream) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second.completed;
}

bool fake_runtime::use_pending_locked(const pending_use& use) {
  return stream_locked(use.stream).completed < use.tick;
}

bool fake_runtime::idle(const void* ptr, std::size_t bytes) const {
  std::lock_guard lock(mutex_);
  const std::uintptr_t begin = address(ptr);
  const std::uintptr_t end = begin + bytes;
  for (const auto& use : uses_) {
    if (use.begin < end && begin < use.end) {
      const auto it = streams_.find(use.stream);
      if (it != streams_.end() && it->second.completed < use.tick) return false;
    }
  }
  return true;
}

void fake_runtime::set_capturing(stream_handle stream, bool capturing) {
  std::lock_guard lock(mutex_);
  stream_locked(stream).capturing = capturing;
}

// --- failures and counters ------------------------------------------------------------------------

void fake_runtime::fail(call_kind kind, std::uint64_t times) {
  std::lock_guard lock(mutex_);
  failures_[index_of(kind)] = times;
}

void fake_runtime::clear_failures() {
  std::lock_guard lock(mutex_);
  failures_.fill(0);
}

std::uint64_t fake_runtime::calls(call_kind kind) const {
  std::lock_guard lock(mutex_);
  return calls_[index_of(kind)];
}

std::uint64_t fake_runtime::queries_on(stream_handle stream) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second.queries;
}

std::uint64_t fake_runtime::event_syncs_on(stream_handle stream) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second.event_syncs;
}

std::uint64_t fake_runtime::stream_syncs_on(stream_handle stream) const {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second.stream_syncs;
}

std::size_t fake_runtime::live_events() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

void fake_runtime::reset_counters() {
  std::lock_guard lock(mutex_);
  calls_.fill(0);
  for (auto& [handle, s] : streams_) s.queries = s.event_syncs = s.stream_syncs = 0;
}

// --- safety checks --------------------------------------------------------------------------------

// Waits chain: if `stream` waited on an event recorded on B after B waited on C's tick t, then
// `stream`'s future work is ordered after C through t, as on the device.
std::map<stream_handle, std::uint64_t> fake_runtime::ordered_before_locked(stream_handle stream) {
  std::map<stream_handle, std::uint64_t> ordered;
  std::vector<std::pair<stream_handle, std::uint64_t>> work;
  for (const auto& dep : stream_locked(stream).dependencies) work.emplace_back(dep.other, dep.other_tick);
  while (!work.empty()) {
    const auto [other, tick] = work.back();
    work.pop_back();
    auto [it, inserted] = ordered.emplace(other, tick);
    if (!inserted) {
      if (it->second >= tick) continue;
      it->second = tick;
    }
    for (const auto& dep : stream_locked(other).dependencies) {
      if (dep.after_tick < tick) work.emplace_back(dep.other, dep.other_tick);
    }
  }
  return ordered;
}

void fake_runtime::check_handout(const void* ptr, std::size_t bytes, stream_handle stream, const char* what) {
  std::lock_guard lock(mutex_);
  const std::uintptr_t begin = address(ptr);
  const std::uintptr_t end = begin + bytes;
  std::erase_if(uses_, [&](const pending_use& use) { return !use_pending_locked(use); });
  const auto ordered = ordered_before_locked(stream);
  for (const auto& use : uses_) {
    if (!(use.begin < end && begin < use.end)) continue;
    if (use.stream == stream) continue;  // stream order puts the new work after the old use
    const auto waited = ordered.find(use.stream);
    if (waited != ordered.end() && waited->second >= use.tick) continue;
    std::ostringstream message;
    message << what << ": [" << ptr << ", +" << bytes << ") handed out for stream " << stream
            << " while work tick " << use.tick << " on stream " << use.stream << " still uses it";
    violation_locked(message.str());
    return;
  }
}

void fake_runtime::check_idle(const void* ptr, std::size_t bytes, const char* what) {
  std::lock_guard lock(mutex_);
  const std::uintptr_t begin = address(ptr);
  const std::uintptr_t end = begin + bytes;
  for (const auto& use : uses_) {
    if (use.begin < end && begin < use.end && use_pending_locked(use)) {
      std::ostringstream message;
      message << what << ": [" << ptr << ", +" << bytes << ") declared idle while work tick " << use.tick
              << " on stream " << use.stream << " still uses it";
      violation_locked(message.str());
      return;
    }
  }
}

std::vector<std::string> fake_runtime::violations() const {
  std::lock_guard lock(mutex_);
  return violations_;
}

void fake_runtime::set_fail_on_violation(bool fail) noexcept {
  std::lock_guard lock(mutex_);
  fail_on_violation_ = fail;
}

void* allocate_checked(device::caching_pool& pool, fake_runtime& runtime, std::size_t bytes, stream_handle stream) {
  void* ptr = pool.allocate(bytes, stream);
  runtime.check_handout(ptr, pool.size_of_block(ptr), stream, "pool allocate");
  return ptr;
}

}  // namespace tnrt::test
