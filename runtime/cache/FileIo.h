//===- FileIo.h - the few file operations the cache needs -------*- C++ -*-===//
#ifndef MONODC_RUNTIME_CACHE_FILEIO_H
#define MONODC_RUNTIME_CACHE_FILEIO_H

#include "monodc/runtime/Result.h"

#include <chrono>
#include <string>
#include <vector>

namespace monodc::runtime::fileio {

/// The whole file. A missing file is an error whose message starts "missing".
Result<std::string> readFile(const std::string &path);

/// At most `maxBytes` from the start of the file; `fileBytes` gets its size.
Result<std::string> readPrefix(const std::string &path, size_t maxBytes, size_t &fileBytes);

/// Creates `directory` and its parents.
Status makeDirectories(const std::string &directory);

/// Writes `bytes` to a temporary file in `directory` and renames it to
/// `name`, so readers see the old file or the new one, never a partial one.
/// The file is fsynced before the rename and the directory after it, so a
/// crash of the machine leaves the old entry or the whole new one.
Status writeFileAtomically(const std::string &directory, const std::string &name,
                           const std::vector<char> &bytes);

/// fsync() of a directory, so renames and removals in it are durable.
Status syncDirectory(const std::string &directory);

/// An exclusive flock() on a lock file, held until destruction. The system
/// drops it when its process dies, so a crashed holder never blocks others.
class FileLock {
public:
  FileLock() = default;
  /// Takes over `fd`, on which the caller holds the lock.
  explicit FileLock(int fd) : fd_(fd) {}
  FileLock(FileLock &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock &operator=(FileLock &&other) noexcept;
  FileLock(const FileLock &) = delete;
  FileLock &operator=(const FileLock &) = delete;
  ~FileLock() { release(); }
  bool held() const { return fd_ >= 0; }
  void release();

private:
  int fd_ = -1;
};

struct LockAttempt {
  FileLock lock;      ///< held on success
  std::string error;  ///< why the lock file could not be used (empty otherwise)
  bool timedOut = false;
  std::string holder; ///< on a timeout: what the holder wrote ("pid N"), if anything
};

/// Locks `path` (created when missing), waiting at most `timeout`. The holder
/// writes "pid N" into the file. A lock file removed while we waited (by
/// removeLockFileIfFree()) is opened anew, never locked stale.
LockAttempt lockExclusive(const std::string &path, std::chrono::milliseconds timeout);

/// Removes the lock file `path` unless a process holds it; true if removed.
bool removeLockFileIfFree(const std::string &path);


} // namespace monodc::runtime::fileio

#endif // MONODC_RUNTIME_CACHE_FILEIO_H
