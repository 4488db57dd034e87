// libFuzzer target: tnrt::load_einsum_json. Byte 0 picks the options (path name, dtype override),
// the rest is the JSON text. See fuzz/build.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_common.hpp"
#include "tnrt/formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  tnrt::einsum_json_options opt;
  switch (data[0] & 3U) {
    case 1: opt.path_name = "opt_size"; break;
    case 2: opt.path_name = "opt_flops"; break;
    case 3: opt.path_name = "opt_bogus"; break;
    default: break;
  }
  if ((data[0] & 4U) != 0) opt.type = static_cast<tnrt::dtype>((data[0] >> 3U) & 3U);
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  return tnrt_fuzz::guarded([&] {
    const tnrt::problem p = tnrt::load_einsum_json(text, opt, "fuzz");
    tnrt_fuzz::exercise_problem(p);
  });
}
