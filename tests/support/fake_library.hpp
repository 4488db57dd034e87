#pragma once
// A contraction_library for tests: plans are small host objects that count their own destruction,
// workspace sizes come from a rule the test sets, builds fail when the test says so, and every
// build, destroy and enqueue is counted. Enqueue does no arithmetic; it records what it was given.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "device/contraction_library.hpp"

namespace tnrt::test {

class fake_library final : public device::contraction_library {
 public:
  struct counts {
    std::uint64_t builds = 0;    // plans built (successful plan() calls)
    std::uint64_t failures = 0;  // plan() calls that threw
    std::uint64_t destroys = 0;  // plans destroyed
    std::uint64_t enqueues = 0;
    [[nodiscard]] std::uint64_t live() const noexcept { return builds - destroys; }
  };
  /// A plan of this library: the key it was built for and its build number (0, 1, ...).
  class fake_plan final : public device::library_plan {
   public:
    fake_plan(std::shared_ptr<counts> c, std::vector<std::int64_t> key, std::uint64_t serial, std::uint64_t workspace)
        : counts_(std::move(c)), key_(std::move(key)), serial_(serial), workspace_(workspace) {}
    ~fake_plan() override { ++counts_->destroys; }
    [[nodiscard]] std::uint64_t workspace_bytes() const noexcept override { return workspace_; }
    [[nodiscard]] const std::vector<std::int64_t>& key() const noexcept { return key_; }
    [[nodiscard]] std::uint64_t serial() const noexcept { return serial_; }

   private:
    std::shared_ptr<counts> counts_;  // shared: a plan may outlive the library
    std::vector<std::int64_t> key_;
    std::uint64_t serial_;
    std::uint64_t workspace_;
  };
  using workspace_fn = std::function<std::uint64_t(const lowered_step&, dtype)>;

  fake_library() = default;

  std::shared_ptr<device::library_plan> plan(const lowered_step& s, dtype t, const device::plan_options& o) override;
  void enqueue(const device::library_plan& p, const void* a, const void* b, void* d, void* workspace,
               std::uint64_t workspace_bytes, device::stream_handle stream) override;

  /// Workspace of every plan built from now on (default: 0).
  void set_workspace(std::uint64_t bytes) {
    workspace_ = [bytes](const lowered_step&, dtype) { return bytes; };
  }
  void set_workspace(workspace_fn f) { workspace_ = std::move(f); }
  /// The next `n` builds throw device_error("fake library: ...").
  void fail_next(int n) noexcept { fail_next_ = n; }

  [[nodiscard]] const counts& stats() const noexcept { return *counts_; }
  /// The plan of the last enqueue (null before the first).
  [[nodiscard]] const fake_plan* last_enqueued() const noexcept { return last_enqueued_; }

 private:
  std::shared_ptr<counts> counts_ = std::make_shared<counts>();
  workspace_fn workspace_ = [](const lowered_step&, dtype) { return std::uint64_t{0}; };
  int fail_next_ = 0;
  const fake_plan* last_enqueued_ = nullptr;
};

}  // namespace tnrt::test
