#pragma once
// Runs a program the way a user would and captures what it says: for the tests that drive the CLI,
// the examples and an installed package. Header-only so that any test folder can include it as
// "common/subprocess.hpp". The child gets its own process group, so a timeout kills it together
// with everything it started (cmake -> ninja -> compiler), and nothing else.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace flexjit::test {

struct ProcessResult {
  int exit_code = -1;       // exit status, or 128 + signal when killed
  bool timed_out = false;   // killed after the timeout
  std::string out;          // everything written to stdout
  std::string err;          // everything written to stderr
  // "exit 2; stderr: ..." for assertion messages.
  std::string describe() const {
    return (timed_out ? std::string("timed out") : "exit " + std::to_string(exit_code)) + "\n--- stdout ---\n" + out +
           "\n--- stderr ---\n" + err;
  }
};

struct ProcessOptions {
  std::string working_dir;                                   // "" = the test's own
  std::map<std::string, std::optional<std::string>> env;     // set (value) or remove (nullopt)
  double timeout_seconds = 300;
};

// The absolute path of `program` found on $PATH (or `program` itself when it has a '/'), or "".
inline std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + program;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

inline std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv[0] (absolute, or looked up on $PATH) with argv[1..]; stdin is /dev/null.
inline ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {}) {
  if (argv.empty()) throw std::invalid_argument("run_process: empty argv");
  const std::string program = find_program(argv[0]);
  ProcessResult result;
  if (program.empty()) {
    result.exit_code = 127;
    result.err = "run_process: '" + argv[0] + "' not found";
    return result;
  }
  // Everything the child needs is prepared before fork(): between fork and exec it only calls
  // async-signal-safe functions.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    const auto eq = var.find('=');
    if (eq != std::string::npos) env[var.substr(0, eq)] = var.substr(eq + 1);
  }
  for (const auto& [name, value] : options.env) {
    if (value)
      env[name] = *value;
    else
      env.erase(name);
  }
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings = argv;
  arg_strings[0] = program;
  for (auto& s : arg_strings) args.push_back(s.data());
  args.push_back(nullptr);

  // Close-on-exec, so that children forked concurrently by other threads do not inherit them
  // (dup2 onto 1 and 2 clears the flag for this child's copies).
  std::string out_name = (std::filesystem::temp_directory_path() / "flexjit-proc-out-XXXXXX").string();
  std::string err_name = (std::filesystem::temp_directory_path() / "flexjit-proc-err-XXXXXX").string();
  const int out_fd = ::mkostemp(out_name.data(), O_CLOEXEC);
  const int err_fd = ::mkostemp(err_name.data(), O_CLOEXEC);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("run_process: mkostemp failed");
  const char* dir = options.working_dir.empty() ? nullptr : options.working_dir.c_str();

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("run_process: fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (dir != nullptr && ::chdir(dir) != 0) ::_exit(126);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before any kill below
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_seconds);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) {
      status = -1;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (status != -1) result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ::close(out_fd);
  ::close(err_fd);
  result.out = read_whole_file(out_name);
  result.err = read_whole_file(err_name);
  ::unlink(out_name.c_str());
  ::unlink(err_name.c_str());
  return result;
}

// A fresh directory under $TMPDIR, removed with its contents at the end of the scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "flexjit-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline bool has_text(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace flexjit::test
