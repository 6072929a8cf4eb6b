#include "cudatool/compile/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

// Characters a shell acts on inside double quotes; control characters are refused too (a
// newline ends nothing there, but nothing legitimate needs one).
std::optional<std::string> double_quote_hazard(std::string_view value, bool quote_escaped) {
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '$') return std::string("'$' (a shell expands it inside double quotes)");
    if (c == '`') return std::string("'`' (a shell runs a command substitution)");
    if (c == '\\') return std::string("'\\' (a shell takes it as an escape)");
    if (c == '"' && !quote_escaped) return std::string("'\"' (it ends nvcc's quoting)");
    if (c < 0x20 || c == 0x7f) return std::string("a control character (a newline or such)");
  }
  return std::nullopt;
}

bool bare_safe(unsigned char c) {
  return std::isalnum(c) ||
         std::string_view("_-+=.,/:@%^").find(static_cast<char>(c)) != std::string_view::npos;
}

// The fixed set of signals forwarded to a running child's process group.
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr std::size_t kSignalCount = sizeof kForwardedSignals / sizeof kForwardedSignals[0];

// Process groups of the running children (0: a free slot), read by the handler.
constexpr std::size_t kMaxChildren = 64;
std::atomic<pid_t> child_groups[kMaxChildren];
std::atomic<int> received_signal{0};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void forward_signal(int sig) {
  const int saved = errno;
  received_signal.store(sig);
  for (auto& group : child_groups)
    if (const pid_t pgid = group.load(); pgid > 0) ::kill(-pgid, sig);
  errno = saved;
}

// Installs the forwarding handler while at least one child runs; restores what was there.
class ForwardingScope {
 public:
  ForwardingScope() {
    std::lock_guard lock(mutex());
    if (active()++ == 0) {
      struct sigaction action {};
      action.sa_handler = forward_signal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = 0;  // no SA_RESTART: the read loop sees EINTR and goes on
      for (std::size_t i = 0; i < kSignalCount; ++i) {
        struct sigaction old {};
        ::sigaction(kForwardedSignals[i], nullptr, &old);
        previous()[i] = old;
        // A signal the process was told to ignore (nohup, a shell's background job) stays
        // ignored, for the child too.
        if (old.sa_handler != SIG_IGN) ::sigaction(kForwardedSignals[i], &action, nullptr);
      }
    }
  }
  ~ForwardingScope() {
    std::lock_guard lock(mutex());
    if (--active() == 0) {
      for (std::size_t i = 0; i < kSignalCount; ++i)
        ::sigaction(kForwardedSignals[i], &previous()[i], nullptr);
      // Every run that was under way has seen the signal by now (it checks before its
      // scope ends); a later run in a process that went on starts clean.
      received_signal.store(0);
    }
  }
  ForwardingScope(const ForwardingScope&) = delete;
  ForwardingScope& operator=(const ForwardingScope&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& active() {
    static int n = 0;
    return n;
  }
  static struct sigaction* previous() {
    static struct sigaction saved[kSignalCount];
    return saved;
  }
};

// A slot of child_groups, held while the child runs.
class ChildSlot {
 public:
  explicit ChildSlot(pid_t pgid) {
    for (auto& group : child_groups) {
      pid_t expected = 0;
      if (group.compare_exchange_strong(expected, pgid)) {
        slot_ = &group;
        break;
      }
    }
  }
  ~ChildSlot() {
    if (slot_) slot_->store(0);
  }
  ChildSlot(const ChildSlot&) = delete;
  ChildSlot& operator=(const ChildSlot&) = delete;

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

[[noreturn]] void throw_interrupted(int sig) {
  const char* name = sig == SIGINT    ? "SIGINT"
                     : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP  ? "SIGHUP"
                                      : "SIGQUIT";
  throw InterruptedError(
      std::string("interrupted by ") + name + ": nvcc stopped, its temporary files removed", sig);
}

// Collects a child's output: the first half of the bound, then a sliding tail.
class CappedOutput {
 public:
  explicit CappedOutput(std::size_t max_bytes)
      : head_max_(max_bytes / 2), tail_max_(max_bytes - max_bytes / 2) {}
  void append(const char* data, std::size_t size) {
    const std::size_t to_head = std::min(size, head_max_ - std::min(head_max_, head_.size()));
    head_.append(data, to_head);
    data += to_head;
    size -= to_head;
    if (size == 0) return;
    tail_.append(data, size);
    if (tail_.size() > 2 * tail_max_ + 65536) trim();
  }
  std::string finish() {
    trim();
    if (dropped_ == 0) return head_ + tail_;
    return head_ + "\n[cudatool: " + std::to_string(dropped_) +
           " bytes of compiler output left out]\n" + tail_;
  }

 private:
  void trim() {
    if (tail_.size() <= tail_max_) return;
    const std::size_t cut = tail_.size() - tail_max_;
    dropped_ += cut;
    tail_.erase(0, cut);
  }
  std::size_t head_max_, tail_max_;
  std::string head_, tail_;
  std::size_t dropped_ = 0;
};

// In the child, between fork and exec: its own process group, the forwarded signals back to
// their defaults (unless ignored), standard output and error into the pipe, standard input
// from /dev/null. Only async-signal-safe calls from here to exec.
[[noreturn]] void exec_child(const std::vector<char*>& args, int output_fd) {
  ::setpgid(0, 0);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (const int sig : kForwardedSignals) {
    struct sigaction old {};
    ::sigaction(sig, nullptr, &old);
    if (old.sa_handler != SIG_IGN) ::sigaction(sig, &action, nullptr);
  }
  ::dup2(output_fd, 1);
  ::dup2(output_fd, 2);
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, 0);
  ::execv(args[0], args.data());
  ::_exit(127);
}

// The child's output, read until the pipe closes. After a forwarded signal the group has
// kKillAfter to end; what still holds the pipe then (a process that ignores the signal: a
// shell's background job ignores SIGINT) is killed.
CappedOutput read_child_output(int fd, pid_t pid) {
  CappedOutput output(kMaxChildOutputBytes);
  char buffer[65536];
  using Clock = std::chrono::steady_clock;
  constexpr auto kKillAfter = std::chrono::seconds(2);
  std::optional<Clock::time_point> signalled_at;
  bool killed = false;
  for (;;) {
    int timeout_ms = -1;
    if (received_signal.load() != 0 && !killed) {
      if (!signalled_at) signalled_at = Clock::now();
      const auto left = kKillAfter - (Clock::now() - *signalled_at);
      if (left <= Clock::duration::zero()) {
        ::kill(-pid, SIGKILL);
        killed = true;
      } else {
        timeout_ms = static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1);
      }
    }
    struct pollfd readable {
      fd, POLLIN, 0
    };
    const int ready = ::poll(&readable, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the kill above
    const ReadOutcome got = read_some(fd, buffer);
    if (got.error != 0 || got.bytes == 0) break;
    output.append(buffer, got.bytes);
  }
  return output;
}

// The child's wait status, once it has ended.
int wait_for_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::optional<std::string> nvcc_shell_hazard(std::string_view value, NvccQuoting quoting) {
  if (quoting != NvccQuoting::bare)
    return double_quote_hazard(value, quoting == NvccQuoting::define);
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (bare_safe(c)) continue;
    if (c < 0x20 || c == 0x7f) return std::string("a control character (a newline or such)");
    // Appended, not "'" + std::string(...): GCC 12's -O3 takes that for an overlapping
    // memcpy (-Wrestrict, a false positive that -Werror makes fatal).
    std::string why = "'";
    why += ch;
    why += "' (nvcc passes this value to the shell unquoted)";
    return why;
  }
  return std::nullopt;
}

std::optional<std::string> nvcc_argument_hazard(const std::vector<std::string>& arguments) {
  auto check = [](const std::string& argument, std::string_view value,
                  NvccQuoting quoting) -> std::optional<std::string> {
    if (auto why = nvcc_shell_hazard(value, quoting)) return quote_input(argument) + ": " + *why;
    return std::nullopt;
  };
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    std::optional<std::string> problem;
    if (a == "-o" || a == "-I" || a == "-isystem" || a == "-D") {
      const NvccQuoting quoting = a == "-D" ? NvccQuoting::define : NvccQuoting::double_quoted;
      if (i + 1 < arguments.size()) problem = check(arguments[i + 1], arguments[i + 1], quoting);
      ++i;
    } else if (a.rfind("-D", 0) == 0) {
      problem = check(a, std::string_view(a).substr(2), NvccQuoting::define);
    } else if (a.rfind("-I", 0) == 0) {
      problem = check(a, std::string_view(a).substr(2), NvccQuoting::double_quoted);
    } else if (a.rfind("--keep-dir=", 0) == 0) {
      problem = check(a, std::string_view(a).substr(11), NvccQuoting::double_quoted);
    } else if (!a.empty() && a[0] != '-') {
      problem = check(a, a, NvccQuoting::double_quoted);
      std::error_code ec;
      const std::string absolute =
          std::filesystem::weakly_canonical(std::filesystem::absolute(a, ec), ec).string();
      if (!problem && !ec) problem = check(absolute, absolute, NvccQuoting::double_quoted);
    } else {
      problem = check(a, a, NvccQuoting::bare);
    }
    if (problem) return problem;
  }
  return std::nullopt;
}

std::string cap_compiler_output(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  CappedOutput capped(max_bytes);
  capped.append(text.data(), text.size());
  return capped.finish();
}

ChildResult run_nvcc_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw UsageError("no program to run");
  if (auto problem = nvcc_argument_hazard({argv.begin() + 1, argv.end()}))
    throw UsageError("refusing to run nvcc: " + *problem +
                     "; nvcc hands its arguments to /bin/sh, which would run or change it");
  ForwardingScope forwarding;
  if (const int sig = received_signal.load()) throw_interrupted(sig);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int saved = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::system_error(saved, std::generic_category(), "fork");
  }
  if (pid == 0) exec_child(args, pipe_fds[1]);
  ::setpgid(pid, pid);  // also here: the slot below must name a group that exists
  ::close(pipe_fds[1]);
  ChildSlot slot(pid);
  // A signal that came between the check above and the slot: the child missed it.
  if (received_signal.load() != 0) ::kill(-pid, received_signal.load());
  CappedOutput output = read_child_output(pipe_fds[0], pid);
  ::close(pipe_fds[0]);
  const int status = wait_for_child(pid);
  if (const int sig = received_signal.load()) throw_interrupted(sig);
  ChildResult result;
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.output = output.finish();
  return result;
}

}  // namespace cudatool
