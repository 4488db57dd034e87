#include "device/plan_cache.hpp"

#include "tnrt/errors.hpp"

namespace tnrt::device {

plan_cache::plan_cache(contraction_library& library, std::size_t capacity)
    : library_(&library),
      cache_(
          capacity, [this](std::shared_ptr<library_plan>& p) { on_evict(p); },
          [](const library_plan&) { return plan_metadata_bytes; }) {}

void plan_cache::key_into(const lowered_step& s, dtype t, const plan_options& o, std::vector<std::int64_t>& out) {
  s.key_into(out);
  out.push_back(static_cast<std::int64_t>(t));
  out.push_back((o.jit ? 1 : 0) | (o.autotune ? 2 : 0));
  out.push_back(o.algo);
  out.push_back(o.alignment);
  out.push_back(o.precision);
  out.push_back(o.kernel_rank);
}

std::shared_ptr<library_plan> plan_cache::plan(const lowered_step& s, dtype t, const plan_options& o) {
  key_into(s, t, o, key_scratch_);
  return cache_.ensure(key_scratch_, [&] {
    try {
      if (injected_failures_ > 0) {
        --injected_failures_;
        throw device_error("plan build failed: injected failure (fault injection)");
      }
      std::shared_ptr<library_plan> p = library_->plan(s, t, o);
      if (!p) throw internal_error("contraction library returned no plan and no error");
      return p;
    } catch (...) {
      ++failed_builds_;
      throw;
    }
  });
}

void plan_cache::set_capacity(std::size_t capacity) { cache_.set_capacity(capacity); }

void plan_cache::clear() { cache_.clear(); }

void plan_cache::on_evict(std::shared_ptr<library_plan>& p) {
  graveyard_.push_back(p);
  // Bounded: a long eager session that never synchronizes must not hold every evicted plan.
  if (graveyard_.size() > graveyard_limit) destroy_evicted();
}

void plan_cache::destroy_evicted() noexcept { graveyard_.clear(); }

plan_cache_stats plan_cache::stats() const noexcept {
  const lru_stats l = cache_.stats();
  return {l.entries, l.capacity, l.hits, l.misses, l.evictions, l.clears, l.retained_bytes};
}

}  // namespace tnrt::device
