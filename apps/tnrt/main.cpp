// The `tnrt` command-line tool: dispatches to a subcommand and turns every failure into exactly one
// line on stderr and the exit code of its error class (exit_codes.hpp).
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string>

#include "cli.hpp"
#include "exit_codes.hpp"
#include "tnrt/errors.hpp"
#ifdef TNRT_HAVE_CUDA
#include "tnrt/cuda/runner.hpp"
#endif

namespace {

constexpr const char* main_help = R"(usage: tnrt COMMAND [options]

tnrt contracts tensor networks and einsum expressions on NVIDIA GPUs through cuTENSOR, with a CPU
reference engine.

commands:
  contract INPUT   contract a tree JSON, einsum JSON or einsum expression; print result and time
  inspect INPUT    print the contraction cost (tc, sc, rwc), bytes moved and the bandwidth floor
  bench SUITE      run a benchmark suite (bench/harness.py)

  tnrt COMMAND --help   options of one command
  tnrt --version        version and backends

exit codes: 0 ok, 2 usage, 3 parse, 4 shape, 5 path, 6 dtype, 7 i/o, 8 out of memory, 9 device,
            10 not supported, 11 verification, 70 internal
)";

/// The message on one line: a multi-line message would break the one-line contract scripts rely on.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

int fail(const char* kind, const std::string& message, tnrt::cli::exit_code code) {
  std::fflush(stdout);
  std::fprintf(stderr, "tnrt: %s: %s\n", kind, one_line(message).c_str());
  return static_cast<int>(code);
}

void print_version() {
  std::printf("tnrt %s\n", std::string(tnrt::cli::version).c_str());
#ifdef TNRT_HAVE_CUDA
  const std::string reason = tnrt::cuda::unavailable_reason();
  std::printf("backends: cpu, cuda (%s)\n", reason.empty() ? "usable here" : ("not usable here: " + reason).c_str());
  const std::string cupti = tnrt::cuda::profiler_unavailable_reason();
  std::printf("profiler (--profile): %s\n", (cupti.empty() ? tnrt::cuda::profiler_library() : "not usable here: " + cupti).c_str());
#else
  std::printf("backends: cpu (built without the CUDA backend)\n");
#endif
}

int dispatch(int argc, char** argv) {
  if (argc < 2) throw tnrt::usage_error("missing COMMAND (usage: tnrt contract|inspect|bench ...; see 'tnrt --help')");
  const std::string command = argv[1];
  const std::span<char* const> rest(argv + 2, static_cast<std::size_t>(argc - 2));
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(main_help, stdout);
    return 0;
  }
  if (command == "--version" || command == "version") {
    print_version();
    return 0;
  }
  if (command == "contract") return tnrt::cli::run_contract(rest);
  if (command == "inspect") return tnrt::cli::run_inspect(rest);
  if (command == "bench") return tnrt::cli::run_bench(rest, argv[0]);
  throw tnrt::usage_error("unknown command '" + command + "' (commands: contract, inspect, bench; see 'tnrt --help')");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const tnrt::error& e) {
    return fail(e.kind(), e.what(), tnrt::cli::exit_code_of(e));
  } catch (const std::bad_alloc&) {
    return fail("out of memory", "host memory exhausted", tnrt::cli::exit_code::out_of_memory);
  } catch (const std::exception& e) {
    return fail("internal error", e.what(), tnrt::cli::exit_code::internal);
  } catch (...) {
    return fail("internal error", "unknown exception", tnrt::cli::exit_code::internal);
  }
}
