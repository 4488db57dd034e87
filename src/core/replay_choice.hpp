#pragma once
// Choosing between two whole programs by their replays (compiled_program::build: the layouts, the
// tree's branches at once, the split sums). Each candidate is replayed a few times; a candidate
// replaces the kept program when its median is 3% lower (the rule before 2026-12-06, kept so that
// one slow replay cannot hold back a clearly faster program), or when it is faster beyond the
// replays' own spread: its median at least min_gain lower and its slowest replay faster than the
// kept one's fastest.
//
// Why the second way: runs of one program differ far less than 3% on the networks whose programs
// are long (regular3-n160's three timed runs: 10.113, 10.106, 10.108 ms), and the 3% alone left
// programs 2-3% faster unused (H200, 2026-12-06p: regular3-n160 kept column at 10.09 ms over planned
// at 9.90; lm-sliding-d2 kept row at 1.628 over follow at 1.582).
#include <vector>

namespace tnrt {

struct replay_times {
  float median = 0;
  float fastest = 0;
  float slowest = 0;
};

/// Median (the upper one of an even count), fastest and slowest of `ms`; all 0 when empty.
replay_times summarize_replays(std::vector<float> ms);

/// True when cand.median <= kept.median * (1 - margin), or when cand.median <= kept.median *
/// (1 - min_gain) and cand.slowest < kept.fastest (faster beyond the spread of both).
bool clearly_faster(const replay_times& cand, const replay_times& kept, float min_gain = 0.01F, float margin = 0.03F);

}  // namespace tnrt
