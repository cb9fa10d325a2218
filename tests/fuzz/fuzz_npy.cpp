// libFuzzer target: random bytes as the contents of a .npy file. parse_npy must read them or throw
// UsageError; never crash, hang, allocate without bound or read outside the input (issue 17 items
// 1, 2 and 8: a wrapped element count, a regex that overflowed the stack, a half-read shape).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/npy.hpp"
#include "flexjit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const flexjit::NpyArray array = flexjit::parse_npy(bytes, "fuzz.npy");
    // What was accepted is consistent: its data fits in the input and decodes.
    const int64_t count = array.numel();
    if (count < 0 || array.data.size() != static_cast<size_t>(count) * flexjit::dtype_size(array.dtype) ||
        array.data.size() > size)
      std::abort();
    (void)array.to_doubles();
  } catch (const flexjit::UsageError& e) {
    if (std::string(e.what()).rfind("'fuzz.npy' ", 0) != 0) std::abort();  // every message names the file
  }
  return 0;
}
