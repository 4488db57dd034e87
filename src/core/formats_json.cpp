#include "core/formats_json.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tnrt/errors.hpp"

namespace tnrt::detail {

std::string read_text_file(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw io_error("cannot open '" + path + "': " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, got);
  // fread also stops at EOF; only ferror says the read failed (a directory, an I/O error).
  if (std::ferror(f.get())) throw io_error("cannot read '" + path + "': " + std::strerror(errno ? errno : EIO));
  return text;
}

json parse_json(std::string_view text, const std::string& source) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // nlohmann: "[json.exception.parse_error.101] parse error at line 3, column 7: syntax error ...";
    // keep the position and the reason, drop the library's tag.
    std::string what = e.what();
    const std::string tag = "parse error ";
    const auto at = what.find(tag);
    what = at == std::string::npos ? what + " (byte " + std::to_string(e.byte) + ")" : what.substr(at + tag.size());
    throw tnrt::parse_error(source + ": malformed JSON " + what);
  } catch (const json::exception& e) {
    // json::out_of_range 406: a number too large for a double ("1e999"); found by fuzz/.
    std::string what = e.what();
    const auto tag_end = what.find("] ");
    if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
    throw tnrt::parse_error(source + ": malformed JSON: " + what);
  }
}

void throw_parse(const std::string& source, const std::string& where, const std::string& what) {
  throw tnrt::parse_error(source + ": " + (where.empty() ? "" : where + ": ") + what);
}

std::string type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number_float()) return "a non-integer number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  return "null";
}

const json* find_member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const json& member(const json& object, const char* key, const std::string& source, const std::string& where) {
  if (!object.is_object()) throw_parse(source, where, "expected an object, got " + type_name(object));
  const json* v = find_member(object, key);
  if (v == nullptr) throw_parse(source, where, std::string("missing \"") + key + "\"");
  return *v;
}

const json& expect_array(const json& v, const std::string& source, const std::string& where) {
  if (!v.is_array()) throw_parse(source, where, "expected an array, got " + type_name(v));
  return v;
}

std::int64_t expect_integer(const json& v, const std::string& source, const std::string& where) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) throw_parse(source, where, "integer " + std::to_string(u) + " is too large");
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  throw_parse(source, where, "expected an integer, got " + type_name(v));
}

std::vector<label_t> read_slices(const json& doc, const network& net, const std::string& source) {
  std::vector<label_t> out;
  const json* v = find_member(doc, "slices");
  if (v == nullptr || v->is_null()) return out;
  const json& arr = expect_array(*v, source, "slices");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string at = "slices[" + std::to_string(i) + "]";
    std::string name;
    if (arr[i].is_string()) {
      name = arr[i].get<std::string>();
    } else if (arr[i].is_number_integer()) {
      name = std::to_string(expect_integer(arr[i], source, at));
    } else {
      throw_parse(source, at, "a sliced label must be a label name (a string), got " + type_name(arr[i]));
    }
    const auto it = std::find(net.label_names.begin(), net.label_names.end(), name);
    if (it == net.label_names.end()) throw shape_error(source + ": " + at + ": the network has no label '" + name + "' to slice");
    const auto l = static_cast<label_t>(it - net.label_names.begin());
    if (std::find(out.begin(), out.end(), l) != out.end()) throw shape_error(source + ": " + at + ": label '" + name + "' is sliced twice");
    out.push_back(l);
  }
  return out;
}

}  // namespace tnrt::detail

namespace tnrt {

problem load_file(const std::string& path, const load_options& opt) {
  const detail::json doc = detail::parse_json(detail::read_text_file(path), path);
  if (!doc.is_object()) detail::throw_parse(path, "", "expected a JSON object, got " + detail::type_name(doc));
  if (doc.contains("tree")) return detail::load_tree_json_value(doc, opt.tree, path);
  if (doc.contains("format_string")) return detail::load_einsum_json_value(doc, opt.einsum, path);
  detail::throw_parse(path, "", "neither a tree JSON (no \"tree\") nor an einsum JSON (no \"format_string\")");
}

}  // namespace tnrt
