// What the compile tests read in NVRTC's and ptxas's log of a kernel flexjit rendered.
#pragma once

#include <string>

namespace flexjit::codegen {

/// Whether NVRTC's front end warned about the rendered source (its diagnostics read
/// "warning #NNN-D"): the source is ours, so the compile tests expect none.
inline bool nvrtc_warned(const std::string& log) { return log.find("warning #") != std::string::npos; }

}  // namespace flexjit::codegen
