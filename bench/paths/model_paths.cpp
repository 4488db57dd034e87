// auto's path under the cost model as it is and under another calibration (the overlap fit of
// bench/paths/calibrate.py --overlap), without a GPU: for each file, both searches as auto runs them
// (automatic_search_options, no time bound), each path priced by both models, and both paths written
// as path files (`{"path": [[i, j], ...]}`) that `tnrt contract FILE --path-file P` runs on a GPU.
// Prints a Markdown table. Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/model_paths.cpp build/libtnrt_core.a -o /tmp/model_paths
//   /tmp/model_paths OUTDIR TILE PARALLEL_ELEMENTS PARALLEL_EXPONENT MEMORY_EFFICIENCY OVERLAP FILE.json...
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "tnrt/formats.hpp"
#include "tnrt/search.hpp"

namespace {

void write_path(const std::string& file, const std::vector<std::vector<int>>& path) {
  std::ofstream out(file);
  out << "{\"path\": [";
  for (std::size_t i = 0; i < path.size(); ++i) {
    out << (i ? ", [" : "[");
    for (std::size_t j = 0; j < path[i].size(); ++j) out << (j ? ", " : "") << path[i][j];
    out << "]";
  }
  out << "]}\n";
  if (!out) throw std::runtime_error("cannot write " + file);
}

double model_ms(const tnrt::network& net, const std::vector<std::vector<int>>& path, const tnrt::cost_model& m) {
  return tnrt::predicted_seconds(net, tnrt::tree_from_linear_path(net, path), m) * 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr, "usage: %s OUTDIR TILE PARALLEL_ELEMENTS PARALLEL_EXPONENT MEMORY_EFFICIENCY OVERLAP FILE.json...\n", argv[0]);
    return 2;
  }
  const std::string outdir = argv[1];
  double terms[5];
  for (int i = 0; i < 5; ++i) {
    char* end = nullptr;
    terms[i] = std::strtod(argv[2 + i], &end);
    if (end == argv[2 + i] || *end != '\0') {
      std::fprintf(stderr, "model_paths: not a number: %s\n", argv[2 + i]);
      return 2;
    }
  }
  try {
    std::printf("| network | as is: model ms, other model ms, tc / sc | other: model ms, other model ms, tc / sc | same path |\n|---|---|---|---|\n");
    for (int i = 7; i < argc; ++i) {
      const tnrt::problem p = tnrt::load_file(argv[i], {});
      std::string name = argv[i];
      name = name.substr(name.find_last_of('/') + 1);
      name = name.substr(0, name.rfind(".json"));
      tnrt::search_options base = tnrt::automatic_search_options(p.type);
      base.max_seconds = 0;
      tnrt::search_options other = base;
      other.model.gemm_tile = terms[0];
      other.model.parallel_elements = terms[1];
      other.model.parallel_exponent = terms[2];
      other.model.memory_efficiency = terms[3];
      other.model.overlap = terms[4];
      const tnrt::search_result a = tnrt::search_path(p.net, base), b = tnrt::search_path(p.net, other);
      write_path(outdir + "/" + name + "-asis.json", a.path);
      write_path(outdir + "/" + name + "-other.json", b.path);
      std::printf("| %s | %.3f, %.3f, %.2f / %.2f | %.3f, %.3f, %.2f / %.2f | %s |\n", name.c_str(), model_ms(p.net, a.path, base.model),
                  model_ms(p.net, a.path, other.model), a.log2_flops, a.log2_largest, model_ms(p.net, b.path, base.model),
                  model_ms(p.net, b.path, other.model), b.log2_flops, b.log2_largest, a.path == b.path ? "yes" : "no");
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_paths: %s\n", e.what());
    return 1;
  }
  return 0;
}
