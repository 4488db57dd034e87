#pragma once
// Private to the `tnrt` tool: the hand-written argument parser, the problem loader shared by
// `contract` and `inspect`, the subcommands, and small output helpers.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tnrt/network.hpp"
#include "tnrt/path.hpp"
#include "tnrt/tensor.hpp"

namespace tnrt::cli {

// Kept in step with project(tnrt VERSION ...) in CMakeLists.txt.
inline constexpr std::string_view version = "0.1.0";

/// H200 measured device-to-device copy bandwidth, the default divisor of the bandwidth floor.
inline constexpr double default_bandwidth_gbps = 4250.0;

/// What a floor line adds after its divisor: nothing when --bandwidth gave it; else that the divisor is
/// the H200's, so that a floor read on another GPU (an H100 copies at about 3020 GB/s) is not taken
/// for that GPU's.
inline const char* bandwidth_note(bool given) {
  return given ? "" : ", the H200's copy bandwidth: --bandwidth sets another";
}

struct option_spec {
  std::string_view name;  // without the leading "--"
  bool takes_value;
};

/// Options and positionals of one subcommand. Accepts `--name value` and `--name=value`; the last
/// occurrence of an option wins; `--` ends the options. Unknown options and missing values throw
/// usage_error, so every command-line mistake leaves with exit code 2.
class parsed_args {
 public:
  parsed_args(std::string command, std::span<char* const> args, std::span<const option_spec> specs);

  [[nodiscard]] const std::string& command() const noexcept { return command_; }
  [[nodiscard]] const std::vector<std::string>& positionals() const noexcept { return positionals_; }
  [[nodiscard]] bool has(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> value(std::string_view name) const;
  [[nodiscard]] std::string value_or(std::string_view name, std::string_view fallback) const;
  /// Integer option in [min, max]; throws usage_error naming the option otherwise.
  [[nodiscard]] std::int64_t int_or(std::string_view name, std::int64_t fallback, std::int64_t min,
                                    std::int64_t max) const;
  [[nodiscard]] double double_or(std::string_view name, double fallback) const;
  /// Byte count with an optional K/M/G (powers of 1024) suffix: "512M", "1G", "4096".
  [[nodiscard]] std::size_t bytes_or(std::string_view name, std::size_t fallback) const;
  /// One of `choices`; throws usage_error listing them otherwise.
  [[nodiscard]] std::string choice_or(std::string_view name, std::string_view fallback,
                                      std::initializer_list<std::string_view> choices) const;

 private:
  std::string command_;
  std::vector<std::string> positionals_;
  std::map<std::string, std::string, std::less<>> values_;
};

/// Parse helpers that throw usage_error naming `what` (used for option values and list items).
std::int64_t parse_int(std::string_view text, std::string_view what);
double parse_double(std::string_view text, std::string_view what);
std::vector<std::string> split(std::string_view text, char sep);

/// The options that decide which problem INPUT names (shared by contract and inspect).
inline constexpr option_spec problem_option_specs[] = {
    {"dtype", true}, {"bond-dim", true}, {"label-size", true}, {"path", true}, {"optimizer", true}, {"shapes", true},
};

/// Loads INPUT: a tree JSON or einsum JSON file (decided by content), or an einsum expression whose
/// operand shapes come from --shapes (else every label gets --label-size or --bond-dim). An explicit
/// --optimizer replaces the file's own tree or path with the built-in optimizer's. `given` (the
/// --inputs tensors, if any) supplies an expression's shapes and dtype when the options do not.
/// `search_seconds`, when given, receives the wall time of the path search (0 when none ran).
problem load_problem(const std::string& input, const parsed_args& args, std::span<const host_tensor> given = {},
                     double* search_seconds = nullptr);

/// --memory-limit: a byte count (K/M/G/T: powers of 1024, KB/MB/GB/TB: powers of 1000, KiB/MiB/
/// GiB/TiB) or a share of free device memory ("80%"). Throws usage_error naming the option.
struct memory_limit_arg {
  std::size_t bytes = 0;  // 0: the share
  double fraction = 0;    // 0: the bytes
};
memory_limit_arg parse_memory_limit(std::string_view text);

/// The slicing options shared by contract and inspect.
inline constexpr option_spec slice_option_specs[] = {{"memory-limit", true}, {"slice", true}, {"slice-range", true}};
/// True when the command line or the problem's file asks for a sliced contraction.
bool wants_slicing(const parsed_args& args, const problem& p);
/// --slice NAME,NAME,... as label ids of p (shape_error naming an unknown label).
std::vector<label_t> parse_slice_labels(const problem& p, std::string_view text);
/// The slice request of the command line (labels, limit) and the options it implies (a share
/// becomes options::memory_limit_fraction).
struct slice_args {
  std::vector<label_t> labels;
  memory_limit_arg limit;
  std::int64_t first = 0, count = -1;  // --slice-range FIRST:COUNT (COUNT empty: to the last)
  bool search = false;                 // --slice auto: ignore the file's slices, find labels under the limit
};
slice_args parse_slice_args(const parsed_args& args, const problem& p);

/// "1.5 GiB"-style text.
std::string format_bytes(double bytes);
/// Writes `text` to `path` through a temporary file and a rename, so a failure never leaves a
/// partial file. Throws io_error.
void write_file_atomically(const std::string& path, const std::string& text);

int run_contract(std::span<char* const> args);
int run_inspect(std::span<char* const> args);
int run_bench(std::span<char* const> args, const char* argv0);

}  // namespace tnrt::cli
