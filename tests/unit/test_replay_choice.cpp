// Choosing between whole programs by their replays (src/core/replay_choice.hpp):
//  - the summary: median (upper of an even count), fastest, slowest; empty gives zeros;
//  - a candidate replaces the kept program when its median is 3% lower whatever its spread, or when
//    its median is min_gain lower and its slowest replay beats the kept one's fastest: the H200's
//    regular3-n160 and lm-sliding-d2 layout times (2% and 3% apart, tight replays) switch;
//    overlapping replays under 3%, a gain under min_gain, a slower or an equal candidate do not.
#include <gtest/gtest.h>

#include <vector>

#include "core/replay_choice.hpp"

namespace tnrt {
namespace {

TEST(ReplayChoice, Summary) {
  const replay_times r = summarize_replays({3.0F, 1.0F, 5.0F, 2.0F, 4.0F});
  EXPECT_FLOAT_EQ(r.median, 3.0F);
  EXPECT_FLOAT_EQ(r.fastest, 1.0F);
  EXPECT_FLOAT_EQ(r.slowest, 5.0F);
  const replay_times even = summarize_replays({4.0F, 1.0F, 3.0F, 2.0F});
  EXPECT_FLOAT_EQ(even.median, 3.0F);
  const replay_times none = summarize_replays({});
  EXPECT_FLOAT_EQ(none.median, 0.0F);
  EXPECT_FLOAT_EQ(none.fastest, 0.0F);
  EXPECT_FLOAT_EQ(none.slowest, 0.0F);
}

TEST(ReplayChoice, TightReplaysSwitchOnSmallGains) {
  // regular3-n160: column 10.094 ms kept, planned 9.899 (about 2% faster), replays within 0.1%.
  const replay_times column = summarize_replays({10.09F, 10.094F, 10.10F, 10.092F, 10.096F});
  const replay_times planned = summarize_replays({9.897F, 9.899F, 9.905F, 9.895F, 9.90F});
  EXPECT_TRUE(clearly_faster(planned, column));
  EXPECT_FALSE(clearly_faster(column, planned));
  // lm-sliding-d2: row 1.628 kept, follow 1.582.
  EXPECT_TRUE(clearly_faster(summarize_replays({1.580F, 1.582F, 1.585F, 1.581F, 1.583F}),
                             summarize_replays({1.626F, 1.628F, 1.631F, 1.627F, 1.629F})));
}

TEST(ReplayChoice, NoiseOrSmallGainsKeep) {
  const replay_times kept = summarize_replays({1.00F, 1.01F, 0.99F, 1.00F, 1.02F});
  // 2% faster at the median, but one replay as slow as the kept one's fastest: inside the noise.
  EXPECT_FALSE(clearly_faster(summarize_replays({0.98F, 0.98F, 0.97F, 0.99F, 0.975F}), kept));
  // 5% faster at the median with the same slow replay: the 3% margin takes it (one slow replay does
  // not hold back a clearly faster program), and a margin of 6% does not.
  EXPECT_TRUE(clearly_faster(summarize_replays({0.95F, 0.95F, 0.94F, 0.99F, 0.96F}), kept));
  EXPECT_FALSE(clearly_faster(summarize_replays({0.95F, 0.95F, 0.94F, 0.99F, 0.96F}), kept, 0.01F, 0.06F));
  // Separated replays, but under the 1% gain.
  const replay_times k2 = summarize_replays({1.000F, 1.000F, 1.000F, 1.000F, 1.000F});
  EXPECT_FALSE(clearly_faster(summarize_replays({0.995F, 0.995F, 0.995F, 0.995F, 0.995F}), k2));
  EXPECT_TRUE(clearly_faster(summarize_replays({0.985F, 0.985F, 0.985F, 0.985F, 0.985F}), k2));
  // A larger min_gain asks for more.
  EXPECT_FALSE(clearly_faster(summarize_replays({0.985F, 0.985F, 0.985F, 0.985F, 0.985F}), k2, 0.02F));
  // Equal, or slower: never.
  EXPECT_FALSE(clearly_faster(k2, k2));
  EXPECT_FALSE(clearly_faster(summarize_replays({1.1F, 1.1F, 1.1F}), k2));
}

}  // namespace
}  // namespace tnrt
