// The on-disk kernel cache.
//
// Layout, under cache_directory():
//   kernels/<key>.cubin   the ELF image NVRTC produced
//   kernels/<key>.ptx     the PTX (so `flexjit emit` can reuse it)
//   kernels/<key>.json    the entry's description, written last:
//     { "format": "flexjit-kernel-cache-2", "key": "<32 hex>", "key_text": "<full key text>"
//       (or "key_text_hex" when the text is not UTF-8), "source_name", "kernel_names": [...],
//       "arch", "options": [...], "nvrtc_version", "flexjit_version", "created" (ISO 8601 UTC),
//       "created_unix", "compile_ms", "cubin": {"file", "bytes", "xxh3_64"},
//       "ptx": {"file", "bytes", "xxh3_64"}, "resources": {"<kernel>": {"registers", ...}},
//       "log": "<NVRTC log>", "metadata_xxh3_64": "<16 hex>" }
//   failed/               sources that failed to compile (see compiler.cpp)
//   autotune.json         autotuning results (src/tune)
// A .json present means its .cubin and .ptx were completely written before it (rename order);
// their sizes and checksums are still verified, since another writer may have replaced them.
// "metadata_xxh3_64" covers every other field of the .json (canonical_json() below): the kernel
// names pick the entry point a launch uses, so a flipped byte there must be damage, not a hit.
// Format 1 had no such checksum: its entries are recompiled (with the damage warning) and
// rewritten, since nothing vouches for the kernel names they record.
#include "jit/kernel_cache.hpp"

#include "common/files.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "flexjit/error.hpp"
#include "flexjit/kernel_cache.hpp"
#include "flexjit/version.hpp"

namespace flexjit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "flexjit-kernel-cache-2";
constexpr const char* kFormat1 = "flexjit-kernel-cache-1";  // before "metadata_xxh3_64"
constexpr const char* kMetadataChecksum = "metadata_xxh3_64";
std::atomic<bool> g_warned{false};

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string checksum(const std::string& data) { return hex64(XXH3_64bits(data.data(), data.size())); }

bool is_key(const std::string& s) {
  return s.size() == 32 && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

// Cubins of our kernels are well under 1 MB; the bound only stops a hostile or broken entry
// (a link to /dev/zero, a huge file) from being read into memory.
constexpr uint64_t kMaxEntryFileBytes = uint64_t{256} << 20;

// Reads a regular file of at most kMaxEntryFileBytes; a FIFO, device or directory is refused
// without blocking or reading. `*problem` says why when the file exists but cannot be used.
bool read_file(const fs::path& path, std::string* out, std::string* problem = nullptr) {
  std::string error;
  int error_number = 0;
  const ReadStatus status = read_regular_file(path.string(), kMaxEntryFileBytes, out, &error, &error_number);
  if (status == ReadStatus::ok) return true;
  if (!problem) return false;
  std::error_code ec;
  const std::string name = path.filename().string();
  if (status == ReadStatus::missing)
    *problem = fs::is_symlink(fs::symlink_status(path, ec)) ? name + " is a dangling symbolic link" : "";
  else if (status == ReadStatus::failed)
    // A directory that cannot be searched or read is the cache being unusable (reported when
    // the store fails), not a damaged entry.
    *problem = error_number == ENOTDIR || error_number == EACCES ? "" : name + " cannot be read: " + error;
  else
    *problem = name + " " + error;
  return false;
}

std::string to_hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = value(hex[i]), lo = value(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string iso8601_utc(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json resources_to_json(const std::map<std::string, KernelResources>& resources) {
  json out = json::object();
  for (const auto& [name, r] : resources)
    out[name] = {{"registers", r.registers},
                 {"spill_store_bytes", r.spill_store_bytes},
                 {"spill_load_bytes", r.spill_load_bytes},
                 {"stack_frame_bytes", r.stack_frame_bytes},
                 {"static_smem_bytes", r.static_smem_bytes},
                 {"barriers", r.barriers}};
  return out;
}

std::map<std::string, KernelResources> resources_from_json(const json& j) {
  std::map<std::string, KernelResources> out;
  for (const auto& [name, r] : j.items()) {
    KernelResources k;
    k.registers = r.at("registers").get<int>();
    k.spill_store_bytes = r.at("spill_store_bytes").get<int>();
    k.spill_load_bytes = r.at("spill_load_bytes").get<int>();
    k.stack_frame_bytes = r.at("stack_frame_bytes").get<int>();
    k.static_smem_bytes = r.at("static_smem_bytes").get<int>();
    k.barriers = r.at("barriers").get<int>();
    out[name] = k;
  }
  return out;
}

void append_field(std::string& out, const char* label, const std::string& value) {
  out += label;
  out += ' ';
  out += std::to_string(value.size());
  out += '\n';
  out += value;
  out += '\n';
}

// The key text up to and including the source name (the source text and headers follow). Every
// field is length-prefixed, so the head parses one way only: a key text that starts with the head
// built from an entry's recorded fields was computed from exactly those fields.
std::string key_text_head(const std::string& flexjit_version, const std::string& nvrtc_version,
                          const std::string& arch, const std::vector<std::string>& options,
                          const std::vector<std::string>& kernel_names, const std::string& source_name) {
  std::string out = "flexjit kernel key v1\n";
  append_field(out, "flexjit", flexjit_version);
  append_field(out, "nvrtc", nvrtc_version);
  append_field(out, "arch", arch);
  out += "options " + std::to_string(options.size()) + "\n";
  for (const auto& o : options) append_field(out, "option", o);
  out += "kernels " + std::to_string(kernel_names.size()) + "\n";
  for (const auto& k : kernel_names) append_field(out, "kernel", k);
  append_field(out, "source-name", source_name);
  return out;
}

// An injective encoding of a JSON value (type tag, then length-prefixed or fixed-form content),
// independent of how nlohmann::json prints numbers or escapes strings. Objects come out in key
// order (json's objects are sorted maps).
void canonical_json(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::null:
      out += "n;";
      break;
    case json::value_t::boolean:
      out += value.get<bool>() ? "t;" : "f;";
      break;
    // The parser types a non-negative integer as unsigned and a negative one as signed, whatever
    // the writer held: both encode by value.
    case json::value_t::number_integer:
      out += 'i' + std::to_string(value.get<int64_t>()) + ';';
      break;
    case json::value_t::number_unsigned:
      out += 'i' + std::to_string(value.get<uint64_t>()) + ';';
      break;
    case json::value_t::number_float: {
      const double d = value.get<double>();
      uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      out += 'd' + hex64(bits) + ';';
      break;
    }
    case json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      out += 's' + std::to_string(s.size()) + ':' + s;
      break;
    }
    case json::value_t::array:
      out += 'a' + std::to_string(value.size()) + ':';
      for (const json& item : value) canonical_json(item, out);
      break;
    case json::value_t::object:
      out += 'o' + std::to_string(value.size()) + ':';
      for (const auto& [name, item] : value.items()) {
        out += 's' + std::to_string(name.size()) + ':' + name;
        canonical_json(item, out);
      }
      break;
    default:  // binary and discarded values never come out of the parser
      out += "x;";
      break;
  }
}

// XXH3-64 of every top-level field of an entry's .json except "metadata_xxh3_64" itself. A new
// field is covered without anyone remembering to add it here.
std::string metadata_checksum(const json& j) {
  std::string out = 'o' + std::to_string(j.size() - j.count(kMetadataChecksum)) + ':';
  for (const auto& [name, item] : j.items()) {
    if (name == kMetadataChecksum) continue;
    out += 's' + std::to_string(name.size()) + ':' + name;
    canonical_json(item, out);
  }
  return checksum(out);
}

// The key text an entry records, or nullopt when its hex form does not decode.
std::optional<std::string> stored_key_text(const json& j) {
  if (j.contains("key_text")) return j.at("key_text").get<std::string>();
  return from_hex(j.at("key_text_hex").get<std::string>());
}

// Why the parsed <key>.json cannot be trusted, or "" when its own fields are sound: right format
// and key, the metadata checksum matches, the fields a load uses agree with the recorded key text,
// and every resource value is a count. Files and the requested key text are the caller's to check.
// Throws json::exception for a missing field or one of the wrong type.
std::string metadata_problem(const json& j, const std::string& key) {
  const std::string& format = j.at("format").get_ref<const std::string&>();
  if (format == kFormat1)
    return key + ".json was written by an older flexjit (format " + kFormat1 + ")";
  if (format != kFormat || j.at("key").get<std::string>() != key)
    return key + ".json has another format or key";
  if (!j.contains(kMetadataChecksum)) return key + ".json has no metadata checksum";
  if (j.at(kMetadataChecksum).get_ref<const std::string&>() != metadata_checksum(j))
    return key + ".json does not match the metadata checksum recorded in it";
  // A checksum only shows that the fields are those a writer wrote; these show that they are sane.
  const std::optional<std::string> key_text = stored_key_text(j);
  if (!key_text) return key + ".json records a key text that is not hex";
  const std::string head = key_text_head(
      j.at("flexjit_version").get<std::string>(), j.at("nvrtc_version").get<std::string>(),
      j.at("arch").get<std::string>(), j.at("options").get<std::vector<std::string>>(),
      j.at("kernel_names").get<std::vector<std::string>>(), j.at("source_name").get<std::string>());
  if (key_text->compare(0, head.size(), head) != 0)
    return key + ".json records kernel names, arch, options, source name or versions that "
                 "differ from its key text";
  for (const auto& [name, r] : j.at("resources").get_ref<const json::object_t&>()) {
    for (const char* field : {"registers", "spill_store_bytes", "spill_load_bytes",
                              "stack_frame_bytes", "static_smem_bytes", "barriers"}) {
      const json& value = r.at(field);
      if (!value.is_number_unsigned() || value.get<uint64_t>() > static_cast<uint64_t>(INT_MAX))
        return key + ".json records " + field + " = " + value.dump() + " for kernel " + name +
               ", not a count";
    }
  }
  return "";
}

// Parses one <key>.json for listing. Returns nullopt unless it is a well-formed entry named after
// its key, with sound metadata (metadata_problem()), whose .cubin and .ptx exist with the recorded
// sizes (their checksums are left to the loader: listing reads no payload).
std::optional<KernelCacheEntry> parse_entry(const fs::path& json_path, bool with_key_text) {
  std::string text;
  if (!read_file(json_path, &text)) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    KernelCacheEntry e;
    e.key = json_path.stem().string();
    if (!is_key(e.key) || !metadata_problem(j, e.key).empty()) return std::nullopt;
    e.json_path = fs::absolute(json_path).lexically_normal().string();
    e.source_name = j.at("source_name").get<std::string>();
    e.kernel_names = j.at("kernel_names").get<std::vector<std::string>>();
    e.arch = j.at("arch").get<std::string>();
    e.options = j.at("options").get<std::vector<std::string>>();
    e.nvrtc_version = j.at("nvrtc_version").get<std::string>();
    e.flexjit_version = j.at("flexjit_version").get<std::string>();
    e.created = j.at("created").get<std::string>();
    e.created_unix = j.at("created_unix").get<int64_t>();
    e.compile_ms = j.at("compile_ms").get<double>();
    e.resources = resources_from_json(j.at("resources"));
    e.cubin_bytes = j.at("cubin").at("bytes").get<uint64_t>();
    const uint64_t ptx_bytes = j.at("ptx").at("bytes").get<uint64_t>();
    std::error_code ec;
    const fs::path dir = json_path.parent_path();
    const auto cubin_size = fs::file_size(dir / (e.key + ".cubin"), ec);
    if (ec || cubin_size != e.cubin_bytes) return std::nullopt;
    const auto ptx_size = fs::file_size(dir / (e.key + ".ptx"), ec);
    if (ec || ptx_size != ptx_bytes) return std::nullopt;
    e.total_bytes = cubin_size + ptx_size + text.size();
    if (with_key_text) e.key_text = *stored_key_text(j);  // metadata_problem() decoded it
    return e;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

// ---- public API ----

std::string cache_directory() {
  if (std::string dir = env("FLEXJIT_CACHE_DIR"); !dir.empty()) return dir;
  // The XDG spec says relative values are invalid and must be ignored.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/')
    return (fs::path(xdg) / "flexjit").string();
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
  }
  if (!home.empty()) return (fs::path(home) / ".cache" / "flexjit").string();
  std::error_code ec;
  return (fs::temp_directory_path(ec) / ("flexjit-cache-" + std::to_string(::getuid()))).string();
}

bool kernel_cache_enabled() {
  std::string value = env("FLEXJIT_CACHE");
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value.empty() || value == "on" || value == "1" || value == "true" || value == "yes") return true;
  if (value == "off" || value == "0" || value == "false" || value == "no") return false;
  // A misspelt "of" must not silently keep the cache on (or off).
  throw UsageError("FLEXJIT_CACHE='" + env("FLEXJIT_CACHE") +
                   "' is not on or off (on, 1, true, yes: the disk cache; off, 0, false, no: none)");
}

KernelCacheListing list_kernel_cache(const std::string& directory) {
  KernelCacheListing listing;
  listing.directory = directory;
  const fs::path kernels = fs::path(directory) / "kernels";
  std::error_code ec;
  if (!fs::is_directory(kernels, ec)) return listing;
  std::set<std::string> files;
  for (fs::directory_iterator it(kernels, ec), end; !ec && it != end; it.increment(ec))
    files.insert(it->path().filename().string());  // directories, FIFOs ... are damage too
  if (ec) throw CacheError("cannot list " + kernels.string() + ": " + ec.message());
  std::set<std::string> claimed;
  for (const auto& name : files) {
    const fs::path path = kernels / name;
    if (path.extension() != ".json") continue;
    if (auto entry = parse_entry(path, false)) {
      for (const char* ext : {".json", ".cubin", ".ptx"}) claimed.insert(entry->key + ext);
      listing.entries.push_back(std::move(*entry));
    }
  }
  for (const auto& name : files)
    if (!claimed.count(name)) listing.damaged.push_back((kernels / name).string());
  std::sort(listing.entries.begin(), listing.entries.end(),
            [](const KernelCacheEntry& a, const KernelCacheEntry& b) {
              return a.created_unix != b.created_unix ? a.created_unix < b.created_unix
                                                      : a.key < b.key;
            });
  return listing;
}

KernelCacheEntry find_kernel_cache_entry(const std::string& key_prefix,
                                         const std::string& directory) {
  std::string prefix = key_prefix;
  std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool hex = !prefix.empty() && prefix.size() <= 32 &&
                   std::all_of(prefix.begin(), prefix.end(), [](char c) {
                     return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
                   });
  if (!hex)
    throw UsageError("'" + key_prefix +
                     "' is not a kernel cache key: give 1 to 32 hex digits of a key shown by "
                     "`flexjit cache list`");
  const KernelCacheListing listing = list_kernel_cache(directory);
  std::vector<const KernelCacheEntry*> matches;
  for (const auto& e : listing.entries)
    if (e.key.compare(0, prefix.size(), prefix) == 0) matches.push_back(&e);
  if (matches.empty())
    throw UsageError("no kernel cache entry with key '" + key_prefix + "' in " +
                     (fs::path(directory) / "kernels").string() +
                     " (`flexjit cache list` shows the keys)");
  if (matches.size() > 1) {
    std::string message = "key prefix '" + key_prefix + "' is ambiguous: it matches " +
                          std::to_string(matches.size()) + " entries:";
    for (const auto* e : matches) {
      message += "\n  " + e->key + "  ";
      for (size_t i = 0; i < e->kernel_names.size(); ++i)
        message += (i ? "," : "") + e->kernel_names[i];
      message += "  " + e->arch;
    }
    message += "\ngive more digits of the key";
    throw UsageError(message);
  }
  auto full = parse_entry(matches.front()->json_path, true);
  if (!full)  // replaced or removed since it was listed
    throw CacheError("kernel cache entry " + matches.front()->json_path +
                     " changed while it was being read; try again");
  return *full;
}

CacheClearReport clear_cache(bool dry_run, const std::string& directory) {
  // autotune.json belongs to the autotune cache (clear_autotune_cache in flexjit/autotune.hpp).
  CacheClearReport report;
  report.directory = directory;
  std::error_code ec;
  std::vector<fs::path> doomed;
  std::set<std::string> keys;
  const fs::path kernels = fs::path(directory) / "kernels";
  if (fs::is_directory(kernels, ec)) {
    // Everything in kernels/ goes, a directory or FIFO in an entry's place included.
    for (fs::directory_iterator it(kernels, ec), end; !ec && it != end; it.increment(ec)) {
      doomed.push_back(it->path());
      const std::string stem = it->path().stem().string();
      if (is_key(stem)) keys.insert(stem);
    }
    if (ec) throw CacheError("cannot list " + kernels.string() + ": " + ec.message());
  }
  report.kernel_entries = keys.size();
  for (const char* sub : {"failed", "damaged"}) {
    const fs::path dir = fs::path(directory) / sub;
    if (!fs::is_directory(dir, ec)) continue;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_directory(ec)) continue;
      doomed.push_back(it->path());
      if (sub == std::string("failed")) ++report.failed_dumps;
    }
    if (ec) throw CacheError("cannot list " + dir.string() + ": " + ec.message());
  }
  // Check before deleting anything: a clear that fails half-way leaves a cache nobody asked for.
  for (const auto& path : doomed) {
    if (::access(path.parent_path().c_str(), W_OK | X_OK) != 0)
      throw CacheError("cannot remove " + path.string() + ": " + path.parent_path().string() +
                       " is not writable (" + std::strerror(errno) + "); nothing was removed");
  }
  for (const auto& path : doomed) {
    std::error_code size_ec;
    const auto size = fs::is_regular_file(fs::symlink_status(path, size_ec))
                          ? fs::file_size(path, size_ec)
                          : 0;
    if (!size_ec) report.bytes += size;
    report.paths.push_back(path.string());
  }
  std::sort(report.paths.begin(), report.paths.end());
  if (dry_run) return report;
  for (const auto& path : doomed) {
    // Another process may have removed it (or renamed over it) meanwhile: that is fine.
    const bool is_dir = fs::is_directory(fs::symlink_status(path, ec));
    if (is_dir) fs::remove_all(path, ec);
    else fs::remove(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw CacheError("cannot remove " + path.string() + ": " + ec.message());
  }
  for (const char* sub : {"failed", "damaged"})
    if (fs::is_directory(fs::path(directory) / sub, ec)) fs::remove_all(fs::path(directory) / sub, ec);
  return report;
}

}  // namespace flexjit

namespace flexjit::jit {
namespace {

void warn_once(const std::string& message) {
  if (g_warned.exchange(true)) return;
  std::fprintf(stderr, "flexjit: warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

std::string kernel_key_text(const Source& source, const std::string& arch,
                            const std::vector<std::string>& options) {
  std::string out = key_text_head(FLEXJIT_VERSION_STRING, nvrtc_version_string(), arch, options,
                                  source.kernel_names, source.name);
  append_field(out, "source", source.text);
  out += "headers " + std::to_string(source.headers.size()) + "\n";
  for (const auto& [name, text] : source.headers) {
    append_field(out, "header-name", name);
    append_field(out, "header", text);
  }
  return out;
}

std::string kernel_key(const std::string& key_text) {
  const XXH128_hash_t h = XXH3_128bits(key_text.data(), key_text.size());
  return hex64(h.high64) + hex64(h.low64);
}

std::string kernel_entry_path(const std::string& directory, const std::string& key,
                              const char* extension) {
  return (fs::path(directory) / "kernels" / (key + extension)).string();
}

namespace {

// Loads the entry, or says in `*damage` why an entry that is there cannot be used ("" when there
// is no entry: a plain miss).
std::optional<CompiledKernel> load_entry(const std::string& directory, const std::string& key,
                                         const std::string& key_text, std::string* damage) {
  damage->clear();
  std::string text;
  if (!read_file(kernel_entry_path(directory, key, ".json"), &text, damage)) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    *damage = key + ".json is not a JSON object";
    return std::nullopt;
  }
  try {
    *damage = metadata_problem(j, key);
    if (!damage->empty()) return std::nullopt;
    // The full text, not the hash, decides: a collision or a foreign file is a miss.
    if (*stored_key_text(j) != key_text) {  // metadata_problem() decoded it
      *damage = key + ".json records a different key text";
      return std::nullopt;
    }
    CompiledKernel out;
    for (const char* part : {"cubin", "ptx"}) {
      const json& meta = j.at(part);
      std::string data;
      const std::string file = key + (part == std::string("cubin") ? ".cubin" : ".ptx");
      if (!read_file(fs::path(directory) / "kernels" / file, &data, damage)) {
        if (damage->empty()) *damage = file + " is missing";
        return std::nullopt;
      }
      if (data.size() != meta.at("bytes").get<uint64_t>() ||
          checksum(data) != meta.at("xxh3_64").get<std::string>()) {
        *damage = file + " does not match the size and checksum recorded in " + key + ".json";
        return std::nullopt;
      }
      (part == std::string("cubin") ? out.cubin : out.ptx) = std::move(data);
    }
    if (out.cubin.size() < 4 || out.cubin.compare(0, 4, "\x7f" "ELF") != 0) {
      *damage = key + ".cubin is not an ELF image";
      return std::nullopt;
    }
    out.key = key;
    out.source_name = j.at("source_name").get<std::string>();
    out.kernel_names = j.at("kernel_names").get<std::vector<std::string>>();
    // compile() refuses a module without every entry point; a launch looks them up by name.
    for (const auto& name : out.kernel_names) {
      if (out.ptx.find(".entry " + name + "(") == std::string::npos) {
        *damage = key + ".ptx has no entry point " + name + " (listed in " + key + ".json)";
        return std::nullopt;
      }
    }
    out.arch = j.at("arch").get<std::string>();
    out.options = j.at("options").get<std::vector<std::string>>();
    out.log = j.at("log").get<std::string>();
    out.resources = resources_from_json(j.at("resources"));
    out.compile_ms = j.at("compile_ms").get<double>();
    out.from_disk_cache = true;
    return out;
  } catch (const json::exception&) {
    *damage = key + ".json lacks a field or has one of the wrong type";
    return std::nullopt;
  }
}

// An entry's file that is a directory cannot be renamed over, so the store would fail and the
// entry would be recompiled in every process: move it into <directory>/damaged/ first (a FIFO
// or link is simply replaced by the rename of the store). Returns where it went, or "".
std::string move_aside_directories(const std::string& directory, const std::string& key) {
  std::string moved;
  for (const char* ext : {".json", ".cubin", ".ptx"}) {
    const fs::path path = kernel_entry_path(directory, key, ext);
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(path, ec))) continue;
    const fs::path aside_dir = fs::path(directory) / "damaged";
    fs::create_directories(aside_dir, ec);
    const fs::path aside = aside_dir / (path.filename().string() + "." + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::time(nullptr)));
    if (::rename(path.c_str(), aside.c_str()) == 0) moved += (moved.empty() ? "" : ", ") + aside.string();
  }
  return moved;
}

}  // namespace

std::optional<CompiledKernel> load_cached_kernel(const std::string& directory,
                                                 const std::string& key,
                                                 const std::string& key_text) {
  std::string damage;
  return load_entry(directory, key, key_text, &damage);
}

bool store_cached_kernel(const std::string& directory, const CompiledKernel& kernel,
                         const std::string& key_text, std::string* error) {
  const fs::path kernels = fs::path(directory) / "kernels";
  std::error_code ec;
  fs::create_directories(kernels, ec);
  if (ec) {
    *error = "cannot create " + kernels.string() + ": " + ec.message();
    return false;
  }
  const std::time_t now = std::time(nullptr);
  json j = {{"format", kFormat},
            {"key", kernel.key},
            {"source_name", kernel.source_name},
            {"kernel_names", kernel.kernel_names},
            {"arch", kernel.arch},
            {"options", kernel.options},
            {"nvrtc_version", nvrtc_version_string()},
            {"flexjit_version", FLEXJIT_VERSION_STRING},
            {"created", iso8601_utc(now)},
            {"created_unix", static_cast<int64_t>(now)},
            {"compile_ms", kernel.compile_ms},
            {"cubin",
             {{"file", kernel.key + ".cubin"},
              {"bytes", kernel.cubin.size()},
              {"xxh3_64", checksum(kernel.cubin)}}},
            {"ptx",
             {{"file", kernel.key + ".ptx"},
              {"bytes", kernel.ptx.size()},
              {"xxh3_64", checksum(kernel.ptx)}}},
            {"resources", resources_to_json(kernel.resources)},
            {"log", kernel.log}};
  // JSON strings must be UTF-8; a key text that is not is stored as hex so it still round-trips
  // byte for byte.
  try {
    (void)json(key_text).dump();
    j["key_text"] = key_text;
  } catch (const json::type_error&) {
    j["key_text_hex"] = to_hex(key_text);
  }
  // The checksum must cover what a reader will parse, and printing changes some values (bytes of
  // the log that are not UTF-8 become U+FFFD, a NaN becomes null): so checksum the re-parsed text.
  json stored = json::parse(j.dump(-1, ' ', false, json::error_handler_t::replace));
  stored[kMetadataChecksum] = metadata_checksum(stored);
  const std::string text = stored.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  const bool ok = write_file_atomically((kernels / (kernel.key + ".cubin")).string(), kernel.cubin, error) &&
                  write_file_atomically((kernels / (kernel.key + ".ptx")).string(), kernel.ptx, error) &&
                  write_file_atomically((kernels / (kernel.key + ".json")).string(), text, error);
  if (ok) sync_directory(kernels);
  return ok;
}

CompiledKernel get_or_compile(const Source& source, const CompileOptions& options) {
  const std::vector<std::string> canonical = options.canonical();
  const std::string key_text = kernel_key_text(source, options.arch, canonical);
  const std::string key = kernel_key(key_text);
  const bool enabled = kernel_cache_enabled();
  const std::string directory = enabled ? cache_directory() : std::string();
  std::string damage;
  if (enabled) {
    if (auto hit = load_entry(directory, key, key_text, &damage)) return std::move(*hit);
  }
  CompiledKernel compiled = compile(source, options);
  if (enabled) {
    std::string moved;
    if (!damage.empty()) moved = move_aside_directories(directory, key);
    std::string error;
    const bool stored = store_cached_kernel(directory, compiled, key_text, &error);
    // A repair is never silent: one line per damaged entry, naming it and what was done.
    if (!damage.empty())
      std::fprintf(stderr, "flexjit: warning: kernel cache entry %s was damaged (%s); recompiled it%s%s\n",
                   kernel_entry_path(directory, key, ".json").c_str(), damage.c_str(),
                   stored ? " and rewrote the entry" : "",
                   moved.empty() ? "" : ("; moved the directory in its place to " + moved).c_str());
    if (!stored)
      warn_once("kernel cache directory '" + directory + "' is not usable (" + error +
                "); continuing without the disk cache, so kernels are recompiled in every "
                "process. Set FLEXJIT_CACHE_DIR to a writable directory, or FLEXJIT_CACHE=off to "
                "silence this warning.");
  }
  return compiled;
}

void reset_cache_warning_for_testing() { g_warned = false; }

bool reseal_kernel_entry_for_testing(const std::string& directory, const std::string& key) {
  const std::string path = kernel_entry_path(directory, key, ".json");
  std::string text;
  if (!read_file(path, &text)) return false;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return false;
  for (const char* ext : {"cubin", "ptx"}) {
    std::string data;
    const std::string extension = std::string(".") + ext;
    if (!read_file(kernel_entry_path(directory, key, extension.c_str()), &data)) return false;
    j[ext]["bytes"] = data.size();
    j[ext]["xxh3_64"] = checksum(data);
  }
  j[kMetadataChecksum] = metadata_checksum(j);
  std::string error;
  return write_file_atomically(path, j.dump(1, ' ', false, json::error_handler_t::replace) + "\n",
                               &error);
}

}  // namespace flexjit::jit
