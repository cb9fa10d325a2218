#pragma once
// The on-disk cache of compiled kernels (format in kernel_cache.cpp's header comment).
//
// Correctness rests on two rules: an entry is only trusted when its stored key text equals the
// key text of the request byte for byte, its .json matches the checksum it records over all its
// other fields, and its files match the sizes and checksums recorded in the .json; and every file
// is written to a unique temporary name and renamed into place, the .json last. So concurrent
// writers (threads or processes) need no lock, and a torn, foreign, edited or colliding entry is
// a miss that the next compile overwrites, never a wrong kernel.
#include <optional>
#include <string>
#include <vector>

#include "jit/compiler.hpp"
#include "jit/source.hpp"

namespace flexjit::jit {

// The text a cache key is computed from: format tag, flexjit and NVRTC versions, arch, canonical
// options, kernel names, source name and text, and every header (each length-prefixed, so no two
// different inputs give the same text). `options` must be CompileOptions::canonical().
std::string kernel_key_text(const Source& source, const std::string& arch,
                            const std::vector<std::string>& options);
// XXH3-128 of the key text as 32 lowercase hex digits.
std::string kernel_key(const std::string& key_text);

// Disk lookup, else compile() and store. Sets CompiledKernel::from_disk_cache. With
// FLEXJIT_CACHE=off it only compiles. Storage problems warn once on stderr and are otherwise
// ignored; compile errors propagate.
CompiledKernel get_or_compile(const Source& source, const CompileOptions& options);

// The entry for `key` in `directory`, or nullopt when absent, damaged or not for `key_text`.
// Never throws for a bad entry.
std::optional<CompiledKernel> load_cached_kernel(const std::string& directory,
                                                 const std::string& key,
                                                 const std::string& key_text);
// Writes `kernel` (whose key is kernel_key(key_text)) into `directory`. Returns false and sets
// `error` when the directory cannot be written.
bool store_cached_kernel(const std::string& directory, const CompiledKernel& kernel,
                         const std::string& key_text, std::string* error);

// Paths of an entry's files.
std::string kernel_entry_path(const std::string& directory, const std::string& key,
                              const char* extension);

// Lets a test see the "cache not writable" warning again.
void reset_cache_warning_for_testing();
// Rewrites the sizes and checksums that the entry for `key` in `directory` records (of its files
// and of its other fields) as a writer would, so that a test can forge an edited entry that only
// the loader's sanity checks can refuse. Returns false when the entry cannot be read or written.
bool reseal_kernel_entry_for_testing(const std::string& directory, const std::string& key);

}  // namespace flexjit::jit
