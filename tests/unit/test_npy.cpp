// .npy reading and writing: round trips, format versions, Fortran order, byte-order prefixes, every
// failure, and a cross-check against NumPy itself when it is importable.
#include <gtest/gtest.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "support/test_util.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/npy.hpp"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"  // GCC 12 false positive on string concatenation (bug 105329)
#endif

namespace {

using tnrt::test::expect_error;

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class npy : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("tnrt_npy_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    return names;
  }
  void write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  fs::path dir_;
};

// A raw .npy file: magic, version, header length (2 bytes for 1.x, 4 otherwise), header, data.
std::string raw_npy(int major, const std::string& header, const std::string& data) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_bytes; ++i) s += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return s + header + data;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

bool same_bytes(const tnrt::host_tensor& a, const tnrt::host_tensor& b) {
  return a.type() == b.type() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

TEST_F(npy, round_trip_every_dtype_and_rank) {
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {5}, {2, 3, 4}, {1, 1}, {3, 0}};
  std::uint64_t seed = 1;
  for (auto type : {tnrt::dtype::f32, tnrt::dtype::f64, tnrt::dtype::c64, tnrt::dtype::c128}) {
    for (const auto& shape : shapes) {
      tnrt::host_tensor t(type, shape);
      tnrt::fill_random(t, seed++, 0, -1.0, 1.0);
      const std::string file = path("t.npy");
      tnrt::write_npy(file, t);
      const auto back = tnrt::read_npy(file);
      EXPECT_TRUE(same_bytes(t, back)) << tnrt::name_of(type) << " rank " << shape.size();
      // NumPy aligns the data to 64 bytes; so do we
      EXPECT_EQ((fs::file_size(file) - t.bytes()) % 64, 0u);
    }
  }
  EXPECT_EQ(files(), std::vector<std::string>{"t.npy"});  // no temporary left beside it
}

TEST_F(npy, overwrite_replaces_the_file) {
  tnrt::host_tensor a(tnrt::dtype::f64, {10});
  tnrt::fill_constant(a, 1.0);
  tnrt::write_npy(path("x.npy"), a);
  tnrt::host_tensor b(tnrt::dtype::f32, {2});
  tnrt::fill_constant(b, 2.0);
  tnrt::write_npy(path("x.npy"), b);
  EXPECT_TRUE(same_bytes(b, tnrt::read_npy(path("x.npy"))));
}

TEST_F(npy, header_forms) {
  const std::vector<float> six = {1, 2, 3, 4, 5, 6};
  // versions 2.0 and 3.0 (4-byte header length), double quotes, no spaces, no trailing comma
  write_bytes("v2.npy", raw_npy(2, "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,3)}\n", bytes_of(six)));
  write_bytes("v3.npy", raw_npy(3, "{'shape': (6,), 'fortran_order': False, 'descr': '<f4', }   \n", bytes_of(six)));
  // '|' and '=' are native order: little-endian here
  write_bytes("bar.npy", raw_npy(1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3), }\n", bytes_of(six)));
  write_bytes("eq.npy", raw_npy(1, "{'descr': '=f4', 'fortran_order': False, 'shape': (6,), }\n", bytes_of(six)));
  // Python 2 long integers
  write_bytes("long.npy", raw_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n", bytes_of(six)));
  for (const char* f : {"v2.npy", "v3.npy", "bar.npy", "eq.npy", "long.npy"}) {
    const auto t = tnrt::read_npy(path(f));
    EXPECT_EQ(t.size(), 6) << f;
    EXPECT_EQ(t.as<float>()[5], 6.0f) << f;
  }
  EXPECT_EQ(tnrt::read_npy(path("v2.npy")).shape(), (std::vector<std::int64_t>{2, 3}));
  const std::vector<double> one = {42.0};
  write_bytes("scalar.npy", raw_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", bytes_of(one)));
  const auto s = tnrt::read_npy(path("scalar.npy"));
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_EQ(s.as<double>()[0], 42.0);
}

TEST_F(npy, fortran_order_is_converted_to_c_order) {
  // C-order A = [[0 1 2] [3 4 5]] stored column-major: 0 3 1 4 2 5
  const std::vector<double> column_major = {0, 3, 1, 4, 2, 5};
  write_bytes("f.npy", raw_npy(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n", bytes_of(column_major)));
  const auto t = tnrt::read_npy(path("f.npy"));
  ASSERT_EQ(t.shape(), (std::vector<std::int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.as<double>()[i], i);
  // rank 3, complex: element (i,j,k) of shape (2,3,4) sits at i + 2j + 6k in Fortran order
  std::vector<std::complex<float>> f(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) f[static_cast<std::size_t>(i + 2 * j + 6 * k)] = {static_cast<float>(100 * i + 10 * j + k), -1.0f};
  write_bytes("f3.npy", raw_npy(1, "{'descr': '<c8', 'fortran_order': True, 'shape': (2, 3, 4), }\n", bytes_of(f)));
  const auto c = tnrt::read_npy(path("f3.npy"));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(c.as<std::complex<float>>()[12 * i + 4 * j + k], std::complex<float>(static_cast<float>(100 * i + 10 * j + k), -1.0f));
}

// ---- errors: each names the file and the problem ---------------------------------------------

TEST_F(npy, missing_file) {
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("none.npy")); }, {"none.npy", "cannot open", "No such file"});
}

TEST_F(npy, not_an_npy_file) {
  write_bytes("text.npy", "hello, world\n");
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("text.npy")); }, {"text.npy", "not a .npy file"});
  write_bytes("empty.npy", "");
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("empty.npy")); }, {"empty.npy", "not a .npy file"});
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(dir_.string()); }, {"cannot read"});
}

TEST_F(npy, truncated_files) {
  write_bytes("short.npy", std::string("\x93NUMPY\x01", 7));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("short.npy")); }, {"short.npy", "truncated .npy header"});
  write_bytes("hdr.npy", raw_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", "").substr(0, 30));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("hdr.npy")); }, {"hdr.npy", "truncated .npy header"});
  write_bytes("data.npy", raw_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", std::string(20, '\0')));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("data.npy")); }, {"data.npy", "truncated data", "(2, 3)", "needs 24 bytes", "has 20"});
}

TEST_F(npy, absurd_shapes_fail_before_allocating) {
  // 2^40 doubles claimed, 8 bytes present: refused from the file size, not by a failed allocation
  write_bytes("huge.npy", raw_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576), }\n", std::string(8, '\0')));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("huge.npy")); }, {"huge.npy", "truncated data", "needs 8796093022208 bytes", "has 8"});
  // element count or byte count beyond 64 bits
  write_bytes("over.npy", raw_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n", ""));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("over.npy")); }, {"over.npy", "too large"});
  write_bytes("bytes.npy", raw_npy(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (4611686018427387904,), }\n", ""));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("bytes.npy")); }, {"bytes.npy", "too large"});
}

TEST_F(npy, trailing_bytes) {
  write_bytes("long.npy", raw_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", std::string(12, '\0')));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("long.npy")); }, {"long.npy", "unexpected bytes after the data"});
}

TEST_F(npy, unsupported_versions_and_types) {
  write_bytes("v9.npy", raw_npy(1, "", "").replace(6, 1, "\x09"));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("v9.npy")); }, {"v9.npy", "format version 9.0"});
  const std::string data(8, '\0');
  const auto header = [](const std::string& descr) { return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }\n"; };
  write_bytes("i4.npy", raw_npy(1, header("<i4"), data));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("i4.npy")); }, {"i4.npy", "unsupported descr '<i4'"});
  write_bytes("f2.npy", raw_npy(1, header("<f2"), data));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("f2.npy")); }, {"'<f2'"});
  write_bytes("be.npy", raw_npy(1, header(">f4"), data));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("be.npy")); }, {"be.npy", "big-endian"});
  write_bytes("rec.npy", raw_npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", data));
  expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("rec.npy")); }, {"rec.npy", "structured"});
}

TEST_F(npy, malformed_headers) {
  const std::string data(8, '\0');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{'descr': '<f4', 'shape': (2,), }", "lacks 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", "expected '('"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", "bad 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unexpected key 'extra'"},
      {"'descr': '<f4'", "expected '{'"},
      {"{'descr: '<f4'}", "expected ':'"},
      {"{'descr': '<f4' 'shape': (2,)}", "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "too large"},
  };
  for (const auto& [header, want] : cases) {
    write_bytes("h.npy", raw_npy(1, header + "\n", data));
    expect_error<tnrt::io_error>([&] { tnrt::read_npy(path("h.npy")); }, {"h.npy", "bad .npy header", want});
  }
}

TEST_F(npy, failed_write_leaves_nothing_behind) {
  tnrt::host_tensor t(tnrt::dtype::f32, {4});
  tnrt::fill_constant(t, 1.0);
  expect_error<tnrt::io_error>([&] { tnrt::write_npy(path("no/such/dir/x.npy"), t); }, {"no/such/dir/x.npy", "cannot write"});
  // a directory where the file should go: the rename fails after the data was written
  fs::create_directories(path("taken.npy/inner"));
  expect_error<tnrt::io_error>([&] { tnrt::write_npy(path("taken.npy"), t); }, {"taken.npy", "renaming"});
  std::vector<std::string> left = files();
  EXPECT_EQ(left, std::vector<std::string>{"taken.npy"});  // only the directory itself, no temporary
  expect_error<tnrt::io_error>([&] { tnrt::write_npy(path("e.npy"), tnrt::host_tensor{}); }, {"holds no data"});
}

// ---- NumPy itself ----------------------------------------------------------------------------

bool numpy_available() { return std::system("python3 -c 'import numpy' >/dev/null 2>&1") == 0; }

TEST_F(npy, numpy_writes_we_read) {
  if (!numpy_available()) GTEST_SKIP() << "python3 with numpy is not available";
  // values are a formula of the C-order index, so both sides can compute them
  const std::string script =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "def val(n, t):\n"
      "    i = np.arange(n, dtype=np.float64)\n"
      "    v = i * 0.5 - 3.0\n"
      "    return (v + 1j * (i + 0.25)).astype(t) if np.dtype(t).kind == 'c' else v.astype(t)\n"
      "for t in ['float32', 'float64', 'complex64', 'complex128']:\n"
      "    np.save(d + '/' + t + '_c.npy', val(24, t).reshape(2, 3, 4))\n"
      "    np.save(d + '/' + t + '_f.npy', np.asfortranarray(val(24, t).reshape(2, 3, 4)))\n"
      "    np.save(d + '/' + t + '_0.npy', val(1, t).reshape(()))\n"
      "    np.save(d + '/' + t + '_1.npy', val(5, t))\n"
      "    np.lib.format.write_array(open(d + '/' + t + '_v2.npy', 'wb'), val(5, t), version=(2, 0))\n"
      "    np.lib.format.write_array(open(d + '/' + t + '_v3.npy', 'wb'), val(5, t), version=(3, 0))\n";
  std::ofstream(path("make.py")) << script;
  ASSERT_EQ(std::system(("python3 " + path("make.py") + " " + dir_.string()).c_str()), 0);
  const auto expected = [](std::int64_t i, auto zero) {
    using T = decltype(zero);
    const double re = static_cast<double>(i) * 0.5 - 3.0;
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(re);
    } else {
      using R = typename T::value_type;
      return T(static_cast<R>(re), static_cast<R>(static_cast<double>(i) + 0.25));
    }
  };
  for (auto type : {tnrt::dtype::f32, tnrt::dtype::f64, tnrt::dtype::c64, tnrt::dtype::c128}) {
    const std::string name = type == tnrt::dtype::f32 ? "float32" : type == tnrt::dtype::f64 ? "float64"
                             : type == tnrt::dtype::c64 ? "complex64" : "complex128";
    for (const char* suffix : {"_c", "_f", "_0", "_1", "_v2", "_v3"}) {
      const std::string file = path(name + suffix + ".npy");
      const auto t = tnrt::read_npy(file);
      EXPECT_EQ(t.type(), type) << file;
      tnrt::visit_dtype(type, [&](auto zero) {
        using T = decltype(zero);
        for (std::int64_t i = 0; i < t.size(); ++i) EXPECT_EQ(t.as<T>()[i], expected(i, zero)) << file << " element " << i;
      });
    }
  }
}

TEST_F(npy, we_write_numpy_reads) {
  if (!numpy_available()) GTEST_SKIP() << "python3 with numpy is not available";
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {5}, {2, 3, 4}};
  for (auto type : {tnrt::dtype::f32, tnrt::dtype::f64, tnrt::dtype::c64, tnrt::dtype::c128}) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      tnrt::host_tensor t(type, shapes[s]);
      tnrt::visit_dtype(type, [&](auto zero) {
        using T = decltype(zero);
        for (std::int64_t i = 0; i < t.size(); ++i) {
          if constexpr (std::is_floating_point_v<T>) {
            t.as<T>()[i] = static_cast<T>(static_cast<double>(i) * 0.5 - 3.0);
          } else {
            using R = typename T::value_type;
            t.as<T>()[i] = T(static_cast<R>(static_cast<double>(i) * 0.5 - 3.0), static_cast<R>(static_cast<double>(i) + 0.25));
          }
        }
      });
      tnrt::write_npy(path(std::string(tnrt::name_of(type)) + "_" + std::to_string(s) + ".npy"), t);
    }
  }
  const std::string script =
      "import numpy as np, sys, glob\n"
      "d = sys.argv[1]\n"
      "want = {'f32': 'float32', 'f64': 'float64', 'c64': 'complex64', 'c128': 'complex128'}\n"
      "shapes = [(), (5,), (2, 3, 4)]\n"
      "for k, t in want.items():\n"
      "    for s, shape in enumerate(shapes):\n"
      "        a = np.load('%s/%s_%d.npy' % (d, k, s))\n"
      "        assert a.dtype == np.dtype(t), (k, a.dtype)\n"
      "        assert a.shape == shape, (k, a.shape)\n"
      "        i = np.arange(a.size, dtype=np.float64)\n"
      "        v = i * 0.5 - 3.0\n"
      "        if np.dtype(t).kind == 'c': v = v + 1j * (i + 0.25)\n"
      "        assert np.array_equal(a.reshape(-1), v.astype(t)), (k, s)\n"
      "print('numpy read them all')\n";
  std::ofstream(path("check.py")) << script;
  EXPECT_EQ(std::system(("python3 " + path("check.py") + " " + dir_.string()).c_str()), 0);
}

}  // namespace
