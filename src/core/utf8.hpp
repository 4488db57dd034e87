#pragma once
// UTF-8 decoding and the Unicode letter test behind einsum labels (any letter code point is an index).
#include <cstddef>
#include <string>
#include <string_view>

namespace tnrt::detail {

/// True for code points of general category L (Lu, Ll, Lt, Lm, Lo).
bool is_unicode_letter(char32_t c) noexcept;

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
