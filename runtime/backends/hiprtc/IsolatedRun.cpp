//===- IsolatedRun.cpp - run vendor code in a child process ---------------===//
#include "monodc/runtime/IsolatedRun.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace monodc::runtime;

namespace {

void writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

/// In the child: one status byte ('+' a value, '-' an error), then the text.
[[noreturn]] void answer(int fd, const std::function<Result<std::string>()> &work) {
  Result<std::string> result = work();
  char status = result ? '+' : '-';
  const std::string &text = result ? *result : result.message();
  writeAll(fd, &status, 1);
  writeAll(fd, text.data(), text.size());
  ::close(fd);
  ::_exit(0); // no atexit handlers: they belong to the parent
}

} // namespace

Result<std::string> monodc::runtime::runIsolated(
    const std::function<Result<std::string>()> &work, int timeoutSeconds,
    const std::string &what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return makeError(what + ": cannot create a pipe: " + std::strerror(errno));
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return makeError(what + ": cannot fork: " + std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    answer(fds[1], work);
  }
  ::close(fds[1]);

  // Read until the child closes its end, the deadline passes, or an error.
  std::string received;
  bool timedOut = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  char buffer[65536];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timedOut = true;
      break;
    }
    struct pollfd readable = {fds[0], POLLIN, 0};
    int ready = ::poll(&readable, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      timedOut = true;
      break;
    }
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    received.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timedOut)
    ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut)
    return makeError(what + ": did not finish within " + std::to_string(timeoutSeconds) +
                     " s and was stopped");
  if (WIFSIGNALED(status))
    return makeError(what + ": crashed (signal " + std::to_string(WTERMSIG(status)) + ", " +
                     strsignal(WTERMSIG(status)) + ")");
  if (received.empty() || (received[0] != '+' && received[0] != '-'))
    return makeError(what + ": ended without an answer (exit status " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  if (received[0] == '-')
    return makeError(received.substr(1));
  return received.substr(1);
}
