// libFuzzer target: tnrt::load_tree_json. Byte 0 picks the options (dtype, bond dimension 1..3),
// the rest is the JSON text. See fuzz/build.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.hpp"
#include "tnrt/formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  tnrt::tree_json_options opt;
  opt.type = static_cast<tnrt::dtype>(data[0] & 3U);
  opt.bond_dim = 1 + ((data[0] >> 2U) % 3U);
  if ((data[0] & 0x40U) != 0) opt.label_sizes["1"] = 3;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  return tnrt_fuzz::guarded([&] {
    const tnrt::problem p = tnrt::load_tree_json(text, opt, "fuzz");
    tnrt_fuzz::exercise_problem(p);
  });
}
