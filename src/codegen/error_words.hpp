#pragma once
// Per-call error words. A kernel whose mods read buffers takes a trailing `unsigned*` argument and
// or-s its out-of-bounds bits into that device word once, at its end (flexjit_report_errors in
// flexjit_expr.cuh). The launch stage hands each launch the word of (context, owning stream,
// kernel), so a check reads exactly the work of one stream — not a module-global word that every
// stream's calls share.
#include <cuda.h>

#include <string>
#include <vector>

#include "flexjit/device.hpp"

namespace flexjit::codegen {

// The device word for `kernel` (a KernelSpec::describe() line) launched on behalf of `stream` in
// the current context; zero until a launch reports an error. Words live for the process (one per
// stream and kernel: a few bytes each, in slabs of 256).
CUdeviceptr error_word(Stream stream, const std::string& kernel);

// Waits for `stream`, then returns the kernels whose word for `stream` is set, and clears them.
std::vector<std::string> take_stream_errors(Stream stream);

// Waits for the whole current context, then does the same for every stream's words.
std::vector<std::string> take_context_errors();

}  // namespace flexjit::codegen
