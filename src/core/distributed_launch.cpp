// The tiny launcher of `tnrt contract --launch N` (tnrt/distributed.hpp): N copies of a command,
// each told its rank through the environment; a failure of one stops the rest, never a hang.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "tnrt/distributed.hpp"
#include "tnrt/errors.hpp"

namespace tnrt {
namespace {

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 70;
}

}  // namespace

int launch_ranks(const std::vector<std::string>& argv, int ranks, const std::string& rendezvous_dir, double grace_seconds) {
  if (ranks < 1) throw usage_error("--launch needs at least 1 rank, not " + std::to_string(ranks));
  if (argv.empty()) throw usage_error("launch: no command");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: execv's signature
  args.push_back(nullptr);
  std::vector<pid_t> pids;
  const auto kill_all = [&pids] {
    for (pid_t pid : pids)
      if (pid > 0) ::kill(pid, SIGKILL);
    for (pid_t& pid : pids)
      if (pid > 0) {
        int st = 0;
        ::waitpid(pid, &st, 0);
        pid = -1;
      }
  };
  for (int r = 0; r < ranks; ++r) {
    // the environment is built before fork: the child only calls async-signal-safe functions
    const std::string vars[] = {"TNRT_RANK=" + std::to_string(r), "TNRT_LOCAL_RANK=" + std::to_string(r),
                                "TNRT_WORLD_SIZE=" + std::to_string(ranks), "TNRT_RENDEZVOUS=" + rendezvous_dir};
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view kv(*e);
      bool ours = false;
      for (const char* n : {"TNRT_RANK=", "TNRT_LOCAL_RANK=", "TNRT_WORLD_SIZE=", "TNRT_RENDEZVOUS="})
        ours = ours || kv.rfind(n, 0) == 0;
      if (!ours) env.emplace_back(kv);
    }
    for (const auto& v : vars) env.push_back(v);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      kill_all();
      throw io_error("launch: cannot start rank " + std::to_string(r) + ": fork: " + why);
    }
    if (pid == 0) {
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  int first_failure = 0;
  int live = ranks;
  std::chrono::steady_clock::time_point deadline{};
  bool stopping = false;
  while (live > 0) {
    int st = 0;
    const pid_t pid = ::waitpid(-1, &st, stopping ? WNOHANG : 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // no children left
    }
    if (pid == 0) {  // stopping, none exited yet
      if (std::chrono::steady_clock::now() > deadline) {
        kill_all();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    int r = -1;
    for (int i = 0; i < ranks; ++i)
      if (pids[static_cast<std::size_t>(i)] == pid) r = i;
    if (r < 0) continue;
    pids[static_cast<std::size_t>(r)] = -1;
    --live;
    const int code = exit_code_of(st);
    if (code == 0) continue;
    if (first_failure == 0) first_failure = code;
    if (::access((rendezvous_dir + "/status." + std::to_string(r)).c_str(), F_OK) != 0) {
      // it ended without saying why (killed, or exited before it could): its status file, written
      // for it, tells the others, who stop at their next poll
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(ranks) + ": ";
      rendezvous::report_failure_of(rendezvous_dir, r, "internal error",
                                    WIFSIGNALED(st) ? who + "killed by signal " + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")"
                                    : code == 127   ? who + "could not be started (exit 127)"
                                                    : who + "exited with code " + std::to_string(code) + " without an error report");
    }
    if (!stopping) {
      stopping = true;
      deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(grace_seconds));
    }
  }
  return first_failure;
}

}  // namespace tnrt
