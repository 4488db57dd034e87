// Slices over several ranks: shares, the combine's plan, and ranks as threads (tnrt/distributed.hpp).
#include "tnrt/distributed.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

void check_ranks(int ranks) {
  if (ranks < 1) throw usage_error("ranks must be at least 1, not " + std::to_string(ranks));
}

// Rethrows the exception in `e` as the same kind of tnrt error, its message prefixed.
template <class First, class... Rest>
[[noreturn]] void rethrow_as(const std::exception_ptr& e, const std::string& prefix) {
  try {
    std::rethrow_exception(e);
  } catch (const First& x) {
    throw First(prefix + x.what());
  } catch (...) {
    if constexpr (sizeof...(Rest) > 0) {
      rethrow_as<Rest...>(e, prefix);
    } else {
      throw;
    }
  }
}

[[noreturn]] void rethrow_prefixed(const std::exception_ptr& e, const std::string& prefix) {
  try {
    rethrow_as<usage_error, parse_error, shape_error, path_error, dtype_error, io_error, out_of_memory, device_error,
               not_supported, verification_error, internal_error>(e, prefix);
  } catch (const tnrt::error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw out_of_memory(prefix + "host memory exhausted");
  } catch (const std::exception& x) {
    throw internal_error(prefix + x.what());
  }
}

// The combine over elements of real scalars T, `comps` per element (2 for complex).
template <class T>
void combine(const problem& p, const reduction_plan& plan, std::span<const host_tensor> partials, host_tensor& out, int comps) {
  const network& net = p.net;
  const auto shape = net.shape_of(net.output);
  // per output mode: its block weight (0 for a mode whose label is not a block label)
  std::vector<std::int64_t> weight(shape.size(), 0);
  std::int64_t w = 1;
  for (std::size_t j = plan.block_labels.size(); j-- > 0;) {
    const label_t l = plan.block_labels[j];
    for (std::size_t m = 0; m < net.output.size(); ++m)
      if (net.output[m] == l) weight[m] = w;
    w *= net.extents[static_cast<std::size_t>(l)];
  }
  std::vector<std::int64_t> idx(shape.size(), 0);
  std::int64_t block = 0;
  T* r = out.as<T>();
  for (std::int64_t e = 0; e < out.size(); ++e) {
    const auto& who = plan.contributors[static_cast<std::size_t>(block)];
    for (int c = 0; c < comps; ++c) {
      const std::int64_t at = e * comps + c;
      T v = 0;
      if (who.size() == 1) {
        v = static_cast<const T*>(partials[static_cast<std::size_t>(who[0])].data())[at];  // gathered
      } else {
        for (int k : who) v += static_cast<const T*>(partials[static_cast<std::size_t>(k)].data())[at];
      }
      r[at] = v;
    }
    for (std::size_t m = shape.size(); m-- > 0;) {  // row-major: the last mode fastest
      block += weight[m];
      if (++idx[m] < shape[m]) break;
      block -= weight[m] * shape[m];
      idx[m] = 0;
    }
  }
}

}  // namespace

slice_share share_of(std::int64_t slices, int ranks, int rank, slice_schedule how) {
  check_ranks(ranks);
  if (rank < 0 || rank >= ranks) throw usage_error("rank " + std::to_string(rank) + " is not within 0.." + std::to_string(ranks - 1));
  if (slices < 0) throw usage_error("a slice count cannot be negative (" + std::to_string(slices) + ")");
  slice_share s;
  if (how == slice_schedule::round_robin) {
    s.first = std::min<std::int64_t>(rank, slices);
    s.stride = ranks;
    s.count = rank < slices ? (slices - rank - 1) / ranks + 1 : 0;
    return s;
  }
  const std::int64_t base = slices / ranks, extra = slices % ranks;
  s.first = rank * base + std::min<std::int64_t>(rank, extra);
  s.count = base + (rank < extra ? 1 : 0);
  return s;
}

reduction_plan plan_reduction(const problem& p, std::span<const label_t> labels, int ranks, slice_schedule how) {
  check_ranks(ranks);
  const slice_layout lay = layout_slices(p, labels);
  reduction_plan plan;
  plan.slices = lay.slices;
  std::vector<std::size_t> slot;  // position in the plan's labels of each block label
  for (std::size_t j = 0; j < lay.labels.size(); ++j) {
    if (std::find(p.net.output.begin(), p.net.output.end(), lay.labels[j]) == p.net.output.end()) continue;
    plan.block_labels.push_back(lay.labels[j]);
    slot.push_back(j);
  }
  std::int64_t blocks = 1;
  for (std::size_t j : slot) blocks *= lay.extents[j];
  plan.contributors.resize(static_cast<std::size_t>(blocks));
  for (int r = 0; r < ranks; ++r) {
    const slice_share sh = share_of(lay.slices, ranks, r, how);
    for (std::int64_t i = 0; i < sh.count; ++i) {
      const std::vector<std::int64_t> v = slice_values(lay, sh.first + i * sh.stride);
      std::int64_t b = 0;
      for (std::size_t j : slot) b = b * lay.extents[j] + v[j];
      auto& who = plan.contributors[static_cast<std::size_t>(b)];
      if (who.empty() || who.back() != r) who.push_back(r);
    }
  }
  for (const auto& who : plan.contributors) (who.size() == 1 ? plan.gathered : plan.summed) += 1;
  return plan;
}

host_tensor combine_partials(const problem& p, const reduction_plan& plan, std::span<const host_tensor> partials) {
  const auto shape = p.net.shape_of(p.net.output);
  int ranks = 0;
  for (const auto& who : plan.contributors)
    for (int r : who) ranks = std::max(ranks, r + 1);
  if (partials.size() < static_cast<std::size_t>(ranks))
    throw shape_error("combine: " + std::to_string(partials.size()) + " partial results for a plan over " + std::to_string(ranks) + " ranks");
  for (std::size_t r = 0; r < partials.size(); ++r)
    if (partials[r].type() != p.type || partials[r].shape() != shape)
      throw shape_error("combine: rank " + std::to_string(r) + "'s partial result does not have the output's shape and dtype");
  host_tensor out(p.type, shape);
  switch (p.type) {
    case dtype::f32: combine<float>(p, plan, partials, out, 1); break;
    case dtype::f64: combine<double>(p, plan, partials, out, 1); break;
    case dtype::c64: combine<float>(p, plan, partials, out, 2); break;
    case dtype::c128: combine<double>(p, plan, partials, out, 2); break;
  }
  return out;
}

host_tensor contract_sliced_ranks(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                  int ranks, slice_schedule how, const slice_contractor& contract_one, distributed_report* report) {
  check_ranks(ranks);
  // the sliced output labels first: the slice index then runs through one block after another, so
  // a contiguous share covers whole blocks (gathered) wherever it can; the set of slices is the same
  std::vector<label_t> order(labels.begin(), labels.end());
  std::stable_partition(order.begin(), order.end(), [&](label_t l) {
    return std::find(p.net.output.begin(), p.net.output.end(), l) != p.net.output.end();
  });
  labels = order;
  distributed_report rep;
  rep.ranks = ranks;
  rep.schedule = how;
  rep.plan = plan_reduction(p, labels, ranks, how);
  const std::int64_t slices = rep.plan.slices;
  rep.per_rank.resize(static_cast<std::size_t>(ranks));
  std::vector<host_tensor> partials;
  partials.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) partials.emplace_back(p.type, p.net.shape_of(p.net.output));
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(ranks));
  const auto t0 = clock_type::now();
  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        auto& me = rep.per_rank[static_cast<std::size_t>(r)];
        me.rank = r;
        me.share = share_of(slices, ranks, r, how);
        const auto t = clock_type::now();
        try {
          if (me.share.count == 0) {
            fill_constant(partials[static_cast<std::size_t>(r)], 0.0);
          } else {
            partials[static_cast<std::size_t>(r)] =
                contract_sliced(p, inputs, labels, contract_one, {}, me.share.first, me.share.count, me.share.stride);
          }
        } catch (...) {
          failed[static_cast<std::size_t>(r)] = std::current_exception();
        }
        me.seconds = since(t);
      });
    }
  }  // every rank has finished: none is left running whatever failed
  rep.contract_seconds = since(t0);
  for (int r = 0; r < ranks; ++r)
    if (failed[static_cast<std::size_t>(r)])
      rethrow_prefixed(failed[static_cast<std::size_t>(r)], "rank " + std::to_string(r) + " of " + std::to_string(ranks) + ": ");
  for (const auto& rr : rep.per_rank)
    if (rr.share.count == 0)
      rep.notes.push_back("rank " + std::to_string(rr.rank) + " of " + std::to_string(ranks) + ": no slices (" +
                          std::to_string(slices) + " slice" + (slices == 1 ? "" : "s") + " for " + std::to_string(ranks) +
                          " ranks): idle");
  const auto t1 = clock_type::now();
  host_tensor out = combine_partials(p, rep.plan, partials);
  rep.reduce_seconds = since(t1);
  if (report) *report = std::move(rep);
  return out;
}

}  // namespace tnrt
