#include "common/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

namespace flexjit {

namespace {

// Unique among processes (pid), threads (thread id) and retries (random).
std::string unique_suffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::ostringstream out;
  out << ::getpid() << "-" << std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000000 << "-" << std::hex
      << rng();
  return out.str();
}

}  // namespace

bool write_file_atomically(const std::string& path, const std::string& data, std::string* error) {
  const std::filesystem::path final_path(path);
  const std::string tmp =
      (final_path.parent_path() / (".tmp-" + final_path.filename().string() + "-" + unique_suffix())).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t written = 0;
  bool ok = true;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      *error = "cannot write " + tmp + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    *error = "cannot fsync " + tmp + ": " + std::strerror(errno);
  }
  if (::close(fd) != 0 && ok) {
    ok = false;
    *error = "cannot close " + tmp + ": " + std::strerror(errno);
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
  }
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

}  // namespace flexjit
