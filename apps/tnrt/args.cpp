#include <unistd.h>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>

#include "cli.hpp"
#include "tnrt/errors.hpp"

namespace tnrt::cli {

namespace {
std::string see_help(const std::string& command) { return " (see 'tnrt " + command + " --help')"; }
}  // namespace

parsed_args::parsed_args(std::string command, std::span<char* const> args, std::span<const option_spec> specs)
    : command_(std::move(command)) {
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    // "-" alone is a positional (conventionally stdin); "-h" is the one short option.
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      positionals_.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h") {
      values_["help"] = "";
      continue;
    }
    if (!arg.starts_with("--")) {
      throw usage_error("unknown option '" + std::string(arg) + "' for 'tnrt " + command_ + "'" + see_help(command_));
    }
    std::string_view name = arg.substr(2);
    std::optional<std::string_view> inline_value;
    if (const auto eq = name.find('='); eq != std::string_view::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const option_spec& s) { return s.name == name; });
    if (spec == specs.end()) {
      throw usage_error("unknown option '--" + std::string(name) + "' for 'tnrt " + command_ + "'" +
                        see_help(command_));
    }
    if (!spec->takes_value) {
      if (inline_value) throw usage_error("option '--" + std::string(name) + "' takes no value" + see_help(command_));
      values_[std::string(name)] = "";
      continue;
    }
    if (inline_value) {
      values_[std::string(name)] = std::string(*inline_value);
    } else if (i + 1 < args.size()) {
      values_[std::string(name)] = args[++i];
    } else {
      throw usage_error("option '--" + std::string(name) + "' needs a value" + see_help(command_));
    }
  }
}

bool parsed_args::has(std::string_view name) const { return values_.find(name) != values_.end(); }

std::optional<std::string> parsed_args::value(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string parsed_args::value_or(std::string_view name, std::string_view fallback) const {
  return value(name).value_or(std::string(fallback));
}

std::int64_t parsed_args::int_or(std::string_view name, std::int64_t fallback, std::int64_t min,
                                 std::int64_t max) const {
  const auto v = value(name);
  if (!v) return fallback;
  const std::int64_t n = parse_int(*v, "--" + std::string(name));
  if (n < min || n > max) {
    throw usage_error("--" + std::string(name) + " must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                      "], got " + *v);
  }
  return n;
}

double parsed_args::double_or(std::string_view name, double fallback) const {
  const auto v = value(name);
  return v ? parse_double(*v, "--" + std::string(name)) : fallback;
}

std::size_t parsed_args::bytes_or(std::string_view name, std::size_t fallback) const {
  const auto v = value(name);
  if (!v) return fallback;
  std::string_view text = *v;
  unsigned shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k':
      case 'K':
        shift = 10;
        break;
      case 'm':
      case 'M':
        shift = 20;
        break;
      case 'g':
      case 'G':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift != 0) text.remove_suffix(1);
  }
  const std::int64_t n = parse_int(text, "--" + std::string(name));
  if (n < 0 || static_cast<std::uint64_t>(n) > (std::numeric_limits<std::size_t>::max() >> shift)) {
    throw usage_error("--" + std::string(name) + " must be a byte count (e.g. 512M, 1G), got " + *v);
  }
  return static_cast<std::size_t>(n) << shift;
}

std::string parsed_args::choice_or(std::string_view name, std::string_view fallback,
                                   std::initializer_list<std::string_view> choices) const {
  std::string v = value_or(name, fallback);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (const auto c : choices) {
    if (!list.empty()) list += '|';
    list += c;
  }
  throw usage_error("--" + std::string(name) + " must be one of " + list + ", got '" + v + "'");
}

std::int64_t parse_int(std::string_view text, std::string_view what) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
    throw usage_error(std::string(what) + " expects an integer, got '" + std::string(text) + "'");
  }
  return n;
}

double parse_double(std::string_view text, std::string_view what) {
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || !std::isfinite(x)) {
    throw usage_error(std::string(what) + " expects a finite number, got '" + std::string(text) + "'");
  }
  return x;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    parts.emplace_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string format_bytes(double bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (bytes >= 1024.0 && u + 1 < std::size(units)) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  // The temporary sits beside the target so that the rename stays within one file system.
  const fs::path tmp = target.parent_path() / (target.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw io_error("cannot write '" + path + "': cannot create '" + tmp.string() + "'");
    out << text;
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw io_error("cannot write '" + path + "': write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw io_error("cannot write '" + path + "': " + ec.message());
  }
}

memory_limit_arg parse_memory_limit(std::string_view text) {
  const std::string original(text);
  auto bad = [&]() {
    return usage_error("--memory-limit must be a size (40G, 40GB, 40GiB, 4096) or a share of free device memory (80%), got '" + original + "'");
  };
  memory_limit_arg r;
  if (!text.empty() && text.back() == '%') {
    text.remove_suffix(1);
    double share = 0;
    try {
      share = parse_double(text, "--memory-limit");
    } catch (const usage_error&) {
      throw bad();
    }
    if (!(share > 0 && share <= 100)) throw usage_error("--memory-limit share must be in (0, 100]%, got '" + original + "'");
    r.fraction = share / 100.0;
    return r;
  }
  static const struct {
    const char* suffix;
    double scale;
  } units[] = {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
               {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},          {"TB", 1e12},
               {"K", 1024.0},   {"M", 1048576.0},   {"G", 1073741824.0},  {"T", 1099511627776.0},
               {"B", 1.0}};
  double scale = 1.0;
  for (const auto& u : units) {
    const std::string_view suf(u.suffix);
    if (text.size() > suf.size() && text.substr(text.size() - suf.size()) == suf) {
      scale = u.scale;
      text.remove_suffix(suf.size());
      break;
    }
  }
  double n = 0;
  try {
    n = parse_double(text, "--memory-limit");
  } catch (const usage_error&) {
    throw bad();
  }
  const double bytes = n * scale;
  if (!(bytes >= 1.0) || bytes > 1.8e19) throw bad();
  r.bytes = static_cast<std::size_t>(bytes);
  return r;
}

}  // namespace tnrt::cli
