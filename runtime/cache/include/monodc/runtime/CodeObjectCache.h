//===- CodeObjectCache.h - build key -> code object, memory and disk -*- C++ -*-===//
//
// Memory first, then one file per key in a directory. Entries are written to a
// temporary file, fsynced and renamed (then the directory is fsynced), so a
// reader never sees half an entry, even after a crash of the machine.
// getOrBuild() builds each missing key once across threads and processes: the
// builder holds an flock() on the key's lock file `.<hash>.lock` in the
// directory while it builds and stores; the others wait for it (at most
// CacheOptions::lockTimeout, then a clear error) and load what it stored. A
// holder that dies releases the lock with its process. A damaged entry
// (truncated, corrupted, of another format) or a foreign one (holding another
// key) is never returned: it counts as a miss, is rebuilt and replaced. When
// the directory cannot be written the cache says so in one warning line and
// keeps new entries in memory.
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_RUNTIME_CODEOBJECTCACHE_H
#define MONODC_RUNTIME_CODEOBJECTCACHE_H

#include "monodc/runtime/CacheEntry.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace monodc::runtime {

/// `$MONODC_CACHE_DIR`, else `$XDG_CACHE_HOME/monodc`, else `~/.cache/monodc`.
std::string defaultCacheDirectory();

struct CacheOptions {
  /// Where entries live; empty: memory only.
  std::string directory;
  /// Receives the one warning line (without a newline); default: stderr.
  std::function<void(const std::string &)> warn;
  /// How long getOrBuild() waits for another process building the same key;
  /// zero: `$MONODC_CACHE_LOCK_TIMEOUT` seconds, else kDefaultLockTimeout.
  std::chrono::milliseconds lockTimeout{0};
};

constexpr std::chrono::seconds kDefaultLockTimeout{600};

class CodeObjectCache {
public:
  explicit CodeObjectCache(CacheOptions options);

  const std::string &directory() const { return options_.directory; }
  /// False for a memory-only cache and after a failed write.
  bool writesToDisk() const { return diskWritable_.load(); }
  /// Why disk writes stopped (empty while they work).
  std::string writeError() const;

  struct Lookup {
    std::shared_ptr<const CacheEntry> entry; ///< null on a miss
    bool fromDisk = false;
    /// Why an existing disk entry was refused (empty when there was none).
    std::string refused;
  };

  /// The entry built for `keyText`: from memory, else from its disk file.
  Lookup find(const std::string &keyText);

  /// Keeps `entry` in memory and writes it to disk.
  std::shared_ptr<const CacheEntry> store(CacheEntry entry);

  /// find(), else `build` then store(). A refused disk entry is rebuilt and
  /// replaced; the build's error comes back as is. With a disk directory the
  /// build runs under the key's lock: one process builds, the others wait
  /// and load its entry (or, if its build failed, build in turn). A wait
  /// longer than the lock timeout is an error naming the lock and its holder.
  Result<std::shared_ptr<const CacheEntry>>
  getOrBuild(const std::string &keyText, const std::function<Result<CacheEntry>()> &build);

  /// The disk path of the entry for `keyText` (empty for a memory-only cache).
  std::string pathFor(const std::string &keyText) const;
  /// The lock file builders of `keyText` take (empty for a memory-only cache).
  std::string lockPathFor(const std::string &keyText) const;
  /// The lock timeout in force.
  std::chrono::milliseconds lockTimeout() const { return options_.lockTimeout; }

private:
  std::shared_ptr<const CacheEntry> remember(std::shared_ptr<const CacheEntry> entry);
  void disableDisk(const std::string &reason);

  CacheOptions options_;
  std::atomic<bool> diskWritable_;
  std::once_flag warned_;
  std::string writeError_; ///< set once, under warned_
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const CacheEntry>> memory_;
};

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_CODEOBJECTCACHE_H
