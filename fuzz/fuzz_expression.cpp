// libFuzzer target: tnrt::parse_shapes + tnrt::parse_expression. The input is
// "<expression>\n<shapes>" (no newline: the whole input is the shapes text of an implicit
// expression "ab,bc"). When the network parses and is small, the built-in optimizer's linear path
// (left to right beyond 6 operands) is turned into a tree and contracted on the CPU. See fuzz/build.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "tnrt/formats.hpp"
#include "tnrt/path.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::size_t nl = all.find('\n');
  const std::string_view expr = nl == std::string_view::npos ? std::string_view("ab,bc") : all.substr(0, nl);
  const std::string_view shapes_text = nl == std::string_view::npos ? all : all.substr(nl + 1);
  return tnrt_fuzz::guarded([&] {
    const auto shapes = tnrt::parse_shapes(shapes_text);
    tnrt::problem p;
    p.net = tnrt::parse_expression(expr, shapes);
    p.source = "fuzz";
    if (p.net.inputs.size() > tnrt_fuzz::max_contract_steps) return;
    std::vector<std::vector<int>> path;
    if (p.net.inputs.size() <= 6) {
      path = tnrt::optimize_path(p.net, tnrt::path_optimizer::automatic);
    } else {  // left to right: (0,1), (0,1), ... over the shrinking operand list
      for (std::size_t i = 1; i < p.net.inputs.size(); ++i) path.push_back({0, 1});
    }
    p.tree = tnrt::tree_from_linear_path(p.net, path);
    tnrt_fuzz::exercise_problem(p);
  });
}
