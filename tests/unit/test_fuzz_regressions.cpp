// Inputs the fuzz targets (fuzz/*.cpp, docs/reliability.md) found to end in something other than a
// tnrt::error, each embedded as it was found (or minimised), with the error it must give now.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

namespace {

// fuzz_tree_json, crash-b1afe71de93a1d31f44ee69417eb70a1733984e4 (byte 0 was the options byte
// 0x05: dtype f64, bond dim 2): a JSON number too large for a double ("3333331833e666666") made
// nlohmann throw json::out_of_range (406), which escaped load_tree_json as a plain std::exception
// (the CLI's "internal error", exit 70) instead of a parse error (exit 3).
constexpr char tree_number_overflow_bytes[] =
    "\x7b\x0a\x20\x20\x22\x69\x6e\x70\x75\x74\x73\x22\x3a\x20\x5b\x5b\x31\x2c\x20\x32\x5d\x2c\x20\x5b"
    "\x32\x2c\x20\x33\x5d\x2c\x20\x5b\x33\x2c\x20\x34\x5d\x2c\x20\x33\x33\x33\x33\x33\x33\x31\x38\x33"
    "\x33\x65\x36\x36\x36\x36\x36\x36\x73\x6c\x69\x63\x36\x36\x36\x36\x36\x36\x0a\xa0\x00\x00\x00\x5b"
    "\x31\x2c\x20\x32\x5d\x2c\x20\x5b\x32\x2c\x20\x33\x5d\x2c\x20\x5b\x33\x2c\x20\x34\x5d\x2c\x20\x5b"
    "\x34\x2c\x20\x31\x2c\x20\x35\x5d\x5d\x2c\x0a\x20\x20\x22\x6f\x75\x74\x70\x75\x74\x22\x3a\x20\x5b"
    "\x35\x5d\x2c\x0a\x20\x20\x22\x74\x69\xf3\x6c\x65\x61\x66\x22\x3a\x20\x66\x61\x6c\x73\x65\x20\x22"
    "\x74\x65\x6e\x73\x6f\x72\x69\x6e\x64\x65\x78\x22\x3a\x20\x32\x7d\x5d\x0a\x20\x20\x7d\x2c\x0a\x20"
    "\x20\x20\x20\x20\x20\x7b\x22\x69\x73\x6c\x2c\x20\x5b\x31\x2c\x20\x31\x2c\x20\x35\x5d\x5d\x2c\x0a"
    "\x20\x20\x22\x6f\x75\x74\x70\x75\x74\x22\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4\xa4"
    "\xa4\xa4\xa4\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
    "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xa4\xa4\xa4\xa4\xa4\xa4\x3a\x20\x5b\x35"
    "\x5d\x2c\x0a\x20\x20\x22\x74\x72\x65\x65\x22\x3a\x20\x7b\x00\x7b\x0a\x20\x20\x22\x69\x0a\x20\x6e";
constexpr std::string_view tree_number_overflow(tree_number_overflow_bytes, sizeof tree_number_overflow_bytes - 1);

// fuzz_einsum_json, crash-400f6c9c2b643eea3afb41bf1068c6e33c36eb80 (options byte 0x34): the same,
// at the top level of an einsum JSON.
constexpr std::string_view einsum_number_overflow = "444e45443\x06{\"`g\"444444e45443p\xcct9y<\" :\"floa\"}\n";

TEST(FuzzRegressions, TreeJsonNumberOverflowIsAParseError) {
  tnrt::tree_json_options opt;
  opt.type = tnrt::dtype::f64;
  EXPECT_THROW((void)tnrt::load_tree_json(tree_number_overflow, opt, "fuzz"), tnrt::parse_error);
}

TEST(FuzzRegressions, EinsumJsonNumberOverflowIsAParseError) {
  EXPECT_THROW((void)tnrt::load_einsum_json(einsum_number_overflow, {}, "fuzz"), tnrt::parse_error);
}

TEST(FuzzRegressions, NumberOverflowInsideAValidDocumentIsAParseError) {
  // Minimised: a well-formed document whose only fault is a number beyond double's range.
  const std::string einsum = R"({"format_string": "ab,bc->ac", "shapes": [[2, 3], [3, 1e999]]})";
  try {
    (void)tnrt::load_einsum_json(einsum, {}, "x.json");
    FAIL() << "no error";
  } catch (const tnrt::parse_error& e) {
    EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos) << e.what();
  }
  const std::string tree = R"({"inputs": [[1e999]], "output": [], "tree": {"isleaf": true, "tensorindex": 1}})";
  EXPECT_THROW((void)tnrt::load_tree_json(tree, {}, "t.json"), tnrt::parse_error);
}

}  // namespace
