// `flexjit cache list | show KEY | clear`: inspect and reset the on-disk kernel cache.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command.hpp"
#include "format.hpp"
#include "flexjit/error.hpp"
#include "flexjit/autotune.hpp"
#include "flexjit/kernel_cache.hpp"

namespace flexjit::cli {
namespace {


std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

nlohmann::json entry_json(const KernelCacheEntry& e) {
  nlohmann::json resources = nlohmann::json::object();
  for (const auto& [name, r] : e.resources)
    resources[name] = {{"registers", r.registers},
                       {"spill_store_bytes", r.spill_store_bytes},
                       {"spill_load_bytes", r.spill_load_bytes},
                       {"stack_frame_bytes", r.stack_frame_bytes},
                       {"static_smem_bytes", r.static_smem_bytes},
                       {"barriers", r.barriers}};
  return {{"key", e.key},
          {"json_path", e.json_path},
          {"source_name", e.source_name},
          {"kernel_names", e.kernel_names},
          {"arch", e.arch},
          {"options", e.options},
          {"nvrtc_version", e.nvrtc_version},
          {"flexjit_version", e.flexjit_version},
          {"created", e.created},
          {"compile_ms", e.compile_ms},
          {"cubin_bytes", e.cubin_bytes},
          {"total_bytes", e.total_bytes},
          {"resources", resources}};
}

int run_list(bool as_json) {
  const KernelCacheListing listing = list_kernel_cache();
  if (as_json) {
    nlohmann::json j = {{"directory", listing.directory},
                        {"entries", nlohmann::json::array()},
                        {"damaged", listing.damaged}};
    for (const auto& e : listing.entries) j["entries"].push_back(entry_json(e));
    std::printf("%s\n", j.dump(2).c_str());
    return kExitOk;
  }
  if (listing.entries.empty()) {
    std::printf("no compiled kernels cached in %s/kernels\n", listing.directory.c_str());
    // Say why when the cache cannot hold any (a path that is a file, or kernels/ that is one).
    std::error_code ec;
    for (const std::filesystem::path& p : {std::filesystem::path(listing.directory),
                                          std::filesystem::path(listing.directory) / "kernels"})
      if (std::filesystem::exists(p, ec) && !std::filesystem::is_directory(p, ec)) {
        std::fprintf(stderr, "flexjit: warning: %s is not a directory, so nothing can be cached there (set "
                             "FLEXJIT_CACHE_DIR to a directory)\n", p.string().c_str());
        break;
      }
  } else {
    size_t kernels_width = 7;
    for (const auto& e : listing.entries)
      kernels_width = std::max(kernels_width, join(e.kernel_names, ",").size());
    std::printf("%-16s  %-*s  %-8s  %10s  %-20s  %s\n", "KEY", static_cast<int>(kernels_width),
                "KERNELS", "ARCH", "SIZE", "CREATED", "COMPILE");
    uint64_t total = 0;
    for (const auto& e : listing.entries) {
      total += e.total_bytes;
      std::printf("%-16s  %-*s  %-8s  %10s  %-20s  %.1f ms\n", e.key.substr(0, 16).c_str(),
                  static_cast<int>(kernels_width), join(e.kernel_names, ",").c_str(),
                  e.arch.c_str(), human_bytes(static_cast<double>(e.total_bytes)).c_str(),
                  e.created.c_str(), e.compile_ms);
    }
    std::printf("%zu %s, %s in %s/kernels\n", listing.entries.size(),
                listing.entries.size() == 1 ? "entry" : "entries",
                human_bytes(static_cast<double>(total)).c_str(), listing.directory.c_str());
  }
  if (!listing.damaged.empty())
    std::printf(
        "%zu damaged or incomplete file%s (ignored; the next compile replaces them, `flexjit "
        "cache clear` removes them)\n",
        listing.damaged.size(), listing.damaged.size() == 1 ? "" : "s");
  return kExitOk;
}

int run_show(const std::string& key, bool as_json, bool key_text) {
  const KernelCacheEntry e = find_kernel_cache_entry(key);
  if (as_json) {
    nlohmann::json j = entry_json(e);
    if (key_text) j["key_text"] = e.key_text;
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::printf("key:       %s\n", e.key.c_str());
  std::printf("file:      %s\n", e.json_path.c_str());
  std::printf("source:    %s\n", e.source_name.c_str());
  std::printf("kernels:   %s\n", join(e.kernel_names, ", ").c_str());
  std::printf("arch:      %s\n", e.arch.c_str());
  std::printf("options:   %s\n", join(e.options, " ").c_str());
  std::printf("nvrtc:     %s\n", e.nvrtc_version.c_str());
  std::printf("flexjit:   %s\n", e.flexjit_version.c_str());
  std::printf("created:   %s\n", e.created.c_str());
  std::printf("compile:   %.1f ms\n", e.compile_ms);
  std::printf("size:      cubin %s, entry %s\n",
              human_bytes(static_cast<double>(e.cubin_bytes)).c_str(),
              human_bytes(static_cast<double>(e.total_bytes)).c_str());
  if (!e.resources.empty()) std::printf("resources:\n");
  for (const auto& [name, r] : e.resources)
    std::printf(
        "  %s: %d registers, %d bytes static shared memory, %d barriers, %d bytes stack, %d/%d "
        "bytes spill stores/loads\n",
        name.c_str(), r.registers, r.static_smem_bytes, r.barriers, r.stack_frame_bytes,
        r.spill_store_bytes, r.spill_load_bytes);
  if (key_text) std::printf("key text:\n%s", e.key_text.c_str());
  return kExitOk;
}

int run_clear(bool dry_run) {
  // Both caches are checked (a dry run throws when something cannot be removed) before either
  // is touched, so a failing clear removes nothing.
  CacheClearReport report = clear_cache(true);
  AutotuneClearReport autotune = clear_autotune_cache(true, report.directory);
  if (!dry_run) {
    report = clear_cache(false, report.directory);
    autotune = clear_autotune_cache(false, report.directory);
  }
  report.paths.insert(report.paths.end(), autotune.paths.begin(), autotune.paths.end());
  std::sort(report.paths.begin(), report.paths.end());
  report.bytes += autotune.bytes;
  if (report.paths.empty()) {
    std::printf("nothing to remove in %s\n", report.directory.c_str());
    return kExitOk;
  }
  if (dry_run)
    for (const auto& path : report.paths) std::printf("would remove %s\n", path.c_str());
  std::vector<std::string> parts;
  parts.push_back(std::to_string(report.kernel_entries) + " kernel cache " +
                  (report.kernel_entries == 1 ? "entry" : "entries"));
  if (report.failed_dumps)
    parts.push_back(std::to_string(report.failed_dumps) + " failed-compile dump file" +
                    (report.failed_dumps == 1 ? "" : "s"));
  if (!autotune.paths.empty()) parts.push_back("autotune.json");
  std::string what = parts.size() == 1 ? parts[0]
                                       : join({parts.begin(), parts.end() - 1}, ", ") + " and " +
                                             parts.back();
  std::printf("%s %s (%s) from %s\n", dry_run ? "would remove" : "removed", what.c_str(),
              human_bytes(static_cast<double>(report.bytes)).c_str(), report.directory.c_str());
  return kExitOk;
}

struct CacheArgs {
  bool json = false;
  bool key_text = false;
  bool dry_run = false;
  std::string key;
};

const CommandRegistrar registrar(
    "cache", "List, show or clear the on-disk kernel cache",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<CacheArgs>();
      app.require_subcommand(1);
      CLI::App* list = app.add_subcommand("list", "List the cached kernels");
      list->add_flag("--json", args->json, "Print machine-readable JSON");
      CLI::App* show = app.add_subcommand("show", "Show one cached kernel");
      show->add_option("key", args->key, "Key of the entry, or a unique prefix of it")->required();
      show->add_flag("--json", args->json, "Print machine-readable JSON");
      show->add_flag("--key-text", args->key_text,
                     "Also print the full key text (source, headers, options)");
      CLI::App* clear = app.add_subcommand(
          "clear", "Remove all cached kernels, failed-compile dumps and autotune.json");
      clear->add_flag("--dry-run", args->dry_run, "Only list what would be removed");
      return [args, list, show, clear]() -> int {
        if (list->parsed()) return run_list(args->json);
        if (show->parsed()) return run_show(args->key, args->json, args->key_text);
        if (clear->parsed()) return run_clear(args->dry_run);
        return kExitUsage;
      };
    });

}  // namespace
}  // namespace flexjit::cli
