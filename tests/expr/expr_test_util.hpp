#pragma once
// Helpers shared by the expression tests.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flexjit/error.hpp"
#include "flexjit/expr.hpp"

namespace flexjit::test {

/// The declarations most tests check against.
inline Declarations standard_declarations() {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("doc:i32:4096"));
  d.buffers.push_back(BufferDecl::parse("bias:f32:16x8191"));
  d.buffers.push_back(BufferDecl::parse("slope:f32:16"));
  d.buffers.push_back(BufferDecl::parse("table:bf16:?"));
  d.buffers.push_back(BufferDecl::parse("halfs:f16:8"));
  d.buffers.push_back(BufferDecl::parse("flags:u8:4096"));
  d.params.push_back(ParamDecl::parse("cap:float"));
  d.params.push_back(ParamDecl::parse("window:int"));
  return d;
}

inline Expr score_mod(const std::string& text, const Declarations& d = standard_declarations()) {
  return Expr::parse(ModKind::score, text, d);
}
inline Expr mask_mod(const std::string& text, const Declarations& d = standard_declarations()) {
  return Expr::parse(ModKind::mask, text, d);
}

/// The full ExprError text for `text`, or "OK" when it checks.
inline std::string error_of(ModKind kind, const std::string& text,
                            const Declarations& d = standard_declarations()) {
  try {
    Expr::parse(kind, text, d);
    return "OK";
  } catch (const ExprError& e) {
    return e.what();
  }
}
inline std::string score_error(const std::string& text) { return error_of(ModKind::score, text); }
inline std::string mask_error(const std::string& text) { return error_of(ModKind::mask, text); }

/// The diagnostics for `text` (empty when it checks).
inline std::vector<Diagnostic> diagnostics_of(ModKind kind, const std::string& text,
                                              const Declarations& d = standard_declarations()) {
  try {
    Expr::parse(kind, text, d);
    return {};
  } catch (const ExprError& e) {
    return e.diagnostics();
  }
}

/// The message of a UsageError thrown by `f`, or "no error".
template <typename F>
std::string usage_error_of(F&& f) {
  try {
    f();
    return "no error";
  } catch (const UsageError& e) {
    return e.what();
  }
}

/// One expression of the benchmark suite (tests/expr/data/suite_mods.txt).
struct SuiteMod {
  std::string problem;
  ModKind kind;
  std::string text;
};

/// The suite's mods with the declarations they need (doc: i32, slope: f32, start: i32).
inline std::vector<SuiteMod> suite_mods() {
  std::ifstream in(FLEXJIT_TEST_DIR "/expr/data/suite_mods.txt");
  std::vector<SuiteMod> mods;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string problem, kind;
    fields >> problem >> kind;
    std::string text;
    std::getline(fields, text);
    text.erase(0, text.find_first_not_of(' '));
    mods.push_back({problem, kind == "score_mod" ? ModKind::score : ModKind::mask, text});
  }
  return mods;
}

inline Declarations suite_declarations() {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("doc:i32:?"));
  d.buffers.push_back(BufferDecl::parse("slope:f32:?"));
  d.buffers.push_back(BufferDecl::parse("start:i32:?"));
  return d;
}

}  // namespace flexjit::test
