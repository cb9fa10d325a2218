/* The C API header compiles as strict C99 on its own (tests/capi/CMakeLists.txt compiles this file
   with -std=c99 -Wall -Wextra -pedantic -Werror) and twice (include guard). */
#include <flexjit/flexjit.h>
#include <flexjit/flexjit.h>

int flexjit_header_c99_probe(void);
int flexjit_header_c99_probe(void) {
  flexjit_variant_desc desc = {0};
  flexjit_call_options options = {0};
  desc.struct_size = sizeof desc;
  options.struct_size = sizeof options;
  return (int)desc.struct_size + (int)options.struct_size + FLEXJIT_C_API_VERSION + (int)FLEXJIT_ERROR_EXPR;
}
