#pragma once
// Small text formatting shared by the CLI's commands.
#include <cstdio>
#include <string>

namespace flexjit::cli {

// "512 B", "1.5 KiB", "3.2 MiB", ...
inline std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return buf;
}

}  // namespace flexjit::cli
