#pragma once
// The templates/ folder, compiled into the library by cmake/embed_templates.cmake.
#include <cstddef>

namespace flexjit::codegen {

struct EmbeddedFile {
  const char* name;  // file name under templates/, e.g. "attention_fwd.cu.j2"; nullptr ends the table
  const char* data;  // contents, NUL-terminated
  size_t size;       // bytes, without the terminator
};

// The table of embedded files, terminated by an entry whose name is nullptr.
const EmbeddedFile* embedded_files();

}  // namespace flexjit::codegen
