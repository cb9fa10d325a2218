#include "common/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
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

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

}  // namespace

std::string describe_non_regular(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  return kind_of(st.st_mode);
}

ReadStatus read_regular_file(const std::string& path, uint64_t max_bytes, std::string* data, std::string* error,
                             int* error_number) {
  if (error_number) *error_number = 0;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (error_number) *error_number = err;
    *error = std::strerror(err);
    return err == ENOENT ? ReadStatus::missing : ReadStatus::failed;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = std::strerror(errno);
    ::close(fd);
    return ReadStatus::failed;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = kind_of(st.st_mode);
    ::close(fd);
    return ReadStatus::not_regular;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    *error = "is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) + " allowed";
    ::close(fd);
    return ReadStatus::too_large;
  }
  data->clear();
  data->reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = std::strerror(errno);
      ::close(fd);
      return ReadStatus::failed;
    }
    if (n == 0) break;
    if (data->size() + static_cast<size_t>(n) > max_bytes) {  // grew while we read
      *error = "grew past the " + std::to_string(max_bytes) + " bytes allowed while being read";
      ::close(fd);
      return ReadStatus::too_large;
    }
    data->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return ReadStatus::ok;
}

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
