//===- FileIo.h - the few file operations the cache needs -------*- C++ -*-===//
#ifndef MONODC_RUNTIME_CACHE_FILEIO_H
#define MONODC_RUNTIME_CACHE_FILEIO_H

#include "monodc/runtime/Result.h"

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
Status writeFileAtomically(const std::string &directory, const std::string &name,
                           const std::vector<char> &bytes);


} // namespace monodc::runtime::fileio

#endif // MONODC_RUNTIME_CACHE_FILEIO_H
