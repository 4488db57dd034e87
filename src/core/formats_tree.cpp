// TensorNetworkBenchmarks tree JSON: labelled inputs, an output and a nested contraction tree.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/formats_json.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/formats.hpp"

namespace tnrt {
namespace detail {
namespace {

struct subtree {
  int id;                       // operand id of its result
  std::vector<label_t> labels;  // labels of that result
};

struct frame {
  const json* node;
  std::size_t route;           // its entry in tree_reader::routes_
  const json* args = nullptr;  // set once the node is known to be internal
  std::vector<subtree> done;   // results of args[0 .. done.size()-1]
};

// A node's place in the tree: its parent's entry and its index in the parent's args.
struct route_entry {
  std::size_t parent;  // no_parent for the root
  std::size_t index;
};
constexpr std::size_t no_parent = static_cast<std::size_t>(-1);

class tree_reader {
 public:
  tree_reader(const tree_json_options& opt, std::string source) : opt_(opt), source_(std::move(source)) {}

  problem read(const json& doc) {
    if (!doc.is_object()) throw_parse(source_, "", "expected a JSON object, got " + type_name(doc));
    p_.source = source_;
    p_.type = opt_.type;
    read_inputs(member(doc, "inputs", source_, ""));
    read_output(member(doc, "output", source_, ""));
    for (std::size_t l = 0; l < p_.net.extents.size(); ++l)
      if (p_.net.extents[l] <= 0)
        throw shape_error(source_ + ": label '" + p_.net.label_names[l] + "' has extent " + std::to_string(p_.net.extents[l]) +
                          " (extents must be positive; see the bond dimension and label sizes)");
    used_at_.assign(p_.net.inputs.size(), no_parent);
    const subtree root = read_tree(member(doc, "tree", source_, ""));
    for (std::size_t i = 0; i < used_at_.size(); ++i)
      if (used_at_[i] == no_parent)
        throw path_error(source_ + ": input " + std::to_string(i + 1) + " (tensorindex " + std::to_string(i + 1) + ", labels " +
                         p_.net.describe(p_.net.inputs[i]) + ") is never used by the tree");
    finish(root);
    validate(p_.net, p_.tree);
    p_.slices = read_slices(doc, p_.net, source_);
    return std::move(p_);
  }

 private:
  std::string label_text(const json& v, const std::string& where) const {
    if (v.is_number_integer()) return std::to_string(expect_integer(v, source_, where));
    if (v.is_string()) return v.get<std::string>();
    throw_parse(source_, where, "a label must be an integer or a string, got " + type_name(v));
  }

  label_t intern(const std::string& text) {
    const auto [it, added] = ids_.try_emplace(text, static_cast<label_t>(p_.net.extents.size()));
    if (added) {
      const auto size = opt_.label_sizes.find(text);
      p_.net.extents.push_back(size == opt_.label_sizes.end() ? opt_.bond_dim : size->second);
      p_.net.label_names.push_back(text);
    }
    return it->second;
  }

  std::optional<label_t> find_label(const std::string& text) const {
    const auto it = ids_.find(text);
    return it == ids_.end() ? std::nullopt : std::optional<label_t>(it->second);
  }

  void read_inputs(const json& inputs) {
    expect_array(inputs, source_, "inputs");
    if (inputs.empty()) throw path_error(source_ + ": \"inputs\" is empty: the network has no tensors");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string where = "inputs[" + std::to_string(i) + "]";
      auto& labels = p_.net.inputs.emplace_back();
      for (std::size_t k = 0; k < expect_array(inputs[i], source_, where).size(); ++k)
        labels.push_back(intern(label_text(inputs[i][k], where + "[" + std::to_string(k) + "]")));
    }
  }

  void read_output(const json& output) {
    expect_array(output, source_, "output");
    for (std::size_t k = 0; k < output.size(); ++k) {
      const std::string text = label_text(output[k], "output[" + std::to_string(k) + "]");
      const auto l = find_label(text);
      if (!l) throw shape_error(source_ + ": output label '" + text + "' occurs in no input");
      if (std::find(p_.net.output.begin(), p_.net.output.end(), *l) != p_.net.output.end())
        throw shape_error(source_ + ": output label '" + text + "' appears more than once");
      p_.net.output.push_back(*l);
    }
  }

  // "tree.args[0].args[1]"; deep nodes are shortened so a message stays one readable line. Built
  // only for messages: a name costs the node's depth.
  std::string node_name(std::size_t route) const {
    std::vector<std::size_t> indices;
    for (std::size_t r = route; routes_[r].parent != no_parent; r = routes_[r].parent) indices.push_back(routes_[r].index);
    std::reverse(indices.begin(), indices.end());
    constexpr std::size_t head = 4, tail = 6;
    const bool shorten = indices.size() > head + tail + 2;
    std::string s = "tree";
    for (std::size_t i = 0; i < indices.size(); ++i) {
      if (shorten && i == head) {
        s += ".(" + std::to_string(indices.size() - head - tail) + " levels)";
        i = indices.size() - tail - 1;
        continue;
      }
      s += ".args[" + std::to_string(indices[i]) + "]";
    }
    if (shorten) s += " (depth " + std::to_string(indices.size()) + ")";
    return s;
  }
  std::string at(std::size_t route, const std::string& inside) const { return node_name(route) + inside; }

  // The JSON helpers of formats_json.hpp, with the location named only when something is wrong.
  const json& node_member(const json& object, const char* key, std::size_t route, const char* inside = "") const {
    const json* v = find_member(object, key);
    if (v == nullptr) member(object, key, source_, at(route, inside));  // throws, naming the node
    return *v;
  }
  const json& node_array(const json& v, std::size_t route, const std::string& inside) const {
    if (!v.is_array()) expect_array(v, source_, at(route, inside));
    return v;
  }
  template <class Where>
  std::string label_text_lazy(const json& v, Where&& where) const {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)))
      return std::to_string(v.get<std::int64_t>());
    return label_text(v, where());
  }

  // Post-order walk with an explicit stack: a degenerate (caterpillar) tree is as deep as it has
  // leaves, too deep for recursion on big networks.
  subtree read_tree(const json& root) {
    std::vector<frame> stack;
    routes_.push_back({no_parent, 0});
    stack.push_back({&root, 0, nullptr, {}});
    std::optional<subtree> result;
    while (!stack.empty()) {
      frame& f = stack.back();
      if (f.args == nullptr) {
        const json& node = *f.node;
        if (!node.is_object()) throw_parse(source_, node_name(f.route), "expected a tree node (an object), got " + type_name(node));
        bool leaf = node.contains("tensorindex");
        if (const json* is = find_member(node, "isleaf"); is != nullptr) {
          if (!is->is_boolean()) throw_parse(source_, at(f.route, ".isleaf"), "expected true or false, got " + type_name(*is));
          leaf = is->get<bool>();
        }
        if (leaf) {
          subtree s = read_leaf(node, f.route);
          stack.pop_back();
          deliver(stack, result, std::move(s));
          continue;
        }
        f.args = &node_array(node_member(node, "args", f.route), f.route, ".args");
        if (f.args->empty()) throw path_error(source_ + ": " + node_name(f.route) + ": an internal node with no args");
      }
      if (f.done.size() < f.args->size()) {
        routes_.push_back({f.route, f.done.size()});
        const json* child = &(*f.args)[f.done.size()];
        stack.push_back({child, routes_.size() - 1, nullptr, {}});  // invalidates f
        continue;
      }
      subtree s = read_internal(*f.node, f.route, f.done);
      stack.pop_back();
      deliver(stack, result, std::move(s));
    }
    return std::move(*result);
  }

  static void deliver(std::vector<frame>& stack, std::optional<subtree>& result, subtree s) {
    if (stack.empty()) {
      result = std::move(s);
    } else {
      stack.back().done.push_back(std::move(s));
    }
  }

  subtree read_leaf(const json& node, std::size_t route) {
    const json& index_json = node_member(node, "tensorindex", route);
    if (!index_json.is_number_integer()) expect_integer(index_json, source_, at(route, ".tensorindex"));  // throws
    const std::int64_t index = expect_integer(index_json, source_, "");
    const auto n = static_cast<std::int64_t>(p_.net.inputs.size());
    if (index < 1 || index > n)
      throw path_error(source_ + ": " + node_name(route) + ": tensorindex " + std::to_string(index) + " is out of range (the file has " +
                       std::to_string(n) + " inputs, numbered from 1)");
    auto& used = used_at_[static_cast<std::size_t>(index - 1)];
    if (used != no_parent)
      throw path_error(source_ + ": " + node_name(route) + ": input " + std::to_string(index) + " (tensorindex " + std::to_string(index) +
                       ") is used twice: also at " + node_name(used));
    used = route;
    return {static_cast<int>(index - 1), p_.net.inputs[static_cast<std::size_t>(index - 1)]};
  }

  std::string texts(const json& labels) const {
    std::string s = "[";
    for (std::size_t i = 0; i < labels.size(); ++i)
      s += (i ? " " : "") + (labels[i].is_string() ? labels[i].get<std::string>() : labels[i].dump());
    return s + "]";
  }

  // One internal node: its eins checked against what its args really hold, then its steps.
  subtree read_internal(const json& node, std::size_t route, std::vector<subtree>& args) {
    const json& eins = node_member(node, "eins", route);
    const json& ixs = node_array(node_member(eins, "ixs", route, ".eins"), route, ".eins.ixs");
    const json& iy_json = node_array(node_member(eins, "iy", route, ".eins"), route, ".eins.iy");
    const auto fail = [&](const std::string& what) { throw path_error(source_ + ": " + node_name(route) + ": " + what); };
    if (ixs.size() != args.size())
      fail("eins.ixs has " + std::to_string(ixs.size()) + " entries but the node has " + std::to_string(args.size()) + " args");
    for (std::size_t i = 0; i < args.size(); ++i) {
      const auto inside = [&] { return ".eins.ixs[" + std::to_string(i) + "]"; };
      node_array(ixs[i], route, inside());
      std::vector<label_t> claimed;
      bool known = true;
      for (std::size_t k = 0; k < ixs[i].size(); ++k) {
        const auto l = find_label(label_text_lazy(ixs[i][k], [&] { return at(route, inside() + "[" + std::to_string(k) + "]"); }));
        known = known && l.has_value();
        claimed.push_back(l.value_or(-1));
      }
      // The order may differ (labels name the axes); the labels themselves may not.
      std::vector<label_t> held = args[i].labels;
      std::sort(claimed.begin(), claimed.end());
      std::sort(held.begin(), held.end());
      if (!known || claimed != held)
        fail("eins.ixs[" + std::to_string(i) + "] is " + texts(ixs[i]) + " but args[" + std::to_string(i) + "] has labels " +
             p_.net.describe(args[i].labels));
    }
    std::vector<label_t> iy;
    for (std::size_t k = 0; k < iy_json.size(); ++k) {
      const std::string text = label_text_lazy(iy_json[k], [&] { return at(route, ".eins.iy[" + std::to_string(k) + "]"); });
      const auto l = find_label(text);
      bool held = false;
      for (std::size_t i = 0; l && i < args.size() && !held; ++i)
        held = std::find(args[i].labels.begin(), args[i].labels.end(), *l) != args[i].labels.end();
      if (!held) fail("eins.iy label '" + text + "' is in none of the node's args");
      if (std::find(iy.begin(), iy.end(), *l) != iy.end()) fail("eins.iy repeats label '" + text + "'");
      iy.push_back(*l);
    }

    // Two args: one step. More: fold left to right, each partial result keeping the labels that
    // the later args or iy still need. One: a unary step.
    auto& steps = p_.tree.steps;
    const std::size_t n = p_.net.inputs.size();
    subtree acc = std::move(args[0]);
    for (std::size_t j = args.size() == 1 ? 0 : 1; j < args.size(); ++j) {
      const bool unary = args.size() == 1;
      step s;
      s.lhs = acc.id;
      s.rhs = unary ? -1 : args[j].id;
      if (j + 1 == args.size() || unary) {
        s.out = iy;
      } else {
        std::vector<label_t> candidates = acc.labels;
        candidates.insert(candidates.end(), args[j].labels.begin(), args[j].labels.end());
        for (label_t l : candidates) {
          if (std::find(s.out.begin(), s.out.end(), l) != s.out.end()) continue;
          bool needed = std::find(iy.begin(), iy.end(), l) != iy.end();
          for (std::size_t r = j + 1; r < args.size() && !needed; ++r)
            needed = std::find(args[r].labels.begin(), args[r].labels.end(), l) != args[r].labels.end();
          if (needed) s.out.push_back(l);
        }
      }
      acc.id = static_cast<int>(n + steps.size());
      acc.labels = s.out;
      steps.push_back(std::move(s));
    }
    return acc;
  }

  // The root must produce the output: reorder the last step in place, or sum the rest in one more step.
  void finish(const subtree& root) {
    const auto& output = p_.net.output;
    if (root.labels == output) return;
    for (label_t l : output)
      if (std::find(root.labels.begin(), root.labels.end(), l) == root.labels.end())
        throw shape_error(source_ + ": the tree's root produces " + p_.net.describe(root.labels) + " but the output " +
                          p_.net.describe(output) + " also needs label '" + p_.net.label_names[static_cast<std::size_t>(l)] + "'");
    auto& steps = p_.tree.steps;
    const bool root_is_last_step = !steps.empty() && root.id == static_cast<int>(p_.net.inputs.size() + steps.size() - 1);
    std::vector<label_t> a = root.labels, b = output;
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    std::sort(b.begin(), b.end());
    if (root_is_last_step && a == b) {
      steps.back().out = output;
    } else {
      steps.push_back({root.id, -1, output});
    }
  }

  const tree_json_options& opt_;
  std::string source_;
  problem p_;
  std::map<std::string, label_t> ids_;
  std::vector<route_entry> routes_;  // one per tree node visited
  std::vector<std::size_t> used_at_;  // by input: route of the leaf naming it, or no_parent
};

}  // namespace

problem load_tree_json_value(const json& doc, const tree_json_options& opt, const std::string& source) {
  return tree_reader(opt, source).read(doc);
}

}  // namespace detail

problem load_tree_json(std::string_view json_text, const tree_json_options& opt, std::string source) {
  if (source.empty()) source = "tree JSON";
  return detail::load_tree_json_value(detail::parse_json(json_text, source), opt, source);
}

problem load_tree_json_file(const std::string& path, const tree_json_options& opt) {
  return load_tree_json(detail::read_text_file(path), opt, path);
}

}  // namespace tnrt
