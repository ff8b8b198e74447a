//===- CacheDirectory.cpp - what a cache directory holds ------------------===//
#include "monodc/runtime/CacheDirectory.h"

#include "FileIo.h"
#include "monodc/runtime/BuildKey.h"
#include "monodc/runtime/CacheEntry.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace monodc::runtime;

namespace {

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isEntryName(const std::string &name) { return name[0] != '.' && endsWith(name, ".mco"); }

/// `.<entry name>.XXXXXX`, left behind by a writer that died before its rename.
bool isTemporaryName(const std::string &name) {
  return name[0] == '.' && name.find(".mco.") != std::string::npos;
}

/// `.<hash>.lock`: a key's build lock (CodeObjectCache::lockPathFor()).
bool isLockName(const std::string &name) {
  return name.size() == 1 + 32 + 5 && name[0] == '.' && endsWith(name, ".lock");
}

/// The names in `directory` that `keep` accepts, sorted; none if it is missing.
Result<std::vector<std::string>> namesIn(const std::string &directory,
                                         bool (*keep)(const std::string &)) {
  std::vector<std::string> names;
  DIR *dir = ::opendir(directory.c_str());
  if (!dir) {
    if (errno == ENOENT)
      return names;
    return makeError("cannot read cache directory " + directory + ": " + std::strerror(errno));
  }
  while (struct dirent *item = ::readdir(dir)) {
    std::string name = item->d_name;
    if (name != "." && name != ".." && keep(name))
      names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool isEntryOrTemporary(const std::string &name) {
  return isEntryName(name) || isTemporaryName(name);
}

CacheFile inspectFile(const std::string &directory, const std::string &name, bool verify) {
  CacheFile file;
  file.fileName = name;
  std::string path = directory + "/" + name;
  size_t fileBytes = 0;
  // The header and any real key fit in 4 KiB; a verify reads everything.
  Result<std::string> bytes = verify ? fileio::readFile(path)
                                     : fileio::readPrefix(path, 4096, fileBytes);
  if (!bytes) {
    file.problem = bytes.message();
    return file;
  }
  file.bytes = verify ? bytes->size() : fileBytes;
  Result<std::string> key = peekCacheEntryKey(*bytes, file.bytes);
  if (!key) {
    file.problem = key.message();
    return file;
  }
  file.keyText = *key;
  if (verify) {
    if (Result<CacheEntry> entry = decodeCacheEntry(*bytes); !entry) {
      file.problem = entry.message();
      return file;
    }
  }
  if (cacheFileNameForKeyText(file.keyText) != name)
    file.problem = "foreign entry: its key hashes to " + cacheFileNameForKeyText(file.keyText);
  return file;
}

} // namespace

Result<std::vector<CacheFile>> monodc::runtime::listCacheFiles(const std::string &directory,
                                                               bool verify) {
  Result<std::vector<std::string>> names = namesIn(directory, isEntryName);
  if (!names)
    return names.error();
  std::vector<CacheFile> files;
  for (const std::string &name : *names)
    files.push_back(inspectFile(directory, name, verify));
  return files;
}

Result<ClearedFiles> monodc::runtime::clearCacheFiles(const std::string &directory) {
  Result<std::vector<std::string>> names = namesIn(directory, isEntryOrTemporary);
  if (!names)
    return names.error();
  ClearedFiles cleared;
  // Lock files go too, except those a builder holds now (removing one of
  // those would let a second builder in); they are not counted as entries.
  if (Result<std::vector<std::string>> locks = namesIn(directory, isLockName); locks)
    for (const std::string &name : *locks)
      (void)fileio::removeLockFileIfFree(directory + "/" + name);
  for (const std::string &name : *names) {
    std::string path = directory + "/" + name;
    struct stat info;
    uint64_t bytes = ::stat(path.c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
    if (::unlink(path.c_str()) != 0) {
      if (errno == ENOENT)
        continue;  // another process removed or replaced it meanwhile
      return makeError("cannot remove " + path + ": " + std::strerror(errno));
    }
    ++cleared.files;
    cleared.bytes += bytes;
  }
  return cleared;
}
