#include "cuda/resident.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace tnrt::cuda {
namespace {

int current_device() {
  int dev = 0;
  TNRT_CUDA(cudaGetDevice(&dev));
  return dev;
}

/// Answers kept by key: a linear list under a mutex (a handful of kernels and devices). The
/// answer is computed outside the lock; two threads asking at once may both compute it, which is
/// harmless because the query has one answer.
template <class Key>
class answer_cache {
 public:
  template <class Compute>
  int find_or_compute(const Key& key, Compute&& compute) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& [k, v] : known_)
        if (k == key) return v;
    }
    const int value = compute();
    const std::lock_guard<std::mutex> lock(mutex_);
    known_.emplace_back(key, value);
    return value;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<Key, int>> known_;
};

}  // namespace

int multiprocessors() {
  static answer_cache<int> cache;  // by device
  const int dev = current_device();
  return cache.find_or_compute(dev, [dev] {
    int n = 0;
    TNRT_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
  });
}

int blocks_per_multiprocessor(const void* kernel, int threads, std::size_t shared_bytes) {
  static answer_cache<std::tuple<const void*, int, std::size_t, int>> cache;  // kernel, shape, device
  return cache.find_or_compute(std::tuple{kernel, threads, shared_bytes, current_device()}, [&] {
    int blocks = 0;
    TNRT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared_bytes));
    return blocks;
  });
}

long long resident_blocks(const void* kernel, int threads, std::size_t shared_bytes) {
  return static_cast<long long>(std::max(blocks_per_multiprocessor(kernel, threads, shared_bytes), 1)) * multiprocessors();
}

}  // namespace tnrt::cuda
