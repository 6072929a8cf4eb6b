#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace cudatool::testing {

ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                          const ProcessOptions& options) {
  // A child that exits before reading its stdin must not kill the test with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (!options.stdout_path.empty()) {
      const int fd = open(options.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, 1) < 0) _exit(126);
      close(fd);
    }
    if (options.close_stdout) close(1);
    for (const auto& [name, value] : options.env) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
    if (!options.working_directory.empty() && chdir(options.working_directory.c_str()) != 0)
      _exit(126);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  // Feed stdin and drain both outputs together, so no pipe fills up and blocks the child.
  ProcessResult result;
  std::size_t written = 0;
  int stdin_fd = in[1];
  if (options.stdin_data.empty()) {
    close(stdin_fd);
    stdin_fd = -1;
  }
  bool out_open = true, err_open = true;
  char buffer[65536];
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(options.timeout_seconds);
  while (out_open || err_open || stdin_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {out[0], POLLIN, 0};
    if (err_open) fds[n++] = {err[0], POLLIN, 0};
    if (stdin_fd >= 0) fds[n++] = {stdin_fd, POLLOUT, 0};
    int wait_ms = -1;
    if (options.timeout_seconds > 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        kill(pid, SIGKILL);
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    if (poll(fds, n, wait_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == stdin_fd) {
        const ssize_t w = write(stdin_fd, options.stdin_data.data() + written,
                                options.stdin_data.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 || written == options.stdin_data.size()) {
          close(stdin_fd);
          stdin_fd = -1;
        }
        continue;
      }
      const ssize_t r = read(fds[i].fd, buffer, sizeof buffer);
      if (r <= 0) {
        close(fds[i].fd);
        (fds[i].fd == out[0] ? out_open : err_open) = false;
      } else {
        (fds[i].fd == out[0] ? result.out : result.err).append(buffer, static_cast<std::size_t>(r));
      }
    }
  }
  if (out_open) close(out[0]);
  if (err_open) close(err[0]);
  if (stdin_fd >= 0) close(stdin_fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

ProcessResult run_cudatool(const std::vector<std::string>& args, const ProcessOptions& options) {
  return run_process(CUDATOOL_BINARY, args, options);
}

bool wait_until_gone(int pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string id, name, state;
    if (!(stat >> id >> name >> state) || state == "Z") return true;
    ::usleep(20000);
  }
  return false;
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

ProcessOptions without_driver() {
  ProcessOptions options;
  options.env["CUDATOOL_LIBCUDA"] = kMissingDriver;
  return options;
}

ProcessOptions with_fake_driver(std::map<std::string, std::string> fake_settings) {
  ProcessOptions options;
  options.env["CUDATOOL_LIBCUDA"] = std::string(CUDATOOL_FAKE_LIBCUDA);
  for (auto& [name, value] : fake_settings) options.env[name] = value;
  return options;
}

ProcessOptions with_fake_nvml(std::map<std::string, std::string> fake_settings) {
  ProcessOptions options = with_fake_driver(std::move(fake_settings));
  options.env["CUDATOOL_LIBNVML"] = std::string(CUDATOOL_FAKE_LIBNVML);
  return options;
}

}  // namespace cudatool::testing
