//===- FileIo.cpp - the few file operations the cache needs ---------------===//
#include "FileIo.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace monodc::runtime;

namespace {

Error systemError(const std::string &what, const std::string &path, int error) {
  return makeError(what + " " + path + ": " + std::strerror(error));
}

/// Closes a descriptor when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

Status readInto(int fd, const std::string &path, std::string &buffer) {
  size_t done = 0;
  while (done < buffer.size()) {
    ssize_t n = ::read(fd, buffer.data() + done, buffer.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return systemError("cannot read", path, errno);
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  buffer.resize(done);
  return Status::success();
}

Result<std::string> readUpTo(const std::string &path, size_t maxBytes, size_t &fileBytes) {
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0)
    return errno == ENOENT ? makeError("missing: " + path)
                           : systemError("cannot open", path, errno);
  struct stat info;
  if (::fstat(file.fd, &info) != 0)
    return systemError("cannot stat", path, errno);
  fileBytes = static_cast<size_t>(info.st_size);
  std::string buffer(std::min(fileBytes, maxBytes), '\0');
  if (Status read = readInto(file.fd, path, buffer); !read)
    return read.error();
  return buffer;
}

} // namespace

Result<std::string> fileio::readFile(const std::string &path) {
  size_t fileBytes = 0;
  return readUpTo(path, SIZE_MAX, fileBytes);
}

Result<std::string> fileio::readPrefix(const std::string &path, size_t maxBytes,
                                       size_t &fileBytes) {
  return readUpTo(path, maxBytes, fileBytes);
}

Status fileio::makeDirectories(const std::string &directory) {
  for (size_t slash = 0; slash != std::string::npos;) {
    slash = directory.find('/', slash + 1);
    std::string prefix = directory.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return systemError("cannot create directory", prefix, errno);
  }
  struct stat info;
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return makeError("not a directory: " + directory);
  return Status::success();
}

Status fileio::writeFileAtomically(const std::string &directory, const std::string &name,
                                   const std::vector<char> &bytes) {
  // Hidden, and unique per writer: concurrent writers never share a file.
  std::string temporary = directory + "/." + name + ".XXXXXX";
  FileDescriptor file{::mkstemp(temporary.data())};
  if (file.fd < 0)
    return systemError("cannot create a file in", directory, errno);
  ::fchmod(file.fd, 0644);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      ::unlink(temporary.c_str());
      return systemError("cannot write", temporary, error);
    }
    done += static_cast<size_t>(n);
  }
  // On disk before the rename: a crash then leaves the old entry or the new
  // one whole, never a renamed file whose blocks were not yet written.
  if (::fsync(file.fd) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    return systemError("cannot sync", temporary, error);
  }
  if (::close(file.fd) != 0) {
    file.fd = -1;
    int error = errno;
    ::unlink(temporary.c_str());
    return systemError("cannot write", temporary, error);
  }
  file.fd = -1;
  std::string target = directory + "/" + name;
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    return systemError("cannot rename a new entry to", target, error);
  }
  // The rename itself is durable once the directory is.
  return syncDirectory(directory);
}

Status fileio::syncDirectory(const std::string &directory) {
  FileDescriptor dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0)
    return systemError("cannot open directory", directory, errno);
  // Some file systems cannot sync a directory (EINVAL): nothing more to do there.
  if (::fsync(dir.fd) != 0 && errno != EINVAL)
    return systemError("cannot sync directory", directory, errno);
  return Status::success();
}

fileio::FileLock &fileio::FileLock::operator=(FileLock &&other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void fileio::FileLock::release() {
  if (fd_ < 0)
    return;
  // Nobody holds it any more: the holder text goes, then the lock (on close).
  (void)!::ftruncate(fd_, 0);
  ::close(fd_);
  fd_ = -1;
}

namespace {

/// Whether `fd` is still the file at `path` (not removed or replaced).
bool isStillAt(int fd, const std::string &path) {
  struct stat opened, named;
  return ::fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 &&
         opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

std::string holderText(int fd) {
  char text[64];
  ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string holder(text, n > 0 ? static_cast<size_t>(n) : 0);
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0'))
    holder.pop_back();
  return holder;
}

} // namespace

fileio::LockAttempt fileio::lockExclusive(const std::string &path,
                                          std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  LockAttempt attempt;
  for (;;) {
    FileDescriptor file{::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
    if (file.fd < 0) {
      attempt.error = systemError("cannot open lock file", path, errno).message;
      return attempt;
    }
    // flock() cannot time out by itself: poll, 1 ms at first, then up to 50 ms.
    std::chrono::microseconds pause(1000);
    for (;;) {
      if (::flock(file.fd, LOCK_EX | LOCK_NB) == 0)
        break;
      if (errno == EINTR)
        continue;
      if (errno != EWOULDBLOCK) {
        attempt.error = systemError("cannot lock", path, errno).message;
        return attempt;
      }
      Clock::time_point now = Clock::now();
      if (now >= deadline) {
        attempt.timedOut = true;
        attempt.holder = holderText(file.fd);
        return attempt;
      }
      auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
      std::this_thread::sleep_for(std::min(pause, left));
      pause = std::min(pause * 2, std::chrono::microseconds(50000));
    }
    // Removed by a `cache clear` between our open and our lock: lock the new one.
    if (!isStillAt(file.fd, path))
      continue;
    std::string holder = "pid " + std::to_string(::getpid()) + "\n";
    (void)!::ftruncate(file.fd, 0);
    (void)!::pwrite(file.fd, holder.data(), holder.size(), 0);
    attempt.lock = FileLock(file.fd);
    file.fd = -1;
    return attempt;
  }
}

bool fileio::removeLockFileIfFree(const std::string &path) {
  FileDescriptor file{::open(path.c_str(), O_RDWR | O_CLOEXEC)};
  if (file.fd < 0)
    return false;
  if (::flock(file.fd, LOCK_EX | LOCK_NB) != 0 || !isStillAt(file.fd, path))
    return false;
  // Unlinked while we hold it: a waiter that gets it next sees it is gone.
  return ::unlink(path.c_str()) == 0;
}
