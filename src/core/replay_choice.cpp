#include "core/replay_choice.hpp"

#include <algorithm>
#include <cstddef>

namespace tnrt {

replay_times summarize_replays(std::vector<float> ms) {
  replay_times r;
  if (ms.empty()) return r;
  const auto mid = ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2);
  std::nth_element(ms.begin(), mid, ms.end());
  r.median = *mid;
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  r.fastest = *lo;
  r.slowest = *hi;
  return r;
}

bool clearly_faster(const replay_times& cand, const replay_times& kept, float min_gain, float margin) {
  if (cand.median <= kept.median * (1.0F - margin)) return true;
  return cand.median <= kept.median * (1.0F - min_gain) && cand.slowest < kept.fastest;
}

}  // namespace tnrt
