//===- CodeObjectCache.cpp - build key -> code object, memory and disk ----===//
#include "monodc/runtime/CodeObjectCache.h"

#include "FileIo.h"
#include "monodc/runtime/BuildKey.h"

#include <cstdlib>
#include <iostream>

using namespace monodc::runtime;

std::string monodc::runtime::defaultCacheDirectory() {
  auto env = [](const char *name) -> std::string {
    const char *value = std::getenv(name);
    return value ? value : "";
  };
  if (std::string dir = env("MONODC_CACHE_DIR"); !dir.empty())
    return dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
    return xdg + "/monodc";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.cache/monodc";
  return ".monodc-cache";
}

CodeObjectCache::CodeObjectCache(CacheOptions options)
    : options_(std::move(options)), diskWritable_(!options_.directory.empty()) {
  if (!options_.warn)
    options_.warn = [](const std::string &line) { std::cerr << line << "\n"; };
  if (options_.lockTimeout.count() <= 0) {
    options_.lockTimeout = kDefaultLockTimeout;
    if (const char *text = std::getenv("MONODC_CACHE_LOCK_TIMEOUT"); text && *text) {
      char *end = nullptr;
      double seconds = std::strtod(text, &end);
      if (end && *end == '\0' && seconds > 0 && seconds < 1e6)
        options_.lockTimeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
      else
        options_.warn("monodc: warning: MONODC_CACHE_LOCK_TIMEOUT='" + std::string(text) +
                      "' is not a number of seconds; waiting at most " +
                      std::to_string(kDefaultLockTimeout.count()) + " s for cache locks");
    }
  }
}

std::string CodeObjectCache::pathFor(const std::string &keyText) const {
  if (options_.directory.empty())
    return {};
  return options_.directory + "/" + cacheFileNameForKeyText(keyText);
}

std::string CodeObjectCache::lockPathFor(const std::string &keyText) const {
  if (options_.directory.empty())
    return {};
  std::string entry = cacheFileNameForKeyText(keyText); // <hash>.mco
  return options_.directory + "/." + entry.substr(0, entry.size() - 4) + ".lock";
}

std::shared_ptr<const CacheEntry>
CodeObjectCache::remember(std::shared_ptr<const CacheEntry> entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A concurrent store of the same key may have won; both are equivalent.
  return memory_.emplace(entry->keyText, entry).first->second;
}

CodeObjectCache::Lookup CodeObjectCache::find(const std::string &keyText) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memory_.find(keyText); it != memory_.end())
      return {it->second, false, {}};
  }
  Lookup lookup;
  if (options_.directory.empty())
    return lookup;
  std::string path = pathFor(keyText);
  Result<std::string> bytes = fileio::readFile(path);
  if (!bytes) {
    // Decide from this read's own error: asking the file system again would
    // race with a writer renaming the entry into place meanwhile.
    if (bytes.message().rfind("missing", 0) != 0)
      lookup.refused = bytes.message();
    return lookup;
  }
  Result<CacheEntry> entry = decodeCacheEntry(*bytes);
  if (!entry) {
    lookup.refused = path + ": " + entry.message();
    return lookup;
  }
  if (entry->keyText != keyText) {
    lookup.refused = path + ": foreign entry, built for another key: " + entry->keyText;
    return lookup;
  }
  lookup.entry = remember(std::make_shared<const CacheEntry>(std::move(*entry)));
  lookup.fromDisk = true;
  return lookup;
}

std::string CodeObjectCache::writeError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writeError_;
}

void CodeObjectCache::disableDisk(const std::string &reason) {
  std::call_once(warned_, [&] {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      writeError_ = reason;
    }
    diskWritable_ = false;
    options_.warn("monodc: warning: cache directory " + options_.directory +
                  " is not writable (" + reason + "); new code objects stay in memory");
  });
}

std::shared_ptr<const CacheEntry> CodeObjectCache::store(CacheEntry entry) {
  auto shared = std::make_shared<const CacheEntry>(std::move(entry));
  if (diskWritable_) {
    Status written = fileio::makeDirectories(options_.directory);
    if (written)
      written = fileio::writeFileAtomically(options_.directory,
                                            cacheFileNameForKeyText(shared->keyText),
                                            encodeCacheEntry(*shared));
    if (!written)
      disableDisk(written.message());
  }
  // A newer build replaces what memory held (a refused entry never got there).
  std::lock_guard<std::mutex> lock(mutex_);
  memory_[shared->keyText] = shared;
  return shared;
}

Result<std::shared_ptr<const CacheEntry>>
CodeObjectCache::getOrBuild(const std::string &keyText,
                            const std::function<Result<CacheEntry>()> &build) {
  Lookup lookup = find(keyText);
  if (lookup.entry)
    return lookup.entry;
  // One builder per key across processes: take the key's lock, then look
  // again, since the holder we waited for has usually stored it meanwhile.
  fileio::FileLock lock;
  if (diskWritable_ && fileio::makeDirectories(options_.directory)) {
    std::string lockPath = lockPathFor(keyText);
    fileio::LockAttempt attempt = fileio::lockExclusive(lockPath, options_.lockTimeout);
    if (attempt.timedOut) {
      auto ms = options_.lockTimeout.count();
      std::string waited = ms % 1000 == 0 ? std::to_string(ms / 1000) + " s"
                                          : std::to_string(ms) + " ms";
      return makeError("timed out after " + waited + " waiting for cache lock " + lockPath +
                       " (held by " + (attempt.holder.empty() ? "another process" : attempt.holder) +
                       ", building key '" + keyText +
                       "'); if that build is legitimately slow, raise MONODC_CACHE_LOCK_TIMEOUT "
                       "(seconds); a holder that died would have released it");
    }
    // A lock file that cannot be made (a read-only directory): build without
    // it; store() then says in its one warning why the directory is unusable.
    if (attempt.lock.held()) {
      lock = std::move(attempt.lock);
      if (Lookup again = find(keyText); again.entry)
        return again.entry;
    }
  }
  Result<CacheEntry> built = build();
  if (!built)
    return built.error();
  if (built->keyText != keyText)
    return makeError("a build for key '" + keyText + "' returned an entry for key '" +
                     built->keyText + "'");
  return store(std::move(*built));
}
