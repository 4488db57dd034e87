// `tnrt bench`: hands over to the benchmark harness (bench/harness.py), which runs suites and peers
// and reads `tnrt contract --json` reports.
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cli.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cli {

namespace {

constexpr const char* bench_help = R"(usage: tnrt bench SUITE [harness arguments]

Runs `python3 <repo>/bench/harness.py SUITE [arguments] --tnrt <this tnrt>`. SUITE is a suite
file, or a name from <repo>/bench/suites ("reference" for bench/suites/reference.json). The
repository is found beside the executable (<repo>/build/tnrt -> <repo>/bench/harness.py), else in
$TNRT_ROOT.
`tnrt bench --help` prints this; `tnrt bench SUITE --help` asks the harness for its own help.
)";

std::filesystem::path executable_path(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = std::filesystem::absolute(argv0, ec);
  return self;
}

}  // namespace

int run_bench(std::span<char* const> argv, const char* argv0) {
  if (argv.empty() || std::strcmp(argv[0], "--help") == 0 || std::strcmp(argv[0], "-h") == 0) {
    if (argv.empty()) throw usage_error("missing SUITE (usage: tnrt bench SUITE [args]; see 'tnrt bench --help')");
    std::fputs(bench_help, stdout);
    return 0;
  }
  std::vector<std::filesystem::path> candidates{executable_path(argv0).parent_path() / ".." / "bench" / "harness.py"};
  if (const char* root = std::getenv("TNRT_ROOT"); root != nullptr && *root != '\0') {
    candidates.push_back(std::filesystem::path(root) / "bench" / "harness.py");
  }
  std::filesystem::path harness;
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) {
      harness = std::filesystem::weakly_canonical(c, ec);
      break;
    }
  }
  if (harness.empty()) {
    std::string searched;
    for (const auto& c : candidates) {
      if (!searched.empty()) searched += ", ";
      searched += c.lexically_normal().string();
    }
    throw io_error("bench/harness.py not found (searched " + searched +
                   (std::getenv("TNRT_ROOT") ? "" : "; set TNRT_ROOT to the repository") + ")");
  }
  std::vector<std::string> storage{"python3", harness.string()};
  bool tnrt_given = false;
  for (char* arg : argv) {
    storage.emplace_back(arg);
    tnrt_given = tnrt_given || std::string_view(arg) == "--tnrt" || std::string_view(arg).starts_with("--tnrt=");
  }
  // A bare suite name means the suite of that name in the repository.
  std::error_code ec;
  const auto named = harness.parent_path() / "suites" / (storage[2] + ".json");
  if (!storage[2].starts_with("-") && !std::filesystem::exists(storage[2], ec) &&
      std::filesystem::is_regular_file(named, ec)) {
    storage[2] = named.string();
  }
  // The harness benchmarks this very binary unless told otherwise.
  if (!tnrt_given) {
    storage.emplace_back("--tnrt");
    storage.push_back(executable_path(argv0).string());
  }
  std::vector<char*> exec_args;
  for (auto& s : storage) exec_args.push_back(s.data());
  exec_args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execvp("python3", exec_args.data());
  throw io_error(std::string("cannot run python3: ") + std::strerror(errno));
}

}  // namespace tnrt::cli
