// The slicing options of `tnrt contract` and `tnrt inspect`: --memory-limit, --slice, --slice-range.
#include <algorithm>
#include <string>

#include "cli.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cli {

bool wants_slicing(const parsed_args& args, const problem& p) {
  return args.has("memory-limit") || args.has("slice") || args.has("slice-range") || args.has("parallel-slices") ||
         args.has("ranks") || args.has("distributed") || !p.slices.empty();
}

std::vector<label_t> parse_slice_labels(const problem& p, std::string_view text) {
  std::vector<label_t> out;
  for (const std::string& name : split(text, ',')) {
    if (name.empty()) continue;
    const auto it = std::find(p.net.label_names.begin(), p.net.label_names.end(), name);
    if (it == p.net.label_names.end()) throw shape_error("--slice: the network has no label '" + name + "'");
    const auto l = static_cast<label_t>(it - p.net.label_names.begin());
    if (std::find(out.begin(), out.end(), l) != out.end()) throw shape_error("--slice: label '" + name + "' is given twice");
    out.push_back(l);
  }
  if (out.empty()) throw usage_error("--slice needs at least one label name (--slice a,b)");
  return out;
}

slice_args parse_slice_args(const parsed_args& args, const problem& p) {
  slice_args s;
  if (const auto v = args.value("memory-limit")) s.limit = parse_memory_limit(*v);
  if (const auto v = args.value("slice")) {
    if (*v == "auto") {
      s.search = true;
    } else {
      s.labels = parse_slice_labels(p, *v);
    }
  }
  if (const auto v = args.value("slice-range")) {
    const auto colon = v->find(':');
    if (colon == std::string::npos) throw usage_error("--slice-range must be FIRST:COUNT (COUNT may be empty: to the last), got '" + *v + "'");
    s.first = parse_int(std::string_view(*v).substr(0, colon), "--slice-range FIRST");
    const std::string_view count = std::string_view(*v).substr(colon + 1);
    s.count = count.empty() ? -1 : parse_int(count, "--slice-range COUNT");
    if (s.first < 0 || (s.count < 0 && !count.empty())) throw usage_error("--slice-range FIRST and COUNT must not be negative, got '" + *v + "'");
  }
  return s;
}

}  // namespace tnrt::cli
