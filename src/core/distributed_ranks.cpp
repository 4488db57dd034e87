// Ranks as processes: who this process is (the launcher's variables), the rendezvous directory,
// the file collective, and one rank's part of a sliced contraction (tnrt/distributed.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tnrt/distributed.hpp"
#include "tnrt/errors.hpp"
#include "tnrt/npy.hpp"

namespace tnrt {
namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

std::string of(int rank, int size) { return "rank " + std::to_string(rank) + " of " + std::to_string(size); }

std::optional<std::int64_t> whole_number(const char* text) {
  if (text == nullptr) return std::nullopt;
  const std::string_view s(text);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

int number_of(const environment_lookup& get, const char* name) {
  const char* text = get(name);
  const auto v = whole_number(text);
  if (!v || *v < 0 || *v > 1 << 24) throw usage_error(std::string(name) + "='" + text + "' is not a rank count or rank (a whole number >= 0)");
  return static_cast<int>(*v);
}

// A typed error of the kind named by error::kind() ("device error" -> device_error).
[[noreturn]] void throw_kind(const std::string& kind, const std::string& message) {
  if (kind == "usage error") throw usage_error(message);
  if (kind == "parse error") throw parse_error(message);
  if (kind == "shape error") throw shape_error(message);
  if (kind == "path error") throw path_error(message);
  if (kind == "dtype error") throw dtype_error(message);
  if (kind == "i/o error") throw io_error(message);
  if (kind == "out of memory") throw out_of_memory(message);
  if (kind == "device error") throw device_error(message);
  if (kind == "not supported") throw not_supported(message);
  if (kind == "verification failed") throw verification_error(message);
  throw internal_error(message);
}

std::string status_name(int rank) { return "status." + std::to_string(rank); }

void write_atomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw io_error("rendezvous: cannot write '" + tmp + "': " + std::strerror(errno));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw io_error("rendezvous: writing '" + tmp + "' failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw io_error("rendezvous: cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

std::optional<rank_identity> rank_from_environment(const environment_lookup& lookup) {
  const environment_lookup get = lookup ? lookup : environment_lookup([](const char* n) -> const char* { return std::getenv(n); });
  static constexpr std::pair<const char*, const char*> pairs[] = {
      {"TNRT_RANK", "TNRT_WORLD_SIZE"}, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"RANK", "WORLD_SIZE"}};
  for (const auto& [rank_var, size_var] : pairs) {
    const bool has_rank = get(rank_var) != nullptr, has_size = get(size_var) != nullptr;
    if (!has_rank && !has_size) continue;
    if (has_rank != has_size)
      throw usage_error(std::string(has_rank ? rank_var : size_var) + " is set but " + (has_rank ? size_var : rank_var) + " is not");
    rank_identity id;
    id.rank = number_of(get, rank_var);
    id.size = number_of(get, size_var);
    id.source = std::string(rank_var) + "/" + size_var;
    if (id.size < 1) throw usage_error(std::string(size_var) + " must be at least 1, not 0");
    if (id.rank >= id.size)
      throw usage_error(std::string(rank_var) + "=" + std::to_string(id.rank) + " is not within 0.." + std::to_string(id.size - 1) + " (" +
                        size_var + "=" + std::to_string(id.size) + ")");
    id.local_rank = id.rank;
    for (const char* local : {"TNRT_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "LOCAL_RANK"}) {
      if (get(local) == nullptr) continue;
      id.local_rank = number_of(get, local);
      break;
    }
    return id;
  }
  return std::nullopt;
}

int device_of(const rank_identity& id, int device_count) {
  if (device_count < 1) throw usage_error("no device to give rank " + std::to_string(id.rank) + " (device count " + std::to_string(device_count) + ")");
  return id.local_rank % device_count;
}

// ---- rendezvous ------------------------------------------------------------------------------

rendezvous::rendezvous(std::string dir, int rank, int size, double timeout_seconds, double poll_seconds)
    : dir_(std::move(dir)), rank_(rank), size_(size), timeout_(timeout_seconds), poll_(poll_seconds) {
  if (size < 1 || rank < 0 || rank >= size) throw usage_error("rendezvous: " + of(rank, size) + " is not a rank of the job");
  if (!(timeout_seconds > 0)) throw usage_error("the collective timeout must be positive (seconds)");
  if (!(poll_seconds > 0)) throw usage_error("the rendezvous poll interval must be positive");
  std::error_code ec;
  if (dir_.empty() || !std::filesystem::is_directory(dir_, ec))
    throw io_error("rendezvous directory '" + dir_ + "' does not exist (give --rendezvous DIR or TNRT_RENDEZVOUS, on a file system every rank sees)");
}

std::string rendezvous::path(std::string_view name) const { return dir_ + "/" + std::string(name); }

void rendezvous::publish(std::string_view name, std::string_view bytes) const { write_atomically(path(name), bytes); }

std::string rendezvous::read(std::string_view name) const {
  std::ifstream f(path(name), std::ios::binary);
  if (!f) throw io_error("rendezvous: cannot read '" + path(name) + "'");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void rendezvous::check_peers() const {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const std::string st = path(status_name(r));
    if (!exists(st)) continue;
    std::string text = read(status_name(r));
    const auto tab = text.find('\t');
    const std::string kind = tab == std::string::npos ? "internal error" : text.substr(0, tab);
    std::string message = tab == std::string::npos ? text : text.substr(tab + 1);
    while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
    // a message already naming its rank (a peer that relays another's failure) is kept as it is
    if (message.rfind("rank ", 0) != 0) message = of(r, size_) + ": " + message;
    throw_kind(kind, message);
  }
}

void rendezvous::wait_for(std::string_view name, int from) const {
  const std::string want = path(name);
  const auto t0 = clock_type::now();
  const auto poll = std::chrono::duration<double>(poll_);
  for (;;) {
    if (exists(want)) return;
    check_peers();
    if (since(t0) > timeout_) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", timeout_);
      throw io_error(of(from, size_) + ": nothing from it within " + secs + " s (it died, hangs or is still contracting; " +
                     of(rank_, size_) + " waited for '" + std::string(name) + "' in " + dir_ + "; --collective-timeout S raises the limit)");
    }
    std::this_thread::sleep_for(poll);
  }
}

void rendezvous::report_failure(const std::exception& e) const noexcept {
  const auto* te = dynamic_cast<const error*>(&e);
  std::string message = e.what();
  if (message.rfind("rank ", 0) != 0) message = of(rank_, size_) + ": " + message;
  report_failure_of(dir_, rank_, te ? te->kind() : "internal error", message);
}

void rethrow_for_rank(const std::exception& e, int rank, int size) {
  const auto* te = dynamic_cast<const error*>(&e);
  std::string message = e.what();
  if (message.rfind("rank ", 0) != 0) message = of(rank, size) + ": " + message;
  if (te == nullptr && dynamic_cast<const std::bad_alloc*>(&e) != nullptr) throw out_of_memory(message);
  throw_kind(te ? te->kind() : "internal error", message);
}

void rendezvous::report_failure_of(const std::string& dir, int rank, const std::string& kind, const std::string& message) noexcept {
  try {
    std::string line = kind + "\t" + message;
    std::replace(line.begin(), line.end(), '\n', ' ');
    write_atomically(dir + "/" + status_name(rank), line + "\n");
  } catch (...) {  // the others then stop at their timeout, naming this rank
  }
}

// ---- the file collective -----------------------------------------------------------------------

namespace {

class file_collective final : public collective {
 public:
  explicit file_collective(rendezvous r) : r_(std::move(r)) {}
  int rank() const override { return r_.rank(); }
  int size() const override { return r_.size(); }
  std::string name() const override { return "file"; }

  void reduce(const problem& p, const reduction_plan& plan, const tensor_view& partial, stream_handle) override {
    const auto shape = p.net.shape_of(p.net.output);
    if (partial.device != cpu_device) throw not_supported("the file collective combines host tensors; a device partial needs NCCL");
    if (partial.type != p.type || !std::equal(partial.shape.begin(), partial.shape.end(), shape.begin(), shape.end()) ||
        !partial.strides.empty())
      throw shape_error("file collective: the partial result is not a row-major tensor of the output's shape and dtype");
    const std::string k = std::to_string(calls_++);
    host_tensor mine(p.type, shape);
    std::memcpy(mine.data(), partial.data, mine.bytes());
    if (r_.rank() != 0) {
      write_npy(r_.path("partial." + k + "." + std::to_string(r_.rank()) + ".npy"), mine);
      r_.wait_for("reduced." + k + ".npy", 0);
      return;
    }
    std::vector<host_tensor> partials;
    partials.reserve(static_cast<std::size_t>(r_.size()));
    partials.push_back(std::move(mine));
    for (int r = 1; r < r_.size(); ++r) {
      const std::string name = "partial." + k + "." + std::to_string(r) + ".npy";
      r_.wait_for(name, r);
      partials.push_back(read_npy(r_.path(name)));
      std::remove(r_.path(name).c_str());
    }
    const host_tensor out = combine_partials(p, plan, partials);
    std::memcpy(partial.data, out.data(), out.bytes());
    // the others wait for this marker: a root that fails in the combine reaches them as its error
    r_.publish("reduced." + k + ".npy", "");
  }

  void abort(const std::exception& e) noexcept override { r_.report_failure(e); }

 private:
  rendezvous r_;
  std::int64_t calls_ = 0;
};

class one_rank_collective final : public collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "none (one rank)"; }
  void reduce(const problem&, const reduction_plan&, const tensor_view&, stream_handle) override {}
  void abort(const std::exception&) noexcept override {}
};

}  // namespace

std::unique_ptr<collective> make_file_collective(rendezvous r) { return std::make_unique<file_collective>(std::move(r)); }
std::unique_ptr<collective> make_one_rank_collective() { return std::make_unique<one_rank_collective>(); }

// ---- one rank's part ----------------------------------------------------------------------------

std::vector<label_t> blocks_first(const problem& p, std::span<const label_t> labels) {
  std::vector<label_t> order(labels.begin(), labels.end());
  std::stable_partition(order.begin(), order.end(),
                        [&](label_t l) { return std::find(p.net.output.begin(), p.net.output.end(), l) != p.net.output.end(); });
  return order;
}

std::string idle_note(int rank, int ranks, std::int64_t slices) {
  return of(rank, ranks) + ": no slices (" + std::to_string(slices) + " slice" + (slices == 1 ? "" : "s") + " for " + std::to_string(ranks) +
         " ranks): idle";
}

host_tensor contract_sliced_rank(const problem& p, std::span<const host_tensor> inputs, std::span<const label_t> labels,
                                 slice_schedule how, const slice_contractor& contract_one, collective& coll, distributed_report* report) {
  distributed_report rep;
  host_tensor partial;
  const auto shape = p.net.shape_of(p.net.output);
  try {
    const std::vector<label_t> order = blocks_first(p, labels);
    rep.ranks = coll.size();
    rep.schedule = how;
    rep.plan = plan_reduction(p, order, coll.size(), how);
    rank_report me;
    me.rank = coll.rank();
    me.share = share_of(rep.plan.slices, coll.size(), coll.rank(), how);
    const auto t0 = clock_type::now();
    if (me.share.count == 0) {
      partial = host_tensor(p.type, shape);
      fill_constant(partial, 0.0);
      rep.notes.push_back(idle_note(me.rank, rep.ranks, rep.plan.slices));
    } else {
      partial = contract_sliced(p, inputs, order, contract_one, {}, me.share.first, me.share.count, me.share.stride);
    }
    me.seconds = since(t0);
    rep.contract_seconds = me.seconds;
    rep.per_rank.push_back(me);
  } catch (const std::exception& e) {
    coll.abort(e);
    rethrow_for_rank(e, coll.rank(), coll.size());
  }
  tensor_view v;
  v.data = partial.data();
  v.type = partial.type();
  v.shape = partial.shape();
  v.device = cpu_device;
  const auto t1 = clock_type::now();
  try {
    coll.reduce(p, rep.plan, v, nullptr);
  } catch (const std::exception& e) {
    coll.abort(e);  // a peer's error relayed: it names its rank already, so the others keep its words
    rethrow_for_rank(e, coll.rank(), coll.size());
  }
  rep.reduce_seconds = since(t1);
  if (report) *report = std::move(rep);
  return coll.rank() == 0 ? std::move(partial) : host_tensor();
}

}  // namespace tnrt
