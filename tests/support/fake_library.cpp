#include "support/fake_library.hpp"

#include <gtest/gtest.h>

#include "tnrt/errors.hpp"

namespace tnrt::test {

std::shared_ptr<device::library_plan> fake_library::plan(const lowered_step& s, dtype t,
                                                         const device::plan_options& o) {
  if (fail_next_ > 0) {
    --fail_next_;
    ++counts_->failures;
    throw device_error("fake library: plan build failed (as the test asked)");
  }
  std::vector<std::int64_t> key = s.key();
  key.push_back(static_cast<std::int64_t>(t));
  key.push_back((o.jit ? 1 : 0) | (o.autotune ? 2 : 0));
  key.push_back(o.algo);
  key.push_back(o.alignment);
  key.push_back(o.precision);
  key.push_back(o.kernel_rank);
  const std::uint64_t workspace = workspace_(s, t);
  auto p = std::make_shared<fake_plan>(counts_, std::move(key), counts_->builds, workspace);
  ++counts_->builds;
  return p;
}

void fake_library::enqueue(const device::library_plan& p, const void*, const void*, void*, void*,
                           std::uint64_t workspace_bytes, device::stream_handle) {
  const auto* fp = dynamic_cast<const fake_plan*>(&p);
  if (fp == nullptr) {
    ADD_FAILURE() << "fake_library::enqueue: a plan this library did not build";
    return;
  }
  if (workspace_bytes < fp->workspace_bytes())
    ADD_FAILURE() << "fake_library::enqueue: " << workspace_bytes << " workspace bytes for a plan needing "
                  << fp->workspace_bytes();
  ++counts_->enqueues;
  last_enqueued_ = fp;
}

}  // namespace tnrt::test
