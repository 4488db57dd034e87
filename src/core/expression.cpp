// Einsum expressions ("ab,bc->ac") and shape lists ("2x3,3x4") into a network.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
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

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// One operand (or the output) as written: its named indices, and where its '...' stands among
// them if it has one.
struct term {
  std::vector<index_char> indices;
  std::optional<std::size_t> ellipsis;  // position in `indices` the ellipsis' dimensions go to
  std::string text;                     // as written, without spaces, for messages
};

}  // namespace

namespace detail {

network parse_expression_in(std::string_view expression, const std::vector<std::vector<std::int64_t>>& shapes,
                            const std::string& context) {
  const std::string at = context + ": ";
  std::vector<term> terms(1);
  std::optional<term> output_term;
  std::set<char32_t> used;  // every index the text names: fresh ellipsis labels avoid them
  std::size_t character = 0;  // 1-based code-point position of the character being read, for messages
  for (std::size_t pos = 0; pos < expression.size();) {
    ++character;
    const char c = expression[pos];
    const std::string where = " at character " + std::to_string(character);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos;
      continue;
    }
    term& current = output_term ? *output_term : terms.back();
    if (c == ',') {
      if (output_term) throw parse_error(at + "',' after '->'" + where + " (the output is a single operand)");
      terms.emplace_back();
      ++pos;
      continue;
    }
    if (c == '-') {
      if (pos + 1 >= expression.size() || expression[pos + 1] != '>') throw parse_error(at + "'-' not followed by '>'" + where);
      if (output_term) throw parse_error(at + "a second '->'" + where);
      output_term.emplace();
      pos += 2;
      ++character;
      continue;
    }
    if (c == '.') {
      if (expression.substr(pos, 3) != "...")
        throw parse_error(at + "'.'" + where + " is not an index ('...' stands for broadcast dimensions)");
      if (current.ellipsis) throw parse_error(at + "a second '...' in one operand" + where);
      current.ellipsis = current.indices.size();
      current.text += "...";
      pos += 3;
      character += 2;
      continue;
    }
    const detail::utf8_char u = detail::decode_utf8(expression, pos);
    if (u.length == 0) throw parse_error(at + "invalid UTF-8 at byte " + std::to_string(pos));
    std::string text(expression.substr(pos, u.length));
    if (!detail::is_index_code_point(u.code_point))
      throw parse_error(at + "'" + text + "' (" + detail::code_point_name(u.code_point) + ")" + where +
                        " is not an index: indices are ASCII letters or non-ASCII characters");
    used.insert(u.code_point);
    current.text += text;
    current.indices.push_back({u.code_point, std::move(text)});
    pos += u.length;
  }

  if (shapes.size() != terms.size())
    throw shape_error(at + "the expression has " + std::to_string(terms.size()) + " operand" + (terms.size() == 1 ? "" : "s") +
                      " but " + std::to_string(shapes.size()) + " shape" + (shapes.size() == 1 ? " was" : "s were") + " given");

  // The ellipsis, NumPy's rules: it covers the dimensions its operand's shape has beyond the named
  // indices; those are aligned on the right across operands (broadcast position p of `rank`), and
  // at each position the extents must agree or be 1. Each position becomes one fresh label; an
  // operand whose extent there is 1 against a longer one gets a label of its own instead, which
  // nothing else carries and the contraction sums away (a sum of one term): the broadcast,
  // without copying, and the operand keeps its shape.
  std::size_t rank = 0;  // dimensions the ellipsis covers in the result
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const term& t = terms[i];
    const std::size_t named = t.indices.size();
    if (t.ellipsis ? shapes[i].size() < named : shapes[i].size() != named)
      throw shape_error(at + "operand " + std::to_string(i) + " ('" + t.text + "') has " + std::to_string(named) + " ind" +
                        (named == 1 ? "ex" : "ices") + (t.ellipsis ? " besides '...'" : "") + " but its shape " +
                        shape_text(shapes[i]) + " has rank " + std::to_string(shapes[i].size()));
    if (t.ellipsis) rank = std::max(rank, shapes[i].size() - named);
  }
  std::vector<std::int64_t> broadcast(rank, 1);  // extent at each position, outermost first
  std::vector<std::size_t> widest(rank, 0);      // an operand with that extent, for messages
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (!terms[i].ellipsis) continue;
    const std::size_t r = shapes[i].size() - terms[i].indices.size();
    for (std::size_t j = 0; j < r; ++j) {
      const std::size_t p = rank - r + j;
      const std::int64_t e = shapes[i][*terms[i].ellipsis + j];
      if (e <= 0)
        throw shape_error(at + "operand " + std::to_string(i) + ": a '...' dimension has extent " + std::to_string(e) +
                          " (extents must be positive)");
      if (e == 1 || e == broadcast[p]) continue;
      if (broadcast[p] != 1)
        throw shape_error(at + "'...' dimension " + std::to_string(p) + " (of " + std::to_string(rank) + ", right-aligned) has extent " +
                          std::to_string(broadcast[p]) + " in operand " + std::to_string(widest[p]) + " but " + std::to_string(e) +
                          " in operand " + std::to_string(i) + " (broadcast extents must agree or be 1)");
      broadcast[p] = e;
      widest[p] = i;
    }
  }
  std::size_t next_symbol = 0;
  const auto fresh = [&] {
    char32_t c = 0;
    do c = detail::einsum_symbol(next_symbol++);
    while (used.count(c) != 0);
    used.insert(c);
    return index_char{c, detail::encode_utf8(c)};
  };
  std::vector<index_char> ellipsis_labels;
  for (std::size_t p = 0; p < rank; ++p) ellipsis_labels.push_back(fresh());
  std::vector<std::vector<index_char>> operands(terms.size());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const term& t = terms[i];
    auto& op = operands[i];
    op = t.indices;
    if (!t.ellipsis) continue;
    const std::size_t r = shapes[i].size() - t.indices.size();
    std::vector<index_char> covered;
    for (std::size_t j = 0; j < r; ++j) {
      const std::size_t p = rank - r + j;
      covered.push_back(shapes[i][*t.ellipsis + j] == broadcast[p] ? ellipsis_labels[p] : fresh());
    }
    op.insert(op.begin() + static_cast<std::ptrdiff_t>(*t.ellipsis), covered.begin(), covered.end());
  }
  std::optional<std::vector<index_char>> output;
  if (output_term) {
    output = output_term->indices;
    if (output_term->ellipsis) {
      output->insert(output->begin() + static_cast<std::ptrdiff_t>(*output_term->ellipsis), ellipsis_labels.begin(), ellipsis_labels.end());
    } else if (rank > 0) {
      throw shape_error(at + "'...' covers " + std::to_string(rank) + " dimension" + (rank == 1 ? "" : "s") +
                        " but the output has no '...' to put them in (NumPy refuses this too)");
    }
  }

  network net;
  std::map<char32_t, label_t> ids;
  std::vector<std::size_t> first_operand;  // by label id: where its extent was first seen, for messages
  net.inputs.resize(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const auto& op = operands[i];
    const auto& shape = shapes[i];  // op.size() == shape.size(): checked above, the ellipsis expanded to fit
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
    // NumPy's implicit output: the ellipsis' dimensions, then the named indices that occur exactly
    // once, in code-point order.
    for (const auto& c : ellipsis_labels) net.output.push_back(ids.at(c.code_point));
    std::map<char32_t, int> count;
    for (const auto& t : terms)
      for (const auto& c : t.indices) ++count[c.code_point];
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
