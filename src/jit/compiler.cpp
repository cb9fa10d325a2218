#include "jit/compiler.hpp"

#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "flexjit/error.hpp"
#include "flexjit/kernel_cache.hpp"
#include "jit/kernel_cache.hpp"

namespace flexjit::jit {
namespace {

namespace fs = std::filesystem;

std::atomic<long> g_compile_count{0};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

// Owns one NVRTC program; programs are independent, which is what makes compile() thread-safe.
class Program {
 public:
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (program_) nvrtcDestroyProgram(&program_);
  }
  nvrtcProgram* out() { return &program_; }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

// The line a user needs first: the first diagnostic that is an error.
std::string first_error_line(const std::string& log) {
  std::istringstream lines(log);
  std::string line, first_nonempty;
  while (std::getline(lines, line)) {
    if (first_nonempty.empty() && line.find_first_not_of(" \t\r") != std::string::npos)
      first_nonempty = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first_nonempty.empty() ? std::string("(empty NVRTC log)") : first_nonempty;
}

// Keeps only characters that are safe in a file name.
std::string file_stem(const std::string& source_name) {
  std::string stem = fs::path(source_name).filename().string();
  for (const char* ext : {".cu", ".cuh", ".cpp"}) {
    const std::string e(ext);
    if (stem.size() > e.size() && stem.compare(stem.size() - e.size(), e.size(), e) == 0) {
      stem.resize(stem.size() - e.size());
      break;
    }
  }
  for (char& c : stem)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return stem.empty() ? std::string("source") : stem;
}

bool write_whole_file(const fs::path& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return false;
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

// Writes the failing source and its in-memory headers where the user can compile them by hand:
// `<stem>-<hash>.cu` and `<stem>-<hash>.include/<header name>`. Returns the .cu path, or "".
std::string dump_failed_source(const Source& source, const std::string& key) {
  std::vector<fs::path> directories;
  if (kernel_cache_enabled()) directories.push_back(fs::path(cache_directory()) / "failed");
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  // Per user: a shared /tmp/flexjit-failed made by one user would not be writable by the next.
  directories.push_back((ec ? fs::path("/tmp") : tmp) /
                        ("flexjit-failed-" + std::to_string(::getuid())));

  const std::string base = file_stem(source.name) + "-" + key.substr(0, 8);
  for (const auto& dir : directories) {
    fs::create_directories(dir, ec);
    if (ec) continue;
    const fs::path cu = dir / (base + ".cu");
    if (!write_whole_file(cu, source.text)) continue;
    bool ok = true;
    for (const auto& [name, text] : source.headers) {
      // Header names come from our templates; still, never write outside the dump folder.
      fs::path relative = fs::path(name).lexically_normal();
      if (relative.is_absolute() || starts_with(relative.string(), "..")) relative = relative.filename();
      const fs::path target = dir / (base + ".include") / relative;
      fs::create_directories(target.parent_path(), ec);
      ok = ok && !ec && write_whole_file(target, text);
    }
    if (ok) return cu.string();
  }
  return {};
}

[[noreturn]] void throw_compile_error(const std::string& summary, const std::string& log,
                                      const std::vector<std::string>& options,
                                      const Source& source, const std::string& key) {
  throw CompileError(summary, log, options, dump_failed_source(source, key));
}

// ptxas -v, one block per entry function (other functions get "Function properties" too):
//   ptxas info    : Compiling entry function 'saxpy' for 'sm_90a'
//   ptxas info    : Function properties for saxpy
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]
const std::regex& entry_re() {
  static const std::regex re(R"(Compiling entry function '([^']+)')");
  return re;
}
const std::regex& properties_re() {
  static const std::regex re(R"(Function properties for (\S+))");
  return re;
}
const std::regex& frame_re() {
  static const std::regex re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  return re;
}
const std::regex& registers_re() {
  static const std::regex re(R"(Used (\d+) registers)");
  return re;
}
const std::regex& barriers_re() {
  static const std::regex re(R"(used (\d+) barriers)");
  return re;
}
const std::regex& smem_re() {
  static const std::regex re(R"((\d+) bytes smem)");
  return re;
}

int to_int(const std::string& digits) {
  return static_cast<int>(std::min<long long>(std::atoll(digits.c_str()), 1LL << 30));
}

}  // namespace

std::map<std::string, KernelResources> parse_ptxas_resources(const std::string& log) {
  std::map<std::string, KernelResources> out;
  std::string entry;       // entry function being compiled
  std::string properties;  // function the next stack-frame line belongs to
  std::istringstream lines(log);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, entry_re())) {
      entry = m[1];
      out[entry];
    } else if (std::regex_search(line, m, properties_re())) {
      properties = m[1];
    } else if (std::regex_search(line, m, frame_re())) {
      if (!properties.empty() && out.count(properties)) {
        auto& r = out[properties];
        r.stack_frame_bytes = to_int(m[1]);
        r.spill_store_bytes = to_int(m[2]);
        r.spill_load_bytes = to_int(m[3]);
      }
    } else if (std::regex_search(line, m, registers_re())) {
      if (entry.empty()) continue;
      auto& r = out[entry];
      r.registers = to_int(m[1]);
      if (std::regex_search(line, m, barriers_re())) r.barriers = to_int(m[1]);
      if (std::regex_search(line, m, smem_re())) r.static_smem_bytes = to_int(m[1]);
    }
  }
  return out;
}

int nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return major * 1000 + minor * 10;
}

std::string nvrtc_version_string() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

const std::vector<int>& nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int count = 0;
    std::vector<int> out;
    if (nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
      out.resize(static_cast<size_t>(count));
      if (nvrtcGetSupportedArchs(out.data()) != NVRTC_SUCCESS) out.clear();
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return archs;
}

const std::vector<std::string>& supported_archs() {
  static const std::vector<std::string> archs = [] {
    std::vector<std::string> out;
    for (int cc : nvrtc_supported_archs()) {
      if (cc < 80) continue;  // the portable path needs mma.sync bf16 and cp.async
      const std::string base = "sm_" + std::to_string(cc);
      out.push_back(base);
      if (cc >= 90) out.push_back(base + "a");
      if (cc >= 100) out.push_back(base + "f");
    }
    return out;
  }();
  return archs;
}

void validate_arch(const std::string& arch) {
  const auto& archs = supported_archs();
  if (std::find(archs.begin(), archs.end(), arch) != archs.end()) return;
  throw UsageError("unknown GPU architecture '" + arch + "'; with NVRTC " +
                   nvrtc_version_string() + " flexjit accepts: " + join(archs, " "));
}

std::vector<std::string> CompileOptions::canonical() const {
  validate_arch(arch);
  std::vector<std::string> sorted = {"-arch=" + arch, "-std=c++17", "-default-device"};
  if (ptxas_verbose) {
    sorted.push_back("--ptxas-options=-v");
    // NVRTC 12.9+ reuses SASS from the driver's JIT cache (~/.nv/ComputeCache) when a driver is
    // installed, and then ptxas prints nothing: the resources would silently be missing. flexjit
    // has its own cache, so NVRTC's is only in the way.
    if (nvrtc_version() >= 12090) sorted.push_back("--no-cache");
  }
  if (line_info) sorted.push_back("-lineinfo");

  std::vector<std::string> ordered;  // include paths and pre-includes: order is meaningful
  std::map<std::string, std::string> macros;  // macro name -> the option that (un)defines it
  for (const auto& option : extra) {
    if (option.empty() || option[0] != '-')
      throw UsageError("NVRTC option '" + option +
                       "' does not start with '-'; give each option as one element, e.g. "
                       "\"-DTILE=128\" or \"--maxrregcount=128\"");
    if (starts_with(option, "-arch") || starts_with(option, "--gpu-architecture"))
      throw UsageError("NVRTC option '" + option +
                       "' sets the target; set CompileOptions::arch instead");
    std::string macro;
    if (starts_with(option, "--define-macro="))
      macro = option.substr(15);
    else if (starts_with(option, "--undefine-macro="))
      macro = option.substr(17);
    else if (starts_with(option, "-D") || starts_with(option, "-U"))
      macro = option.substr(2);
    if (!macro.empty()) {
      const std::string name = macro.substr(0, macro.find('='));
      const bool defines = starts_with(option, "-D") || starts_with(option, "--define");
      const std::string meaning = (defines ? "D" : "U") + macro;
      auto [it, inserted] = macros.emplace(name, meaning);
      if (!inserted && it->second != meaning)
        throw UsageError("NVRTC options define macro '" + name +
                         "' in two different ways ('" + option + "' and an earlier one); keep one");
    }
    const bool order_matters = starts_with(option, "-I") || starts_with(option, "--include-path") ||
                               starts_with(option, "-include") ||
                               starts_with(option, "--pre-include");
    if (order_matters) {
      if (std::find(ordered.begin(), ordered.end(), option) == ordered.end())
        ordered.push_back(option);
    } else {
      sorted.push_back(option);
    }
  }
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  sorted.insert(sorted.end(), ordered.begin(), ordered.end());
  return sorted;
}

long nvrtc_compile_count() { return g_compile_count.load(); }

CompiledKernel compile(const Source& source, const CompileOptions& options) {
  const std::vector<std::string> canonical = options.canonical();
  const std::string key = kernel_key(kernel_key_text(source, options.arch, canonical));

  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : source.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  std::vector<const char*> option_ptrs;
  for (const auto& o : canonical) option_ptrs.push_back(o.c_str());

  const auto start = std::chrono::steady_clock::now();
  Program program;
  nvrtcResult rc = nvrtcCreateProgram(program.out(), source.text.c_str(), source.name.c_str(),
                                      static_cast<int>(header_texts.size()), header_texts.data(),
                                      header_names.data());
  if (rc != NVRTC_SUCCESS)
    throw_compile_error("NVRTC could not create a program for " + source.name + ": " +
                            nvrtcGetErrorString(rc),
                        "", canonical, source, key);
  ++g_compile_count;
  rc = nvrtcCompileProgram(program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompiledKernel out;
  out.log = program_log(program.get());
  if (rc != NVRTC_SUCCESS) {
    std::string summary = "NVRTC failed to compile " + source.name;
    if (rc != NVRTC_ERROR_COMPILATION) summary += std::string(" (") + nvrtcGetErrorString(rc) + ")";
    throw_compile_error(summary + ": " + first_error_line(out.log), out.log, canonical, source,
                        key);
  }

  size_t size = 0;
  if (nvrtcGetCUBINSize(program.get(), &size) != NVRTC_SUCCESS || size == 0)
    throw_compile_error("NVRTC produced no cubin for " + source.name, out.log, canonical, source,
                        key);
  out.cubin.resize(size);
  nvrtcGetCUBIN(program.get(), out.cubin.data());
  if (nvrtcGetPTXSize(program.get(), &size) != NVRTC_SUCCESS || size == 0)
    throw_compile_error("NVRTC produced no PTX for " + source.name, out.log, canonical, source,
                        key);
  out.ptx.resize(size);
  nvrtcGetPTX(program.get(), out.ptx.data());
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  // A kernel that is missing (typo, or not extern "C") would otherwise only fail at load time on
  // a GPU machine; PTX lists every entry as ".entry <name>(".
  for (const auto& name : source.kernel_names) {
    if (out.ptx.find(".entry " + name + "(") == std::string::npos)
      throw_compile_error("kernel '" + name + "' is not defined in " + source.name +
                              " (declare it extern \"C\" __global__)",
                          out.log, canonical, source, key);
  }

  out.key = key;
  out.source_name = source.name;
  out.kernel_names = source.kernel_names;
  out.arch = options.arch;
  out.options = canonical;
  out.resources = parse_ptxas_resources(out.log);
  return out;
}

}  // namespace flexjit::jit
