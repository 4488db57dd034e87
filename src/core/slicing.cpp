#include "tnrt/slicing.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tnrt/errors.hpp"
#include "tnrt/memory_plan.hpp"
#include "tnrt/path.hpp"

namespace tnrt {
namespace {

constexpr std::size_t arena_alignment = 256;  // what compiled execution plans with
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

std::string label_text(const network& net, label_t l) {
  const auto u = static_cast<std::size_t>(l);
  if (l >= 0 && u < net.label_names.size() && !net.label_names[u].empty()) return net.label_names[u];
  std::string s = "#";  // not "#" + to_string: GCC 12 warns falsely (-Wrestrict) on that
  s += std::to_string(l);
  return s;
}

std::string labels_text(const network& net, std::span<const label_t> labels) {
  std::string s = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i) s += ',';
    s += label_text(net, labels[i]);
  }
  s += '}';
  return s;
}

std::string where(const problem& p) { return p.source.empty() ? std::string("the problem") : p.source; }

void check_slice_labels(const problem& p, std::span<const label_t> labels) {
  const std::size_t n_labels = p.net.label_count();
  std::vector<bool> seen(n_labels, false), in_input(n_labels, false);
  for (const auto& ls : p.net.inputs)
    for (label_t l : ls)
      if (l >= 0 && static_cast<std::size_t>(l) < n_labels) in_input[static_cast<std::size_t>(l)] = true;
  for (label_t l : labels) {
    if (l < 0 || static_cast<std::size_t>(l) >= n_labels)
      throw shape_error(where(p) + ": cannot slice label id " + std::to_string(l) + ": the network has " +
                        std::to_string(n_labels) + " labels");
    const auto u = static_cast<std::size_t>(l);
    if (seen[u]) throw shape_error(where(p) + ": label " + label_text(p.net, l) + " is sliced twice");
    if (!in_input[u])
      throw shape_error(where(p) + ": cannot slice label " + label_text(p.net, l) + ": it occurs in no input");
    seen[u] = true;
  }
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const problem& p) {
  if (b != 0 && a > int64_max / b) throw out_of_memory(where(p) + ": slicing would need more than 2^63-1 slices");
  return a * b;
}

std::int64_t slice_count(const problem& p, std::span<const label_t> labels) {
  std::int64_t n = 1;
  for (label_t l : labels) n = checked_mul(n, p.net.extents[static_cast<std::size_t>(l)], p);
  return n;
}

std::size_t total_bytes(std::span<const buffer_request> requests) {
  std::size_t sum = 0;
  for (const auto& r : requests) sum += r.bytes;  // each fits, and so does their sum: tree_liveness checked sizes
  return sum;
}

void check_inputs(const problem& p, std::span<const host_tensor> inputs) {
  const network& net = p.net;
  if (inputs.size() != net.inputs.size())
    throw shape_error(where(p) + ": the network has " + std::to_string(net.inputs.size()) + " inputs but " +
                      std::to_string(inputs.size()) + " tensors were given");
  auto text = [](const std::vector<std::int64_t>& s) {
    std::string r = "(";
    for (std::size_t j = 0; j < s.size(); ++j) {
      if (j) r += ',';
      r += std::to_string(s[j]);
    }
    r += ')';
    return r;
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string which = "input " + std::to_string(i) + " " + net.describe(net.inputs[i]);
    if (inputs[i].type() != p.type)
      throw dtype_error(where(p) + ": " + which + " has dtype " + std::string(name_of(inputs[i].type())) +
                        " but the problem is " + std::string(name_of(p.type)));
    const auto want = net.shape_of(net.inputs[i]);
    if (inputs[i].shape() != want)
      throw shape_error(where(p) + ": " + which + " has shape " + text(inputs[i].shape()) + " but its labels need " +
                        text(want));
  }
}

}  // namespace

std::size_t slice_peak_bytes(const problem& p) {
  const tree_buffers buffers = tree_liveness(p, /*inputs_in_arena=*/true, arena_alignment);
  return plan_memory(buffers.requests, arena_alignment).arena_bytes;
}

problem slice_problem(const problem& p, std::span<const label_t> labels) {
  check_slice_labels(p, labels);
  problem q = p;
  for (label_t l : labels) q.net.extents[static_cast<std::size_t>(l)] = 1;
  if (!labels.empty()) q.source = where(p) + " (one slice over " + labels_text(p.net, labels) + ")";
  return q;
}

slice_plan plan_slices(const problem& p, std::size_t memory_limit_bytes, std::span<const label_t> given) {
  validate(p.net, p.tree);
  slice_plan plan;
  plan.flops_unsliced = cost_of(p.net, p.tree).flops;
  plan.peak_bytes_unsliced = slice_peak_bytes(p);
  const std::string limit_text = std::to_string(memory_limit_bytes) + " bytes";

  if (!given.empty()) {
    const problem q = slice_problem(p, given);
    plan.labels.assign(given.begin(), given.end());
    plan.slices = slice_count(p, given);
    plan.flops_sliced = static_cast<double>(plan.slices) * cost_of(q.net, q.tree).flops;
    plan.peak_bytes_sliced = slice_peak_bytes(q);
    if (plan.peak_bytes_sliced > memory_limit_bytes)
      throw out_of_memory(where(p) + ": one slice over the given labels " + labels_text(p.net, given) + " needs " +
                          std::to_string(plan.peak_bytes_sliced) + " bytes, more than the limit of " + limit_text);
    return plan;
  }

  std::vector<bool> in_input(p.net.label_count(), false);
  for (const auto& ls : p.net.inputs)
    for (label_t l : ls) in_input[static_cast<std::size_t>(l)] = true;

  problem q = p;
  plan.flops_sliced = plan.flops_unsliced;
  plan.peak_bytes_sliced = plan.peak_bytes_unsliced;
  if (plan.peak_bytes_sliced > memory_limit_bytes) {
    // The least any slicing can reach: every label of an input sliced (checked first, so that a limit
    // below it is refused at once, not after slicing towards 2^63 slices).
    problem all = p;
    for (std::size_t u = 0; u < all.net.label_count(); ++u)
      if (in_input[u]) all.net.extents[u] = 1;
    const std::size_t least = slice_peak_bytes(all);
    if (least > memory_limit_bytes)
      throw out_of_memory(where(p) + ": does not fit in " + limit_text + " even with every label sliced: one slice still needs " +
                          std::to_string(least) + " bytes (its inputs, each in a block of 256 bytes, and the result)");
  }
  while (plan.peak_bytes_sliced > memory_limit_bytes) {
    const auto padded = tree_liveness(q, true, arena_alignment).requests;
    const double bound = static_cast<double>(live_bytes_bound(padded));
    const double exact = static_cast<double>(total_bytes(tree_liveness(q, true, 1).requests));
    const double flops = plan.flops_sliced;

    struct candidate {
      label_t label = -1;
      double bound = 0, exact = 0, flops = 0, saving = 0, score = 0;
    };
    std::vector<candidate> candidates;
    for (std::size_t u = 0; u < q.net.label_count(); ++u) {
      if (!in_input[u] || q.net.extents[u] <= 1) continue;
      const std::int64_t extent = q.net.extents[u];
      q.net.extents[u] = 1;
      candidate c;
      c.label = static_cast<label_t>(u);
      c.bound = static_cast<double>(live_bytes_bound(tree_liveness(q, true, arena_alignment).requests));
      c.exact = static_cast<double>(total_bytes(tree_liveness(q, true, 1).requests));
      c.flops = static_cast<double>(checked_mul(plan.slices, extent, p)) * cost_of(q.net, q.tree).flops;
      q.net.extents[u] = extent;
      candidates.push_back(c);
    }
    if (candidates.empty())
      throw out_of_memory(where(p) + ": does not fit in " + limit_text + " even with every label sliced " +
                          labels_text(p.net, plan.labels) + ": one slice still needs " +
                          std::to_string(plan.peak_bytes_sliced) + " bytes");

    // Score on the padded bound when some cut lowers it, else on the exact bytes, which every
    // candidate lowers (it occurs in an input, and inputs are in the arena).
    const bool by_bound =
        std::any_of(candidates.begin(), candidates.end(), [&](const candidate& c) { return c.bound < bound; });
    const candidate* best = nullptr;
    for (candidate& c : candidates) {
      c.saving = by_bound ? (c.bound < bound ? std::log(bound / c.bound) : 0.0) : std::log(exact / c.exact);
      const double overhead = flops > 0 && c.flops > flops ? std::log(c.flops / flops) : 0.0;
      c.score = c.saving / (overhead + 0.01);
      if (c.saving <= 0) continue;
      if (!best || c.score > best->score ||
          (c.score == best->score && (c.flops < best->flops || (c.flops == best->flops && c.saving > best->saving))))
        best = &c;
    }
    if (!best) throw internal_error(where(p) + ": plan_slices found no label that lowers the memory of a slice");
    const label_t l = best->label;
    const auto u = static_cast<std::size_t>(l);
    plan.labels.push_back(l);
    plan.slices = checked_mul(plan.slices, q.net.extents[u], p);
    q.net.extents[u] = 1;
    plan.flops_sliced = best->flops;
    plan.peak_bytes_sliced = slice_peak_bytes(q);
  }
  return plan;
}

host_tensor contract_sliced(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                            const slice_contractor& contract_one, const slice_progress_fn& progress, std::int64_t first,
                            std::int64_t count, std::int64_t stride) {
  validate(p.net, p.tree);
  check_inputs(p, inputs);
  const problem q = slice_problem(p, labels);
  const std::int64_t all = slice_count(p, labels);
  if (stride < 1) throw usage_error(where(p) + ": a slice stride must be at least 1, not " + std::to_string(stride));
  if (first < 0 || first > all)
    throw shape_error(where(p) + ": slice " + std::to_string(first) + " is not within the " + std::to_string(all) + " slices");
  const std::int64_t left = all - first;  // slices first, first + stride, ... that exist
  const std::int64_t most = left == 0 ? 0 : (left - 1) / stride + 1;
  if (count < 0) count = most;
  if (count > most)
    throw shape_error(where(p) + ": " + std::to_string(count) + " slices from " + std::to_string(first) + " in steps of " +
                      std::to_string(stride) + " are not within the " + std::to_string(all) + " slices");
  if (labels.empty() && count == 1) {
    host_tensor r = contract_one(p, inputs);
    if (progress) progress(1, 1);
    return r;
  }
  // The moves of every slice (core's layout, the same the device kernels carry out): each sliced
  // input's sub-tensor into its one-slice buffer, the one-slice result added into its block of R.
  const network& net = p.net;
  const slice_layout lay = layout_slices(p, labels);
  std::vector<host_tensor> slice_inputs;
  slice_inputs.reserve(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) slice_inputs.emplace_back(p.type, q.net.shape_of(net.inputs[k]));
  for (std::size_t k : lay.fixed_inputs) std::memcpy(slice_inputs[k].data(), inputs[k].data(), inputs[k].bytes());  // never change

  host_tensor result(p.type, net.shape_of(net.output));
  fill_constant(result, 0.0);
  const std::vector<std::int64_t> slice_out_shape = q.net.shape_of(net.output);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t s = first + i * stride;
    for (std::size_t k : lay.sliced_inputs) apply_slice_move(lay, lay.input_moves[k], s, inputs[k].data(), slice_inputs[k].data(), p.type, false);
    const host_tensor part = contract_one(q, slice_inputs);
    if (part.type() != p.type || part.shape() != slice_out_shape)
      throw shape_error(where(q) + ": the slice contraction returned a " + std::string(name_of(part.type())) +
                        " tensor of rank " + std::to_string(part.rank()) +
                        " that does not have the one-slice output's shape and dtype");
    apply_slice_move(lay, lay.output_move, s, part.data(), result.data(), p.type, true);
    if (progress) progress(i + 1, count);
  }
  return result;
}


namespace {

// A move over `extents` with the two sides' strides, the sliced labels' strides taken out of the
// sliced side: modes of a sliced label (extent 1 in the slice) and of extent 1 are dropped, and
// adjacent modes merged where both sides step alike.
slice_move make_move(const std::vector<label_t>& labels_of_modes, const std::vector<std::int64_t>& slice_extents,
                     const std::vector<std::int64_t>& src_strides, const std::vector<std::int64_t>& dst_strides,
                     const std::vector<int>& slot_of_label, std::size_t n_sliced, bool slices_src) {
  slice_move m;
  m.slices_src = slices_src;
  m.label_strides.assign(n_sliced, 0);
  m.count = 1;
  const std::vector<std::int64_t>& sliced_side = slices_src ? src_strides : dst_strides;
  for (std::size_t j = 0; j < labels_of_modes.size(); ++j) {
    const int slot = slot_of_label[static_cast<std::size_t>(labels_of_modes[j])];
    if (slot >= 0) {
      m.label_strides[static_cast<std::size_t>(slot)] += sliced_side[j];
      continue;
    }
    m.count *= slice_extents[j];
    if (slice_extents[j] == 1) continue;
    if (!m.extents.empty() && m.src_strides.back() == src_strides[j] * slice_extents[j] &&
        m.dst_strides.back() == dst_strides[j] * slice_extents[j]) {
      m.extents.back() *= slice_extents[j];
      m.src_strides.back() = src_strides[j];
      m.dst_strides.back() = dst_strides[j];
      continue;
    }
    m.extents.push_back(slice_extents[j]);
    m.src_strides.push_back(src_strides[j]);
    m.dst_strides.push_back(dst_strides[j]);
  }
  return m;
}

}  // namespace

slice_layout layout_slices(const problem& p, std::span<const label_t> labels, std::span<const std::vector<std::int64_t>> input_strides,
                           std::span<const std::int64_t> output_strides) {
  const problem q = slice_problem(p, labels);
  const network& net = p.net;
  if (!input_strides.empty() && input_strides.size() != net.inputs.size())
    throw shape_error(where(p) + ": " + std::to_string(input_strides.size()) + " stride lists for " + std::to_string(net.inputs.size()) + " inputs");
  slice_layout l;
  l.labels.assign(labels.begin(), labels.end());
  std::vector<int> slot_of_label(net.label_count(), -1);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    slot_of_label[static_cast<std::size_t>(labels[i])] = static_cast<int>(i);
    l.extents.push_back(net.extents[static_cast<std::size_t>(labels[i])]);
  }
  l.slices = slice_count(p, labels);
  l.radix.assign(labels.size(), 1);
  for (std::size_t i = labels.size(); i-- > 1;) l.radix[i - 1] = l.radix[i] * l.extents[i];
  auto strides_or_rows = [](std::span<const std::int64_t> given, const std::vector<std::int64_t>& shape, const std::string& what,
                            const problem& pp) {
    if (given.empty()) return row_major_strides(shape);
    if (given.size() != shape.size())
      throw shape_error(where(pp) + ": " + what + " has " + std::to_string(given.size()) + " strides for " + std::to_string(shape.size()) + " modes");
    return std::vector<std::int64_t>(given.begin(), given.end());
  };
  for (std::size_t i = 0; i < net.inputs.size(); ++i) {
    const std::vector<std::int64_t> full = net.shape_of(net.inputs[i]);
    const std::vector<std::int64_t> one = q.net.shape_of(net.inputs[i]);
    const std::vector<std::int64_t> src = strides_or_rows(input_strides.empty() ? std::span<const std::int64_t>() : std::span<const std::int64_t>(input_strides[i]),
                                                          full, "input " + std::to_string(i), p);
    l.input_moves.push_back(make_move(net.inputs[i], one, src, row_major_strides(one), slot_of_label, labels.size(), true));
    const bool moves = std::any_of(l.input_moves.back().label_strides.begin(), l.input_moves.back().label_strides.end(),
                                   [](std::int64_t v) { return v != 0; }) ||
                       std::any_of(net.inputs[i].begin(), net.inputs[i].end(), [&](label_t x) { return slot_of_label[static_cast<std::size_t>(x)] >= 0; });
    (moves ? l.sliced_inputs : l.fixed_inputs).push_back(i);
  }
  const std::vector<std::int64_t> full_out = net.shape_of(net.output);
  const std::vector<std::int64_t> one_out = q.net.shape_of(net.output);
  const std::vector<std::int64_t> dst = strides_or_rows(output_strides, full_out, "the output", p);
  l.output_move = make_move(net.output, one_out, row_major_strides(one_out), dst, slot_of_label, labels.size(), false);
  const std::vector<int> none(net.label_count(), -1);
  l.output_zero = make_move(net.output, full_out, dst, dst, none, labels.size(), false);
  return l;
}

std::vector<std::int64_t> slice_values(const slice_layout& l, std::int64_t s) {
  std::vector<std::int64_t> v(l.labels.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = (s / l.radix[i]) % l.extents[i];
  return v;
}

void apply_slice_move(const slice_layout& l, const slice_move& m, std::int64_t s, const void* src, void* dst, dtype type, bool add) {
  const std::vector<std::int64_t> values = slice_values(l, s);
  std::int64_t base = 0;
  for (std::size_t i = 0; i < values.size(); ++i) base += values[i] * m.label_strides[i];
  const std::int64_t src_base = m.slices_src ? base : 0, dst_base = m.slices_src ? 0 : base;
  visit_dtype(type, [&](auto zero) {
    using T = decltype(zero);
    const T* in = static_cast<const T*>(src);
    T* out = static_cast<T*>(dst);
    const std::size_t rank = m.extents.size();
    std::vector<std::int64_t> idx(rank, 0);
    std::int64_t so = src_base, dof = dst_base;
    for (std::int64_t e = 0; e < m.count; ++e) {
      if (in == nullptr) {
        out[dof] = T{};
      } else if (add) {
        out[dof] += in[so];
      } else {
        out[dof] = in[so];
      }
      for (std::size_t d = rank; d-- > 0;) {
        so += m.src_strides[d];
        dof += m.dst_strides[d];
        if (++idx[d] < m.extents[d]) break;
        so -= idx[d] * m.src_strides[d];
        dof -= idx[d] * m.dst_strides[d];
        idx[d] = 0;
      }
    }
  });
}

}  // namespace tnrt
