#pragma once
// Choosing between two whole programs by their replays (compiled_program::build: the layouts, the
// tree's branches at once, the split sums). Each candidate is replayed a few times; a candidate
// replaces the kept program only when it is faster beyond the replays' own spread: its median at
// least min_gain below the kept one's, and its slowest replay faster than the kept one's fastest.
//
// Why not a fixed 3%: replays of one program differ far less than 3% on the networks where whole
// programs are long (regular3-n160: 10.113, 10.106, 10.108 ms), and a fixed margin left programs
// 2-3% faster unused (H200, 2026-12-06p: regular3-n160 kept column at 10.09 ms over planned at
// 9.90; lm-sliding-d2 kept row at 1.628 over follow at 1.582), while on short, noisy programs the
// spread itself is the margin.
#include <vector>

namespace tnrt {

struct replay_times {
  float median = 0;
  float fastest = 0;
  float slowest = 0;
};

/// Median (the upper one of an even count), fastest and slowest of `ms`; all 0 when empty.
replay_times summarize_replays(std::vector<float> ms);

/// True when `cand` is faster than `kept` beyond the spread of both: cand.median <= kept.median *
/// (1 - min_gain) and cand.slowest < kept.fastest.
bool clearly_faster(const replay_times& cand, const replay_times& kept, float min_gain = 0.01F);

}  // namespace tnrt
