// The arena a network's tree buffers need under the static memory plan (core tree_liveness and
// plan_memory, inputs outside the arena, f32), without a GPU and without the steps' workspaces,
// which compiled programs plan into the same arena. Built by hand against the core library:
//   g++ -std=c++20 -O2 -Iinclude -Isrc bench/paths/tree_arena.cpp build/libtnrt_core.a -o /tmp/tree_arena
//   /tmp/tree_arena FILE.json...
#include <cstdio>

#include "tnrt/formats.hpp"
#include "tnrt/memory_plan.hpp"

int main(int argc, char** argv) {
  using namespace tnrt;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.json...\n", argv[0]);
    return 2;
  }
  for (int f = 1; f < argc; ++f) {
    problem p = load_file(argv[f], load_options{});
    p.type = dtype::f32;
    const memory_plan m = plan_memory(tree_liveness(p, false).requests);
    std::printf("%s: arena %.3f GiB, lower bound %.3f GiB\n", argv[f], static_cast<double>(m.arena_bytes) / 1073741824.0,
                static_cast<double>(m.lower_bound_bytes) / 1073741824.0);
  }
  return 0;
}
