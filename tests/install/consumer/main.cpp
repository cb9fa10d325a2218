// Uses the installed flexjit through its public headers: parses an expression, prints its
// canonical form and derivative, and reports an error the way the library phrases it.
#include <flexjit/error.hpp>
#include <flexjit/expr.hpp>
#include <flexjit/version.hpp>

#include <cstdio>

int main() {
  std::printf("flexjit %s\n", FLEXJIT_VERSION_STRING);
  flexjit::Declarations declarations;
  declarations.buffers.push_back(flexjit::BufferDecl::parse("slope:f32:16"));
  const flexjit::Expr alibi =
      flexjit::Expr::parse(flexjit::ModKind::score, "score+slope[h]*((kv_idx-q_idx))", declarations);
  std::printf("canonical: %s\n", alibi.canonical().c_str());
  std::printf("gradient: %s\n", alibi.gradient().canonical().c_str());
  try {
    flexjit::Expr::parse(flexjit::ModKind::mask, "q_idx >= kv_id");
    std::printf("no error for an unknown variable\n");
    return 1;
  } catch (const flexjit::ExprError& e) {  // exceptions cross the library boundary intact
    std::printf("%s error: %s\n", e.kind().c_str(), e.diagnostics().at(0).message.c_str());
  }
  return 0;
}
