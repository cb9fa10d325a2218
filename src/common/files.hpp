#pragma once
// Crash- and race-safe file replacement for the caches: a reader (another process included) sees
// the old file or the complete new one, never a torn write.
#include <cstdint>
#include <string>

namespace flexjit {

// Writes `data` to a unique temporary file next to `path`, fsyncs it and renames it over `path`.
// On failure returns false with the failed step, the file and the system's reason in `error`,
// and removes the temporary file.
bool write_file_atomically(const std::string& path, const std::string& data, std::string* error);

enum class ReadStatus { ok, missing, not_regular, too_large, failed };

// Reads `path` only if it is (or links to) a regular file of at most `max_bytes` bytes. A FIFO
// would block the reader forever and a link to /dev/zero would be read until memory runs out, so
// anything else is refused without reading: `error` then names what the path is ("is a
// directory", "is a FIFO", ...) or the system's reason.
// `error_number`, when given, receives errno for ReadStatus::failed and missing (else 0).
ReadStatus read_regular_file(const std::string& path, uint64_t max_bytes, std::string* data, std::string* error,
                             int* error_number = nullptr);

// What `path` is when it is not a regular file ("is a directory", "is a FIFO", ...), or "" when it
// is one or does not exist.
std::string describe_non_regular(const std::string& path);

}  // namespace flexjit
