// Reading the kernel log since boot for its XIDs: /dev/kmsg (one record per read, without
// blocking, to the end of the ring buffer), else `journalctl -k -b 0` (where only the
// journal is readable: a container with the host's journal, or /dev/kmsg refused), run
// from /usr/bin or /bin (never from PATH), without a shell, stopped at a deadline.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "check/reason_format.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/check/xid.hpp"

extern char** environ;

namespace cudatool::check {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

// Why /dev/kmsg is refused, with the setting that refuses it.
std::string kmsg_refused(const std::string& path, int error) {
  std::string why = path + ": " + errno_text(error);
  if (error == EPERM || error == EACCES) {
    std::ifstream restrict_file("/proc/sys/kernel/dmesg_restrict");
    int restrict_value = -1;
    if (restrict_file >> restrict_value && restrict_value == 1)
      why += " (kernel.dmesg_restrict is 1: reading the kernel log needs CAP_SYSLOG, e.g. root)";
  }
  return why;
}

// /dev/kmsg, or (a test hook's) regular file read whole as lines.
bool read_kmsg(const std::string& path, KernelLog& log) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    log.why_not = kmsg_refused(path, errno);
    return false;
  }
  struct stat st {};
  const bool device = ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
  std::string pending;  // a regular file: the part of a line not yet ended
  std::vector<char> buffer(16384);
  bool ok = true;
  while (log.xids.bytes < kMaxKernelLogBytes) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // records overwritten while reading: go on from the next
      if (errno == EAGAIN) break;    // the end of the ring buffer
      log.why_not = path + ": " + errno_text(errno);
      ok = false;
      break;
    }
    if (n == 0) break;
    const std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    if (device) {
      // One record: its first line (continuation lines carry KEY=value pairs).
      add_kernel_log_line(log.xids, chunk.substr(0, chunk.find('\n')));
    } else {
      pending.append(chunk);
      std::size_t start = 0, end;
      while ((end = pending.find('\n', start)) != std::string::npos) {
        add_kernel_log_line(log.xids, std::string_view(pending).substr(start, end - start));
        start = end + 1;
      }
      pending.erase(0, start);
      if (pending.size() > (1u << 20)) {  // a "line" of a MiB: not a log
        add_kernel_log_line(log.xids, pending);
        pending.clear();
      }
    }
  }
  if (!pending.empty()) add_kernel_log_line(log.xids, pending);
  if (log.xids.bytes >= kMaxKernelLogBytes) log.xids.truncated = true;
  ::close(fd);
  if (ok && !device && log.xids.lines == 0) {
    log.why_not = path + ": empty";
    return false;
  }
  return ok;
}

// The journal's kernel messages of this boot, through journalctl, at most `timeout_s`.
bool read_journal(const std::string& program, double timeout_s, KernelLog& log, std::string& why) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    why = "journalctl: " + errno_text(errno);
    return false;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    why = "journalctl: " + errno_text(errno);
    ::close(out[0]);
    ::close(out[1]);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<std::string> args = {program,           "-k",         "-b", "0", "-o",
                                   "short-monotonic", "--no-pager", "-q"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (spawned != 0) {
    why = program + ": " + errno_text(spawned);
    ::close(out[0]);
    ::close(err[0]);
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  std::string pending, errors;
  bool out_open = true, err_open = true, timed_out = false;
  char buffer[16384];
  while (out_open || err_open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      if (i == 1) {
        if (errors.size() < 4096) errors.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      pending.append(buffer, static_cast<std::size_t>(n));
      std::size_t start = 0, end;
      while ((end = pending.find('\n', start)) != std::string::npos) {
        add_kernel_log_line(log.xids, std::string_view(pending).substr(start, end - start));
        start = end + 1;
      }
      pending.erase(0, start);
      if (pending.size() > (1u << 20) || log.xids.bytes >= kMaxKernelLogBytes) {
        log.xids.truncated = true;
        timed_out = log.xids.bytes >= kMaxKernelLogBytes;
        pending.clear();
        if (timed_out) break;
      }
    }
    if (timed_out) break;
  }
  if (!pending.empty()) add_kernel_log_line(log.xids, pending);
  if (out_open || err_open) ::kill(pid, SIGKILL);
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string first_error = printable(errors.substr(0, errors.find('\n')), 200);
  if (timed_out && log.xids.bytes < kMaxKernelLogBytes) {
    why = program + " -k: stopped after " + detail::fixed(timeout_s, 1) +
          " s (the journal read so far is used)";
    log.xids.truncated = true;
    return log.xids.lines > 0;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = program + " -k -b 0 failed" + (first_error.empty() ? "" : ": " + first_error);
    return false;
  }
  if (log.xids.lines == 0) {
    // Every boot logs kernel messages: none means the journal hides them from this user.
    why = program +
          " -k -b 0 showed no kernel message (no permission to read the system "
          "journal, or no journal of this boot)";
    return false;
  }
  return true;
}

}  // namespace

KernelLog read_kernel_log(double journal_timeout_s) {
  KernelLog log;
  const char* kmsg_hook = test_hook("CUDATOOL_TEST_KMSG");
  const std::string kmsg = kmsg_hook ? kmsg_hook : "/dev/kmsg";
  if (read_kmsg(kmsg, log)) {
    log.readable = true;
    log.source = kmsg;
    log.why_not.clear();
    return log;
  }
  const std::string kmsg_why = log.why_not;
  log.xids = {};
  std::vector<std::string> programs;
  if (const char* hook = test_hook("CUDATOOL_TEST_JOURNALCTL"))
    programs = {hook};
  else
    programs = {"/usr/bin/journalctl", "/bin/journalctl"};
  std::string journal_why;
  for (const auto& program : programs) {
    if (::access(program.c_str(), X_OK) != 0) {
      journal_why = program + ": " + errno_text(errno);
      continue;
    }
    KernelLog attempt;
    if (read_journal(program, journal_timeout_s, attempt, journal_why)) {
      attempt.readable = true;
      attempt.source = program + " -k -b 0";
      attempt.why_not = journal_why;  // a note where it was stopped early
      return attempt;
    }
    break;  // found but refused: the other path is the same program
  }
  log.readable = false;
  log.why_not = kmsg_why + "; " + journal_why;
  return log;
}

}  // namespace cudatool::check
