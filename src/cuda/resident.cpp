#include "cuda/resident.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace tnrt::cuda {
namespace {

struct occupancy_entry {
  const void* kernel;
  int threads;
  std::size_t shared_bytes;
  int device;
  int blocks;
};

int current_device() {
  int dev = 0;
  TNRT_CUDA(cudaGetDevice(&dev));
  return dev;
}

}  // namespace

int multiprocessors() {
  static std::mutex mutex;
  static std::vector<std::pair<int, int>> known;  // device, multiprocessors
  const int dev = current_device();
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [d, n] : known)
      if (d == dev) return n;
  }
  int n = 0;
  TNRT_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  const std::lock_guard<std::mutex> lock(mutex);
  known.emplace_back(dev, n);
  return n;
}

int blocks_per_multiprocessor(const void* kernel, int threads, std::size_t shared_bytes) {
  static std::mutex mutex;
  static std::vector<occupancy_entry> known;
  const int dev = current_device();
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const occupancy_entry& e : known)
      if (e.kernel == kernel && e.threads == threads && e.shared_bytes == shared_bytes && e.device == dev) return e.blocks;
  }
  int blocks = 0;
  TNRT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared_bytes));
  const std::lock_guard<std::mutex> lock(mutex);
  known.push_back({kernel, threads, shared_bytes, dev, blocks});
  return blocks;
}

long long resident_blocks(const void* kernel, int threads, std::size_t shared_bytes) {
  return static_cast<long long>(std::max(blocks_per_multiprocessor(kernel, threads, shared_bytes), 1)) * multiprocessors();
}

}  // namespace tnrt::cuda
