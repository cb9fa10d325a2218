#include "flexjit/config.hpp"

#include <cctype>

#include "flexjit/error.hpp"

namespace flexjit {

std::string BlockConfig::str() const {
  return "m" + std::to_string(block_m) + "n" + std::to_string(block_n) + "w" +
         std::to_string(num_warps) + "s" + std::to_string(stages) + (warp_specialized ? "ws" : wgmma ? "g" : tma ? "t" : "");
}

BlockConfig BlockConfig::parse(const std::string& text) {
  BlockConfig config;
  const char letters[] = {'m', 'n', 'w', 's'};
  int* fields[] = {&config.block_m, &config.block_n, &config.num_warps, &config.stages};
  size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    if (pos >= text.size() || text[pos] != letters[i])
      throw UsageError("bad block config '" + text + "': expected '" + std::string(1, letters[i]) +
                       "' at position " + std::to_string(pos + 1) +
                       " (the form is m<BLOCK_M>n<BLOCK_N>w<WARPS>s<STAGES>, e.g. m128n64w4s2)");
    ++pos;
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == start || pos - start > 4)
      throw UsageError("bad block config '" + text + "': expected a number after '" +
                       std::string(1, letters[i]) + "' (e.g. m128n64w4s2)");
    *fields[i] = std::stoi(text.substr(start, pos - start));
  }
  if (pos < text.size() && text[pos] == 'g') {
    config.wgmma = true;
    ++pos;
  } else if (text.compare(pos, 2, "ws") == 0) {
    config.wgmma = config.warp_specialized = true;
    pos += 2;
  } else if (pos < text.size() && text[pos] == 't') {
    config.tma = true;
    ++pos;
  }
  if (pos != text.size())
    throw UsageError("bad block config '" + text + "': unexpected '" + text.substr(pos) +
                     "' after the stages (e.g. m128n64w4s2, m128n128w8s2g for the wgmma path, m128n128w8s2ws for the "
                     "warp-specialised one, m16n128w8s3t for decoding through TMA)");
  return config;
}

}  // namespace flexjit
