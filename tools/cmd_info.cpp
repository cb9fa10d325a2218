// `flexjit info`: versions, the GPU, the cache. Works without a GPU (the GPU line says why).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command.hpp"
#include "format.hpp"
#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "flexjit/kernel_cache.hpp"
#include "flexjit/version.hpp"
#include "jit/compiler.hpp"
#include "jit/driver.hpp"

namespace flexjit::cli {
namespace {


std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : " ") + s;
  return out;
}

int run_info(bool as_json) {
  std::vector<std::string> nvrtc_archs;
  for (int cc : jit::nvrtc_supported_archs()) nvrtc_archs.push_back("sm_" + std::to_string(cc));

  std::string driver_error;
  const bool have_driver = jit::driver_available(&driver_error);
  const int driver_version = have_driver ? jit::driver().version : 0;

  bool have_gpu = false;
  DeviceInfo device;
  std::string gpu_error = driver_error;
  if (have_driver) {
    try {
      if (gpu_available(&gpu_error)) {
        device = current_device();
        have_gpu = true;
      }
    } catch (const Error& e) {
      gpu_error = e.what();
    }
  }

  const std::string dir = cache_directory();
  const bool cache_on = kernel_cache_enabled();
  size_t entries = 0;
  uint64_t bytes = 0;
  std::string cache_error;
  try {
    for (const auto& e : list_kernel_cache(dir).entries) {
      ++entries;
      bytes += e.total_bytes;
    }
  } catch (const Error& e) {
    cache_error = e.what();
  }

  if (as_json) {
    nlohmann::json j;
    j["flexjit_version"] = FLEXJIT_VERSION_STRING;
    j["nvrtc"] = {{"version", jit::nvrtc_version_string()},
                  {"version_number", jit::nvrtc_version()},
                  {"archs", nvrtc_archs}};
    j["targets"] = jit::supported_archs();
    j["driver"] = have_driver ? nlohmann::json{{"available", true},
                                               {"version", cuda_version(driver_version)},
                                               {"version_number", driver_version}}
                              : nlohmann::json{{"available", false}, {"error", driver_error}};
    if (have_gpu) {
      j["gpu"] = {{"available", true},
                  {"ordinal", device.ordinal},
                  {"name", device.name},
                  {"compute_capability", std::to_string(device.cc_major) + "." +
                                             std::to_string(device.cc_minor)},
                  {"sm_count", device.sm_count},
                  {"total_memory", device.total_memory},
                  {"max_smem_per_block_optin", device.max_smem_per_block_optin},
                  {"l2_bytes", device.l2_bytes},
                  {"default_arch", device.default_arch()}};
    } else {
      j["gpu"] = {{"available", false}, {"error", gpu_error}};
    }
    j["cache"] = {{"directory", dir},
                  {"enabled", cache_on},
                  {"kernel_entries", entries},
                  {"bytes", bytes}};
    if (!cache_error.empty()) j["cache"]["error"] = cache_error;
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }

  std::printf("flexjit %s\n", FLEXJIT_VERSION_STRING);
  std::printf("NVRTC: %s (archs: %s)\n", jit::nvrtc_version_string().c_str(),
              join(nvrtc_archs).c_str());
  std::printf("Targets: %s\n", join(jit::supported_archs()).c_str());
  if (have_driver)
    std::printf("Driver: CUDA %s\n", cuda_version(driver_version).c_str());
  else
    std::printf("Driver: none\n");
  if (have_gpu) {
    std::printf(
        "GPU: %s (device %d): compute capability %d.%d, %d SMs, %s memory, %s shared memory per "
        "block (opt-in), %s L2, default arch %s\n",
        device.name.c_str(), device.ordinal, device.cc_major, device.cc_minor, device.sm_count,
        human_bytes(static_cast<double>(device.total_memory)).c_str(),
        human_bytes(static_cast<double>(device.max_smem_per_block_optin)).c_str(),
        human_bytes(static_cast<double>(device.l2_bytes)).c_str(), device.default_arch().c_str());
  } else {
    std::printf("GPU: none (%s)\n", gpu_error.c_str());
  }
  std::string cache_line = "Cache: " + dir + " (";
  if (!cache_on) cache_line += "disabled by FLEXJIT_CACHE; ";
  if (cache_error.empty())
    cache_line += std::to_string(entries) + (entries == 1 ? " kernel, " : " kernels, ") +
                  human_bytes(static_cast<double>(bytes)) + ")";
  else
    cache_line += cache_error + ")";
  std::printf("%s\n", cache_line.c_str());
  return kExitOk;
}

const CommandRegistrar registrar(
    "info", "Show the flexjit and NVRTC versions, the CUDA driver and GPU, and the cache",
    [](CLI::App& app) -> std::function<int()> {
      auto as_json = std::make_shared<bool>(false);
      app.add_flag("--json", *as_json, "Print machine-readable JSON");
      return [as_json] { return run_info(*as_json); };
    });

}  // namespace
}  // namespace flexjit::cli
