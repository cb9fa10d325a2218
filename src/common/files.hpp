#pragma once
// Crash- and race-safe file replacement for the caches: a reader (another process included) sees
// the old file or the complete new one, never a torn write.
#include <string>

namespace flexjit {

// Writes `data` to a unique temporary file next to `path`, fsyncs it and renames it over `path`.
// On failure returns false with the failed step, the file and the system's reason in `error`,
// and removes the temporary file.
bool write_file_atomically(const std::string& path, const std::string& data, std::string* error);

}  // namespace flexjit
