#include "jit/cubin_symbols.hpp"

#include <cstdint>
#include <cstring>

namespace flexjit::jit {
namespace {

// Little-endian field of `size` bytes at `offset`, or false when it lies outside the image.
bool field(const std::string& image, uint64_t offset, int size, uint64_t* value) {
  if (offset > image.size() || image.size() - offset < static_cast<uint64_t>(size)) return false;
  *value = 0;
  for (int i = 0; i < size; ++i)
    *value |= uint64_t{static_cast<unsigned char>(image[offset + static_cast<uint64_t>(i)])} << (8 * i);
  return true;
}

constexpr uint64_t kSymtab = 2;     // SHT_SYMTAB
constexpr uint64_t kSymSize = 24;   // sizeof(Elf64_Sym)
constexpr uint64_t kShdrSize = 64;  // sizeof(Elf64_Shdr)

}  // namespace

bool cubin_defines_symbol(const std::string& cubin, std::string_view name) {
  if (cubin.size() < 64 || cubin.compare(0, 4, "\x7f" "ELF") != 0 || cubin[4] != 2 /* ELFCLASS64 */ ||
      cubin[5] != 1 /* little-endian */)
    return false;
  uint64_t shoff = 0, shentsize = 0, shnum = 0;
  if (!field(cubin, 0x28, 8, &shoff) || !field(cubin, 0x3A, 2, &shentsize) || !field(cubin, 0x3C, 2, &shnum) ||
      shentsize < kShdrSize)
    return false;
  for (uint64_t s = 0; s < shnum; ++s) {
    const uint64_t header = shoff + s * shentsize;
    uint64_t type = 0, offset = 0, size = 0, link = 0, entsize = 0;
    if (!field(cubin, header + 4, 4, &type) || !field(cubin, header + 24, 8, &offset) ||
        !field(cubin, header + 32, 8, &size) || !field(cubin, header + 40, 4, &link) ||
        !field(cubin, header + 56, 8, &entsize))
      return false;
    if (type != kSymtab) continue;
    if (entsize < kSymSize) return false;
    uint64_t str_offset = 0, str_size = 0;
    const uint64_t str_header = shoff + link * shentsize;
    if (link >= shnum || !field(cubin, str_header + 24, 8, &str_offset) || !field(cubin, str_header + 32, 8, &str_size) ||
        str_offset > cubin.size() || cubin.size() - str_offset < str_size)
      return false;
    for (uint64_t at = 0; at + kSymSize <= size; at += entsize) {
      uint64_t name_offset = 0, shndx = 0;
      if (!field(cubin, offset + at, 4, &name_offset) || !field(cubin, offset + at + 6, 2, &shndx)) return false;
      if (shndx == 0 /* SHN_UNDEF */ || name_offset >= str_size) continue;
      const char* text = cubin.data() + str_offset + name_offset;
      const size_t room = static_cast<size_t>(str_size - name_offset);
      const size_t length = strnlen(text, room);
      if (length < room && std::string_view(text, length) == name) return true;
    }
  }
  return false;
}

}  // namespace flexjit::jit
