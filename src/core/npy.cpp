// NumPy .npy reading and writing (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html).
#include "tnrt/npy.hpp"

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

// The element types are stored little-endian and copied as they are.
static_assert(std::endian::native == std::endian::little, "tnrt's .npy code assumes a little-endian host");

constexpr std::string_view magic = "\x93NUMPY";
using file_ptr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

struct npy_header {
  dtype type = dtype::f32;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// Read only that form, in any key order, with either quote and any spacing.
class header_parser {
 public:
  header_parser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  npy_header parse() {
    npy_header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        skip_space();
        if (peek() == '[') fail("structured dtypes (a list 'descr') are not supported");
        h.type = descr(string_literal());
        seen_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        seen_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        seen_shape = true;
      } else {
        fail("unexpected key '" + key + "' in the header");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_space();
      if (peek() != '}') fail("expected ',' or '}' in the header at byte " + std::to_string(pos_));
    }
    if (!seen_descr || !seen_order || !seen_shape)
      fail(std::string("the header lacks '") + (!seen_descr ? "descr" : !seen_order ? "fortran_order" : "shape") + "'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw io_error("'" + path_ + "': bad .npy header: " + what); }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "' at byte " + std::to_string(pos_));
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string at byte " + std::to_string(pos_));
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }
  // "()", "(5,)", "(2, 3)"; Python 2 era files may write "3L".
  std::vector<std::int64_t> tuple() {
    expect('(');
    std::vector<std::int64_t> shape;
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return shape;
      }
      if (peek() < '0' || peek() > '9') fail("bad 'shape' at byte " + std::to_string(pos_) + " (expected a tuple of integers)");
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (INT64_MAX - 9) / 10) fail("an extent in 'shape' is too large");
        v = v * 10 + (peek() - '0');
        ++pos_;
      }
      if (peek() == 'L') ++pos_;
      shape.push_back(v);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        fail("bad 'shape' at byte " + std::to_string(pos_) + " (expected ',' or ')')");
      }
    }
  }
  dtype descr(const std::string& d) const {
    if (d.size() < 2) fail("unsupported descr '" + d + "'");
    const char order = d[0];
    const std::string_view kind = std::string_view(d).substr(1);
    if (order == '>') fail("descr '" + d + "' is big-endian; tnrt reads little-endian data only (use arr.astype('<" + std::string(kind) + "'))");
    // '=' is native order and '|' "not applicable"; on this little-endian host both mean '<'.
    if (order == '<' || order == '=' || order == '|') {
      if (kind == "f4") return dtype::f32;
      if (kind == "f8") return dtype::f64;
      if (kind == "c8") return dtype::c64;
      if (kind == "c16") return dtype::c128;
    }
    fail("unsupported descr '" + d + "' (tnrt reads <f4, <f8, <c8 and <c16)");
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string_view descr_of(dtype t) {
  switch (t) {
    case dtype::f32: return "<f4";
    case dtype::f64: return "<f8";
    case dtype::c64: return "<c8";
    case dtype::c128: return "<c16";
  }
  return "?";
}

// Column-major bytes -> row-major: walk the C-order index like an odometer and follow the
// matching Fortran offset (stride of axis k = product of the extents before k).
void fortran_to_c(const unsigned char* src, unsigned char* dst, const std::vector<std::int64_t>& shape, std::size_t element) {
  const std::size_t rank = shape.size();
  std::int64_t total = 1;
  for (std::int64_t e : shape) total *= e;
  if (total == 0) return;
  std::vector<std::int64_t> fstride(rank), index(rank, 0);
  std::int64_t acc = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    fstride[k] = acc;
    acc *= shape[k];
  }
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < total; ++i) {
    std::memcpy(dst + static_cast<std::size_t>(i) * element, src + static_cast<std::size_t>(offset) * element, element);
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) {
        offset += fstride[k];
        break;
      }
      offset -= fstride[k] * (shape[k] - 1);
      index[k] = 0;
    }
  }
}

}  // namespace

host_tensor read_npy(const std::string& path) {
  errno = 0;
  file_ptr f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw io_error("cannot open '" + path + "': " + std::strerror(errno));
  const auto fail = [&](const std::string& what) { throw io_error("'" + path + "': " + what); };

  unsigned char prefix[8];
  const std::size_t got = std::fread(prefix, 1, sizeof prefix, f.get());
  if (std::ferror(f.get())) fail(std::string("cannot read: ") + std::strerror(errno ? errno : EIO));
  if (got < magic.size() || std::memcmp(prefix, magic.data(), magic.size()) != 0)
    fail("not a .npy file (it does not start with \\x93NUMPY)");
  if (got < sizeof prefix) fail("truncated .npy header");
  const unsigned major = prefix[6], minor = prefix[7];
  if (major < 1 || major > 3)
    fail("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) + " (tnrt reads 1.0, 2.0 and 3.0)");
  // 1.0: a 2-byte header length; 2.0 and 3.0: 4 bytes (3.0 only allows UTF-8 in the header).
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  const std::size_t len_size = major == 1 ? 2 : 4;
  if (std::fread(len_bytes, 1, len_size, f.get()) != len_size) fail("truncated .npy header");
  std::size_t header_len = 0;
  for (std::size_t i = len_size; i-- > 0;) header_len = header_len << 8 | len_bytes[i];
  if (header_len > (std::size_t{1} << 24)) fail("implausible header length " + std::to_string(header_len));
  std::string header(header_len, '\0');
  if (std::fread(header.data(), 1, header_len, f.get()) != header_len) fail("truncated .npy header");
  const npy_header h = header_parser(header, path).parse();

  // Size the data before allocating for it: a corrupt or truncated file must not cost (or, through
  // an overflowing byte count, fool) the allocation.
  std::int64_t count = 1;
  for (std::int64_t e : h.shape) {
    if (e != 0 && count > INT64_MAX / e) fail("shape " + shape_text(h.shape) + " is too large");
    count *= e;
  }
  const auto element = static_cast<std::int64_t>(size_of(h.type));
  if (count > INT64_MAX / element) fail("shape " + shape_text(h.shape) + " is too large");
  const std::int64_t need = count * element;
  if (const long here = std::ftell(f.get()); here >= 0 && std::fseek(f.get(), 0, SEEK_END) == 0) {
    const long end = std::ftell(f.get());
    if (std::fseek(f.get(), here, SEEK_SET) != 0) fail("cannot seek back to the data");
    if (end >= here && end - here < need)
      fail("truncated data: shape " + shape_text(h.shape) + " of " + std::string(descr_of(h.type)) + " needs " + std::to_string(need) +
           " bytes after the header, the file has " + std::to_string(end - here));
  }

  host_tensor t(h.type, h.shape);
  std::unique_ptr<unsigned char[]> column_major;
  unsigned char* into = static_cast<unsigned char*>(t.data());
  if (h.fortran_order && t.rank() > 1) {
    column_major = std::make_unique<unsigned char[]>(t.bytes());
    into = column_major.get();
  }
  const std::size_t data = std::fread(into, 1, t.bytes(), f.get());
  if (data != t.bytes())
    fail("truncated data: shape " + shape_text(h.shape) + " of " + std::string(descr_of(h.type)) + " needs " + std::to_string(t.bytes()) +
         " bytes after the header, the file has " + std::to_string(data));
  if (std::fgetc(f.get()) != EOF) fail("unexpected bytes after the data of shape " + shape_text(h.shape) + " (a mismatched or corrupt file)");
  if (column_major) fortran_to_c(column_major.get(), static_cast<unsigned char*>(t.data()), h.shape, size_of(h.type));
  return t;
}

void write_npy(const std::string& path, const host_tensor& t) {
  if (t.data() == nullptr) throw io_error("cannot write '" + path + "': the tensor holds no data");
  std::string header = "{'descr': '" + std::string(descr_of(t.type())) + "', 'fortran_order': False, 'shape': " + shape_text(t.shape()) + ", }";
  // Pad with spaces and end in '\n' so the data starts at a multiple of 64 bytes, as NumPy does.
  const bool v1 = header.size() + 1 + 64 <= 65535;  // the padded length must fit format 1.0's 2 bytes
  const std::size_t prefix = v1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string head(magic);
  head += static_cast<char>(v1 ? 1 : 2);
  head += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) head += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  head += header;

  // Write beside the target and rename over it, so a reader never sees a half-written file and a
  // failure leaves nothing behind.
  static std::atomic<unsigned> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  errno = 0;
  std::FILE* raw = std::fopen(temp.c_str(), "wb");
  if (raw == nullptr) throw io_error("cannot write '" + path + "': " + std::strerror(errno));
  file_ptr f(raw, &std::fclose);
  struct remove_unless_kept {
    const std::string& name;
    bool keep = false;
    ~remove_unless_kept() {
      if (!keep) std::remove(name.c_str());
    }
  } cleanup{temp};
  const auto fail = [&](const char* step) {
    const int err = errno ? errno : EIO;
    f.reset();
    throw io_error("cannot write '" + path + "': " + step + ": " + std::strerror(err));
  };
  if (std::fwrite(head.data(), 1, head.size(), f.get()) != head.size()) fail("writing the header");
  if (std::fwrite(t.data(), 1, t.bytes(), f.get()) != t.bytes()) fail("writing the data");
  if (std::fflush(f.get()) != 0) fail("flushing");
  if (std::fclose(f.release()) != 0) fail("closing");
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail("renaming the temporary file into place");
  cleanup.keep = true;
}

}  // namespace tnrt
