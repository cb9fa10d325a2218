// The autotune cache file, `<cache dir>/autotune.json`:
//   { "format": "flexjit-autotune-1",
//     "entries": {
//       "<key text, AutotuneKey::canonical()>": {
//         "winner": "m128n64w4s2", "winner_ms": 0.412,
//         "default": "m128n32w4s2", "default_ms": 0.455,      (null when the default did not run)
//         "mode": "on",                                         (the space searched: "on" or "max")
//         "candidates": [ {"config": "m128n32w4s2", "ms": 0.455},
//                         {"config": "m128n128w8s2", "error": "first line of the failure"} ],
//         "created": "2025-01-31T12:00:00Z", "created_unix": 1738324800,
//         "flexjit_version": "0.1.0" } } }
// Every field is required and type-checked on load; one malformed entry makes the whole file
// damaged (it is moved aside, never partly trusted). Locking and memoisation: autotune_cache.hpp.
#include "tune/autotune_cache.hpp"

#include "common/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"
#include "flexjit/version.hpp"
#include "jit/compiler.hpp"

namespace flexjit {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

AutotuneMode parse_autotune_mode(const std::string& text, const std::string& what) {
  const std::string value = lower(text);
  if (value == "off") return AutotuneMode::off;
  if (value == "on") return AutotuneMode::on;
  if (value == "max") return AutotuneMode::max;
  throw UsageError(what + "='" + text +
                   "' is not an autotune mode: use off (built-in defaults, no tuning), on (tune a small set of "
                   "configs; the default) or max (tune every config that fits)");
}

AutotuneMode autotune_mode() {
  const char* value = std::getenv("FLEXJIT_AUTOTUNE");
  if (value == nullptr || *value == '\0') return AutotuneMode::on;
  return parse_autotune_mode(value);
}

const char* autotune_mode_name(AutotuneMode mode) noexcept {
  switch (mode) {
    case AutotuneMode::off: return "off";
    case AutotuneMode::on: return "on";
    case AutotuneMode::max: return "max";
  }
  return "?";
}

std::string autotune_cache_path(const std::string& directory) {
  return (std::filesystem::path(directory) / "autotune.json").string();
}

namespace tune {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- key text ----

std::string escape_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == ';' || c == '=') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

// ---- file format ----

// A reason the file cannot be used.
struct Damage {
  std::string reason;
};

BlockConfig config_field(const json& j, const std::string& entry_key, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string())
    throw Damage{"entry '" + entry_key + "': \"" + field + "\" is missing or not a string"};
  try {
    return BlockConfig::parse(it->get<std::string>());
  } catch (const UsageError&) {
    throw Damage{"entry '" + entry_key + "': \"" + field + "\" is not a block config ('" + it->get<std::string>() +
                 "')"};
  }
}

double ms_field(const json& j, const std::string& entry_key, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
    throw Damage{"entry '" + entry_key + "': \"" + field + "\" is missing or not a non-negative number"};
  return it->get<double>();
}

std::string string_field(const json& j, const std::string& entry_key, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string())
    throw Damage{"entry '" + entry_key + "': \"" + field + "\" is missing or not a string"};
  return it->get<std::string>();
}

AutotuneEntry entry_from_json(const std::string& key, const json& j) {
  if (!j.is_object()) throw Damage{"entry '" + key + "' is not an object"};
  AutotuneEntry e;
  e.winner = config_field(j, key, "winner");
  e.winner_ms = ms_field(j, key, "winner_ms");
  e.default_config = config_field(j, key, "default");
  if (auto it = j.find("default_ms"); it == j.end() || !it->is_null()) e.default_ms = ms_field(j, key, "default_ms");
  const std::string mode = string_field(j, key, "mode");
  if (mode == "on") {
    e.mode = AutotuneMode::on;
  } else if (mode == "max") {
    e.mode = AutotuneMode::max;
  } else {
    throw Damage{"entry '" + key + "': \"mode\" is '" + mode + "', expected 'on' or 'max'"};
  }
  auto candidates = j.find("candidates");
  if (candidates == j.end() || !candidates->is_array())
    throw Damage{"entry '" + key + "': \"candidates\" is missing or not an array"};
  for (const json& c : *candidates) {
    if (!c.is_object()) throw Damage{"entry '" + key + "': a candidate is not an object"};
    MeasuredConfig m;
    m.config = config_field(c, key, "config");
    if (c.contains("ms")) {
      m.ms = ms_field(c, key, "ms");
    } else {
      m.error = string_field(c, key, "error");
    }
    e.candidates.push_back(std::move(m));
  }
  e.created = string_field(j, key, "created");
  auto created_unix = j.find("created_unix");
  if (created_unix == j.end() || !created_unix->is_number_integer())
    throw Damage{"entry '" + key + "': \"created_unix\" is missing or not an integer"};
  e.created_unix = created_unix->get<int64_t>();
  e.flexjit_version = string_field(j, key, "flexjit_version");
  return e;
}

json entry_to_json(const AutotuneEntry& e) {
  json candidates = json::array();
  for (const MeasuredConfig& m : e.candidates) {
    json c = {{"config", m.config.str()}};
    if (m.ms) {
      c["ms"] = *m.ms;
    } else {
      c["error"] = m.error;
    }
    candidates.push_back(std::move(c));
  }
  return {{"winner", e.winner.str()},
          {"winner_ms", e.winner_ms},
          {"default", e.default_config.str()},
          {"default_ms", e.default_ms ? json(*e.default_ms) : json(nullptr)},
          {"mode", autotune_mode_name(e.mode)},
          {"candidates", std::move(candidates)},
          {"created", e.created},
          {"created_unix", e.created_unix},
          {"flexjit_version", e.flexjit_version}};
}

using Entries = std::map<std::string, AutotuneEntry>;

// The entries of a file's text; throws Damage.
Entries parse_file(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Damage{"not valid JSON"};
  if (!j.is_object()) throw Damage{"not a JSON object"};
  auto format = j.find("format");
  if (format == j.end() || !format->is_string()) throw Damage{"no \"format\" tag"};
  if (format->get<std::string>() != kAutotuneFormat)
    throw Damage{"format is '" + format->get<std::string>() + "', expected '" + kAutotuneFormat + "'"};
  auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_object()) throw Damage{"\"entries\" is missing or not an object"};
  Entries out;
  for (const auto& [key, value] : entries->items()) out.emplace(key, entry_from_json(key, value));
  return out;
}

std::string serialize(const Entries& entries) {
  json all = json::object();
  for (const auto& [key, entry] : entries) all[key] = entry_to_json(entry);
  const json file = {{"format", kAutotuneFormat}, {"entries", std::move(all)}};
  return file.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

// ---- files ----

struct FileStamp {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp& o) const {
    return exists == o.exists && device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
  }
};

FileStamp stamp_of(const struct stat& st) {
  FileStamp s;
  s.exists = true;
  s.device = st.st_dev;
  s.inode = st.st_ino;
  s.size = st.st_size;
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

FileStamp stat_path(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  return stamp_of(st);
}

// Reads the whole file; its stamp is taken from the open descriptor, so text and stamp belong to
// the same file even when another process renames a new one into place meanwhile. False when it
// does not exist or cannot be read (*error says why, "" when it does not exist).
bool read_file(const std::string& path, std::string* text, FileStamp* stamp, std::string* error) {
  error->clear();
  // O_NONBLOCK and the S_ISREG test below: a FIFO in the file's place must not block us, nor a
  // link to a device be read without end.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno != ENOENT) *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = "cannot stat " + path + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  constexpr off_t kMaxBytes = off_t{64} << 20;
  if (!S_ISREG(st.st_mode) || st.st_size > kMaxBytes) {
    const std::string kind = describe_non_regular(path);
    *error = path + (S_ISREG(st.st_mode) ? " is larger than 64 MiB" : kind.empty() ? " is not a regular file" : " " + kind);
    ::close(fd);
    return false;
  }
  *stamp = stamp_of(st);
  text->clear();
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    text->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string utc_time(std::time_t t, const char* format) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}


void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// An exclusive flock() on `<path>.lock`, released by the destructor.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    const std::string lock_path = path + ".lock";
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      error_ = "cannot open " + lock_path + ": " + std::strerror(errno);
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      error_ = "cannot lock " + lock_path + ": " + std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

void warn(const std::string& message) {
  std::fprintf(stderr, "flexjit: warning: %s\n", message.c_str());
  std::fflush(stderr);
}

// ---- process-wide state ----

struct PathState {
  bool loaded = false;
  FileStamp stamp;     // of the file `disk` was read from
  Entries disk;        // the file's entries as last read or written
  Entries memory_only; // stored while the file could not be written
};

std::mutex g_mutex;
std::map<std::string, PathState> g_states;  // by file path; "" holds FLEXJIT_CACHE=off entries
std::atomic<bool> g_write_warned{false};

// Called with the lock held and the file's text parsed as damaged: moves it aside and warns.
void move_aside(const std::string& path, const std::string& reason) {
  const std::string base = path + ".damaged-" + utc_time(std::time(nullptr), "%Y%m%dT%H%M%SZ");
  std::string aside = base;
  for (int i = 2; fs::exists(fs::symlink_status(aside)); ++i) aside = base + "-" + std::to_string(i);
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    warn("autotune cache '" + path + "' is damaged (" + reason + "); ignoring it (cannot move it aside: " +
         std::strerror(errno) + ")");
    return;
  }
  warn("autotune cache '" + path + "' is damaged (" + reason + "); moved it to '" + aside +
       "' and starting a fresh one");
}

// The file's entries, read under the caller's FileLock; a damaged file is moved aside (then the
// result is empty).
Entries read_locked(const std::string& path) {
  std::string text, error;
  FileStamp stamp;
  if (!read_file(path, &text, &stamp, &error)) return {};
  try {
    return parse_file(text);
  } catch (const Damage& d) {
    move_aside(path, d.reason);
    return {};
  }
}

// Brings `state` up to date with the file (g_mutex held).
void refresh(PathState& state, const std::string& path) {
  const FileStamp now = stat_path(path);
  if (state.loaded && now == state.stamp) return;
  std::string text, error;
  FileStamp stamp;
  if (!read_file(path, &text, &stamp, &error)) {
    // Absent (or unreadable: then there is nothing to use either; store() reports problems).
    state.disk.clear();
    state.stamp = FileStamp{};
    state.loaded = error.empty();
    return;
  }
  try {
    state.disk = parse_file(text);
    state.stamp = stamp;
    state.loaded = true;
    return;
  } catch (const Damage&) {
  }
  // Damaged: decide again under the writers' lock, since a writer may have just replaced it.
  FileLock lock(path);
  if (!lock.locked()) {
    try {
      parse_file(text);
    } catch (const Damage& d) {
      warn("autotune cache '" + path + "' is damaged (" + d.reason + "); ignoring it (" + lock.error() + ")");
    }
    state.disk.clear();
    state.stamp = stamp;  // do not warn again until the file changes
    state.loaded = true;
    return;
  }
  state.disk = read_locked(path);
  state.stamp = stat_path(path);
  state.loaded = true;
}

std::optional<AutotuneEntry> find(const Entries& entries, const std::string& key) {
  auto it = entries.find(key);
  if (it == entries.end()) return std::nullopt;
  return it->second;
}

}  // namespace

// ---- keys ----

std::string AutotuneKey::canonical() const {
  std::string out;
  auto field = [&](const char* name, const std::string& value) {
    if (!out.empty()) out += ';';
    out += name;
    out += '=';
    out += escape_value(value);
  };
  auto number = [&](const char* name, long long value) { field(name, std::to_string(value)); };
  auto flag = [&](const char* name, bool value) { field(name, value ? "1" : "0"); };
  field("device", device_name);
  number("sms", sm_count);
  field("cc", std::to_string(cc_major) + "." + std::to_string(cc_minor));
  number("driver", driver_version);
  field("nvrtc", nvrtc_version);
  field("flexjit", flexjit_version);
  field("arch", arch);
  field("family", family);
  field("dtype", dtype);
  number("d", head_dim);
  number("dv", head_dim_v);
  number("gqa", gqa_group);
  field("mods", mods_hash);
  flag("block_mask", has_block_mask);
  flag("full_blocks", has_full_blocks);
  field("sparse", std::to_string(sparse_q_block) + "x" + std::to_string(sparse_kv_block));
  flag("divisible", is_divisible);
  flag("safe_rows", rows_guaranteed_safe);
  number("q", q_len_bucket);
  number("kv", kv_len_bucket);
  number("bh", batch_heads_bucket);
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_key_text(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string name, value;
  bool in_value = false;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ';') {
      if (!in_value || name.empty()) return {};
      out.emplace_back(std::move(name), std::move(value));
      name.clear(), value.clear();
      in_value = false;
      continue;
    }
    char c = text[i];
    if (c == '\\') {
      if (i + 1 == text.size()) return {};
      c = text[++i];
      (in_value ? value : name) += c;
    } else if (c == '=' && !in_value) {
      in_value = true;
    } else {
      (in_value ? value : name) += c;
    }
  }
  return out;
}

int64_t shape_bucket(int64_t n) {
  int64_t bucket = 1;
  while (bucket < n) bucket <<= 1;
  return bucket;
}

std::string mods_hash(const codegen::KernelSpec& spec) {
  const std::string text = "score_mod " + spec.score_mod.canonical() + "\nmask_mod " + spec.mask_mod.canonical() +
                           "\ndeclarations\n" + emit_mod_args_struct(spec.declarations);
  return hex64(XXH3_64bits(text.data(), text.size()));
}

AutotuneKey make_autotune_key(const codegen::KernelSpec& base, const std::string& arch, const DeviceInfo& device,
                              int64_t batch_heads, int64_t q_len, int64_t kv_len) {
  AutotuneKey key;
  key.device_name = device.name;
  key.sm_count = device.sm_count;
  key.cc_major = device.cc_major;
  key.cc_minor = device.cc_minor;
  key.driver_version = device.driver_version;
  key.nvrtc_version = jit::nvrtc_version_string();
  key.flexjit_version = FLEXJIT_VERSION_STRING;
  key.arch = arch;
  // The fast backward's dK/dV kernel also computes dQ: tuned apart from the two-kernel deterministic
  // one, and its ordered form (which waits for its turns) apart from both.
  key.family = std::string(codegen::family_name(base.family)) + (base.dq_accumulate ? "+dq" : "") +
               (base.dq_ordered ? "+ordered" : "");
  key.dtype = std::string(dtype_name(base.dtype));
  key.head_dim = base.memory_head_dim();  // the tensors' (the tiles' follow from them)
  key.head_dim_v = base.memory_head_dim_v();
  key.gqa_group = base.gqa_group;
  key.mods_hash = mods_hash(base);
  key.has_block_mask = base.has_block_mask;
  key.has_full_blocks = base.has_full_blocks;
  key.sparse_q_block = base.has_block_mask ? base.sparse_q_block : 0;
  key.sparse_kv_block = base.has_block_mask ? base.sparse_kv_block : 0;
  key.is_divisible = q_len % 128 == 0 && kv_len % 128 == 0;
  key.rows_guaranteed_safe = base.rows_guaranteed_safe;
  key.q_len_bucket = shape_bucket(q_len);
  key.kv_len_bucket = shape_bucket(kv_len);
  key.batch_heads_bucket = shape_bucket(batch_heads);
  return key;
}

// ---- the cache ----

AutotuneCache::AutotuneCache(std::string directory, bool enabled)
    : directory_(std::move(directory)), enabled_(enabled) {}

std::string AutotuneCache::path() const { return autotune_cache_path(directory_); }

std::optional<AutotuneEntry> AutotuneCache::lookup(const AutotuneKey& key) const {
  const std::string text = key.canonical();
  std::lock_guard<std::mutex> guard(g_mutex);
  if (!enabled_) return find(g_states[""].memory_only, text);
  const std::string file = path();
  PathState& state = g_states[file];
  if (auto hit = find(state.memory_only, text)) return hit;
  refresh(state, file);
  return find(state.disk, text);
}

std::map<std::string, AutotuneEntry> AutotuneCache::entries() const {
  std::lock_guard<std::mutex> guard(g_mutex);
  if (!enabled_) return g_states[""].memory_only;
  const std::string file = path();
  PathState& state = g_states[file];
  refresh(state, file);
  Entries out = state.disk;
  for (const auto& [key, entry] : state.memory_only) out[key] = entry;
  return out;
}

bool AutotuneCache::store(const AutotuneKey& key, const AutotuneEntry& entry) const {
  AutotuneEntry e = entry;
  if (e.created_unix == 0) e.created_unix = static_cast<int64_t>(std::time(nullptr));
  if (e.created.empty()) e.created = utc_time(static_cast<std::time_t>(e.created_unix), "%Y-%m-%dT%H:%M:%SZ");
  if (e.flexjit_version.empty()) e.flexjit_version = FLEXJIT_VERSION_STRING;
  const std::string text = key.canonical();
  std::lock_guard<std::mutex> guard(g_mutex);
  if (!enabled_) {
    g_states[""].memory_only[text] = std::move(e);
    return true;
  }
  const std::string file = path();
  PathState& state = g_states[file];
  std::string error;
  bool ok = true;
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) {
    ok = false;
    error = "cannot create " + directory_ + ": " + ec.message();
  }
  if (ok) {
    FileLock lock(file);
    if (!lock.locked()) {
      ok = false;
      error = lock.error();
    } else {
      Entries merged = read_locked(file);
      merged[text] = e;
      ok = write_file_atomically(file, serialize(merged), &error);
      if (ok) {
        sync_directory(directory_);
        state.disk = std::move(merged);
        state.stamp = stat_path(file);
        state.loaded = true;
        state.memory_only.erase(text);
      }
    }
  }
  if (!ok) {
    state.memory_only[text] = std::move(e);
    if (!g_write_warned.exchange(true))
      warn("cannot write the autotune cache '" + file + "' (" + error +
           "); tuning results are kept in this process only. Set FLEXJIT_CACHE_DIR to a writable directory, or "
           "FLEXJIT_CACHE=off to silence this warning.");
  }
  return ok;
}

void reset_autotune_cache_state_for_testing() {
  std::lock_guard<std::mutex> guard(g_mutex);
  g_states.clear();
  g_write_warned = false;
}

}  // namespace tune

// ---- clearing ----

AutotuneClearReport clear_autotune_cache(bool dry_run, const std::string& directory) {
  namespace fs = std::filesystem;
  AutotuneClearReport report;
  report.path = autotune_cache_path(directory);
  std::error_code ec;
  std::vector<fs::path> doomed;
  const fs::path file(report.path);
  if (fs::exists(fs::symlink_status(file, ec))) doomed.push_back(file);
  // Copies of damaged files moved aside (move_aside above); the lock file is left to its holders.
  if (fs::is_directory(file.parent_path(), ec))
    for (fs::directory_iterator it(file.parent_path(), ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind(file.filename().string() + ".damaged-", 0) == 0)
        doomed.push_back(it->path());
  // Check first, then delete: nothing is removed when one of them cannot be.
  if (!doomed.empty() && ::access(file.parent_path().c_str(), W_OK | X_OK) != 0)
    throw CacheError("cannot remove " + report.path + ": " + file.parent_path().string() + " is not writable (" +
                     std::strerror(errno) + "); nothing was removed");
  for (const auto& path : doomed) {
    std::error_code size_ec;
    if (fs::is_regular_file(fs::symlink_status(path, size_ec))) report.bytes += fs::file_size(path, size_ec);
    report.paths.push_back(path.string());
  }
  std::sort(report.paths.begin(), report.paths.end());
  if (dry_run) return report;
  for (const auto& path : doomed) {
    if (fs::is_directory(fs::symlink_status(path, ec))) fs::remove_all(path, ec);
    else fs::remove(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw CacheError("cannot remove " + path.string() + ": " + ec.message());
  }
  tune::reset_autotune_cache_state_for_testing();  // forget what this process memoised from it
  return report;
}

// ---- listing ----

AutotuneListing list_autotune_cache(const std::string& directory) {
  AutotuneListing listing;
  listing.path = autotune_cache_path(directory);
  std::string text, error;
  tune::FileStamp stamp;
  if (!tune::read_file(listing.path, &text, &stamp, &error)) {
    listing.exists = !error.empty();
    if (listing.exists) listing.damaged = error;
    return listing;
  }
  listing.exists = true;
  try {
    for (const auto& [key, e] : tune::parse_file(text)) {
      AutotuneRecord r;
      r.key_text = key;
      r.key_fields = tune::parse_key_text(key);
      r.winner = e.winner.str();
      r.winner_ms = e.winner_ms;
      r.default_config = e.default_config.str();
      r.default_ms = e.default_ms;
      r.mode = autotune_mode_name(e.mode);
      for (const tune::MeasuredConfig& m : e.candidates) r.candidates.push_back({m.config.str(), m.ms, m.error});
      r.created = e.created;
      r.created_unix = e.created_unix;
      r.flexjit_version = e.flexjit_version;
      listing.entries.push_back(std::move(r));
    }
  } catch (const tune::Damage& d) {
    listing.damaged = d.reason;
  }
  return listing;
}

}  // namespace flexjit
