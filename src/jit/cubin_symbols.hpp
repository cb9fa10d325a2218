#pragma once
// Which symbols a cubin (an ELF image) defines, read from its symbol table. flexjit asks the
// cubin rather than the driver: cuModuleGetGlobal on a missing name "fails" with NOT_FOUND, which
// compute-sanitizer reports as an API error in every user's program that runs a kernel without
// the symbol (NVRTC drops an unused __device__ variable, so the template alone cannot say).
#include <string>
#include <string_view>

namespace flexjit::jit {

// True when the ELF64 image `cubin` has a defined symbol named `name`. False for anything else,
// a malformed or truncated image included (never reads outside `cubin`).
bool cubin_defines_symbol(const std::string& cubin, std::string_view name);

}  // namespace flexjit::jit
