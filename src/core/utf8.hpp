#pragma once
// UTF-8 decoding and encoding, and which code points are einsum indices.
#include <cstddef>
#include <string>
#include <string_view>

namespace tnrt::detail {

/// An einsum index: an ASCII letter, or any non-ASCII Unicode scalar value. That is every symbol
/// opt_einsum's get_symbol(i) can emit (letters for i < 52, then chr(i + 140), i.e. U+00C0 up,
/// whatever its Unicode category: U+00D7 '×', U+3000, U+FEFF, emoji, private use and noncharacters
/// included), so any expression opt_einsum writes parses. ASCII digits, punctuation and controls
/// stay refused as NumPy refuses them, and ',', '-', '>', '.' and ASCII whitespace are syntax.
/// Surrogates (U+D800..U+DFFF) are not scalar values: UTF-8 cannot carry them and decode_utf8
/// rejects them (get_symbol returns lone surrogates for 55156 <= i < 55296 in opt_einsum 3.4 and
/// for i up to 57203 before; Python cannot encode those as UTF-8 either).
constexpr bool is_index_code_point(char32_t c) noexcept {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return c <= 0x10FFFF && (c < 0xD800 || c > 0xDFFF);
}

/// The i-th symbol of opt_einsum's get_symbol sequence ('a'..'z', 'A'..'Z', then U+00C0 up),
/// stepping over the surrogates instead of emitting them: the names given to labels the text does
/// not spell (an ellipsis' dimensions), so that they print as indices that parse back.
constexpr char32_t einsum_symbol(std::size_t i) noexcept {
  if (i < 26) return static_cast<char32_t>('a' + i);
  if (i < 52) return static_cast<char32_t>('A' + (i - 26));
  const auto c = static_cast<char32_t>(i + 140);
  return c < 0xD800 ? c : c + 0x800;
}

/// UTF-8 bytes of a scalar value (as is_index_code_point admits).
inline std::string encode_utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

struct utf8_char {
  char32_t code_point = 0;
  std::size_t length = 0;  // bytes taken; 0: the bytes at that position are not valid UTF-8
};

/// Decodes the sequence starting at text[pos]. Rejects what RFC 3629 rejects: stray continuation
/// bytes, truncated sequences, overlong forms, surrogates and code points above U+10FFFF.
constexpr utf8_char decode_utf8(std::string_view text, std::size_t pos) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(pos);
  if (b0 < 0x80) return {b0, 1};
  std::size_t n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) { n = 2; cp = b0 & 0x1F; min = 0x80; }
  else if ((b0 & 0xF0) == 0xE0) { n = 3; cp = b0 & 0x0F; min = 0x800; }
  else if ((b0 & 0xF8) == 0xF0) { n = 4; cp = b0 & 0x07; min = 0x10000; }
  else return {};
  if (text.size() - pos < n) return {};
  for (std::size_t i = 1; i < n; ++i) {
    const unsigned char b = byte(pos + i);
    if ((b & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n};
}

/// "U+03B1" for messages about characters that may not print.
inline std::string code_point_name(char32_t c) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string digits;
  for (char32_t v = c; v != 0 || digits.size() < 4; v >>= 4) digits.insert(digits.begin(), hex[v & 0xF]);
  return "U+" + digits;
}

}  // namespace tnrt::detail
