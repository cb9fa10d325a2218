#pragma once
// Packs call-time parameter and buffer values into the bytes of the kernel argument
// `FlexjitModArgs`, following the layout the expression compiler emitted for the declarations.
#include <set>
#include <string>
#include <vector>

#include "flexjit/expr.hpp"
#include "flexjit/mod_values.hpp"

namespace flexjit::codegen {

// Throws UsageError for a missing or unknown name, a non-integral value for an int parameter,
// and ShapeError for a buffer whose dtype, rank or fixed extents differ from its declaration.
// `what` names the caller in messages (e.g. "forward"). Only the names in `required` (what the
// kernel's expressions read) must have values; other declared fields are zero-filled.
std::vector<unsigned char> pack_mod_args(const Declarations& declarations, const ModValues& values,
                                         const std::set<std::string>& required,
                                         const std::string& what);

// The parameter and buffer names `exprs` read.
std::set<std::string> names_read(std::initializer_list<const Expr*> exprs);

}  // namespace flexjit::codegen
