// Einsum expressions ("ab,bc->ac") and shape lists ("2x3,3x4") into a network.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>

#include "core/formats_json.hpp"
#include "core/utf8.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

namespace tnrt {
namespace {

struct index_char {
  char32_t code_point;
  std::string text;  // its UTF-8 bytes, the label's printable name
};

std::string join_indices(const std::vector<index_char>& operand) {
  std::string s;
  for (const auto& c : operand) s += c.text;
  return s;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

namespace detail {

network parse_expression_in(std::string_view expression, const std::vector<std::vector<std::int64_t>>& shapes,
                            const std::string& context) {
  const std::string at = context + ": ";
  std::vector<std::vector<index_char>> operands(1);
  std::optional<std::vector<index_char>> output;
  std::size_t character = 0;  // 1-based code-point position of the character being read, for messages
  for (std::size_t pos = 0; pos < expression.size();) {
    ++character;
    const char c = expression[pos];
    const std::string where = " at character " + std::to_string(character);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos;
      continue;
    }
    if (c == ',') {
      if (output) throw parse_error(at + "',' after '->'" + where + " (the output is a single operand)");
      operands.emplace_back();
      ++pos;
      continue;
    }
    if (c == '-') {
      if (pos + 1 >= expression.size() || expression[pos + 1] != '>') throw parse_error(at + "'-' not followed by '>'" + where);
      if (output) throw parse_error(at + "a second '->'" + where);
      output.emplace();
      pos += 2;
      ++character;
      continue;
    }
    if (c == '.') {
      if (expression.substr(pos, 3) == "...")
        throw not_supported(at + "ellipsis '...'" + where + " (broadcast dimensions) is not supported; name every index with a letter");
      throw parse_error(at + "'.'" + where + " is not an index (indices are letters)");
    }
    const detail::utf8_char u = detail::decode_utf8(expression, pos);
    if (u.length == 0) throw parse_error(at + "invalid UTF-8 at byte " + std::to_string(pos));
    std::string text(expression.substr(pos, u.length));
    if (!detail::is_unicode_letter(u.code_point))
      throw parse_error(at + "'" + text + "' (" + detail::code_point_name(u.code_point) + ")" + where +
                        " is not an index: indices are letters");
    (output ? *output : operands.back()).push_back({u.code_point, std::move(text)});
    pos += u.length;
  }

  if (shapes.size() != operands.size())
    throw shape_error(at + "the expression has " + std::to_string(operands.size()) + " operand" + (operands.size() == 1 ? "" : "s") +
                      " but " + std::to_string(shapes.size()) + " shape" + (shapes.size() == 1 ? " was" : "s were") + " given");

  network net;
  std::map<char32_t, label_t> ids;
  std::vector<std::size_t> first_operand;  // by label id: where its extent was first seen, for messages
  net.inputs.resize(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const auto& op = operands[i];
    const auto& shape = shapes[i];
    if (op.size() != shape.size())
      throw shape_error(at + "operand " + std::to_string(i) + " ('" + join_indices(op) + "') has " + std::to_string(op.size()) +
                        " ind" + (op.size() == 1 ? "ex" : "ices") + " but its shape " + shape_text(shape) + " has rank " +
                        std::to_string(shape.size()));
    for (std::size_t k = 0; k < op.size(); ++k) {
      const std::int64_t extent = shape[k];
      if (extent <= 0)
        throw shape_error(at + "operand " + std::to_string(i) + ": index '" + op[k].text + "' has extent " + std::to_string(extent) +
                          " (extents must be positive)");
      auto [it, added] = ids.try_emplace(op[k].code_point, static_cast<label_t>(net.extents.size()));
      if (added) {
        net.extents.push_back(extent);
        net.label_names.push_back(op[k].text);
        first_operand.push_back(i);
      } else if (net.extents[static_cast<std::size_t>(it->second)] != extent) {
        const auto l = static_cast<std::size_t>(it->second);
        throw shape_error(at + "index '" + op[k].text + "' has extent " + std::to_string(net.extents[l]) + " in operand " +
                          std::to_string(first_operand[l]) + " but " + std::to_string(extent) + " in operand " + std::to_string(i));
      }
      net.inputs[i].push_back(it->second);
    }
  }

  if (output) {
    for (std::size_t k = 0; k < output->size(); ++k) {
      const auto& c = (*output)[k];
      const auto it = ids.find(c.code_point);
      if (it == ids.end()) throw parse_error(at + "output index '" + c.text + "' occurs in no operand");
      if (std::find(net.output.begin(), net.output.end(), it->second) != net.output.end())
        throw parse_error(at + "output index '" + c.text + "' appears more than once");
      net.output.push_back(it->second);
    }
  } else {
    // NumPy's implicit output: the indices that occur exactly once, in code-point order.
    std::map<char32_t, int> count;
    for (const auto& op : operands)
      for (const auto& c : op) ++count[c.code_point];
    for (const auto& [cp, n] : count)
      if (n == 1) net.output.push_back(ids.at(cp));
  }
  return net;
}

}  // namespace detail

network parse_expression(std::string_view expression, const std::vector<std::vector<std::int64_t>>& shapes) {
  const std::string shown = expression.size() <= 80 ? std::string(expression) : std::string(expression.substr(0, 77)) + "...";
  return detail::parse_expression_in(expression, shapes, "expression '" + shown + "'");
}

std::vector<std::vector<std::int64_t>> parse_shapes(std::string_view text) {
  std::vector<std::vector<std::int64_t>> shapes;
  const auto fail = [&](const std::string& what) -> void { throw parse_error("shapes '" + std::string(text) + "': " + what); };
  const auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view piece = trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    auto& shape = shapes.emplace_back();
    if (!piece.empty() && piece != "-") {
      std::size_t from = 0;
      while (true) {
        const std::size_t x = piece.find('x', from);
        const std::string_view digits = trim(piece.substr(from, x == std::string_view::npos ? std::string_view::npos : x - from));
        std::int64_t extent = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), extent);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
          // built with append: GCC 12's -Wrestrict misfires on a chain of operator+ here
          std::string what = "'";
          what.append(digits).append("' in '").append(piece).append("' is not an extent (expected e.g. 2x3,3x4)");
          fail(what);
        }
        shape.push_back(extent);
        if (x == std::string_view::npos) break;
        from = x + 1;
      }
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return shapes;
}

}  // namespace tnrt
