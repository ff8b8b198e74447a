//===- FileIo.cpp - the few file operations the cache needs ---------------===//
#include "FileIo.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
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
  return Status::success();
}
