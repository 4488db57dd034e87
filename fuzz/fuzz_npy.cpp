// libFuzzer target: tnrt::read_npy. There is no in-memory parser, so the bytes go to a per-process
// file in /dev/shm (or $TMPDIR) first. See fuzz/build.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_common.hpp"
#include "tnrt/npy.hpp"

namespace {
std::string scratch_path() {
  const char* dir = std::getenv("TNRT_FUZZ_TMP");
  std::string d = dir != nullptr ? dir : "/dev/shm";
  if (access(d.c_str(), W_OK) != 0) d = "/tmp";
  return d + "/tnrt_fuzz_npy_" + std::to_string(getpid()) + ".npy";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  if (size > 0 && std::fwrite(data, 1, size, f) != size) {
    std::fclose(f);
    return 0;
  }
  std::fclose(f);
  return tnrt_fuzz::guarded([&] {
    const tnrt::host_tensor t = tnrt::read_npy(path);
    if (t.size() != tnrt::element_count(t.shape())) tnrt_fuzz::finding("read_npy: size differs from the shape's element count");
    // the data is all there: touch the last byte
    if (t.bytes() > 0) {
      volatile unsigned char last = static_cast<const unsigned char*>(t.data())[t.bytes() - 1];
      (void)last;
    }
  });
}
