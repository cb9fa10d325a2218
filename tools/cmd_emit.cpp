// `flexjit emit`: render one kernel configuration and write its CUDA source, PTX or cubin. Needs no
// GPU: NVRTC compiles for the named architecture. Register and spill counts go to stderr.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "command.hpp"
#include "jit/compiler.hpp"
#include "mod_options.hpp"

namespace flexjit::cli {
namespace {

void write_output(const std::string& path, const std::string& bytes) {
  if (path.empty() || path == "-") {
    std::cout << bytes;
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError("cannot write '" + path + "'");
  out << bytes;
  if (!out) throw UsageError("writing '" + path + "' failed");
}

CommandRegistrar registrar("emit", "Render one kernel and write its .cu, .ptx or .cubin (no GPU needed)", [](CLI::App& app) {
  struct Options {
    VariantOptions variant;
    std::string family = "fwd";
    std::string arch = "sm_90a";
    std::string format = "cu";
    std::string output;
    int gqa = 1;
    bool divisible = false;
    bool no_block_mask = false;
    int q_block = 128, kv_block = 128;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--family", o->family, "kernel family: fwd, bwd_preprocess, bwd_dq, bwd_dkdv, block_mask, builtin")->capture_default_str();
  o->variant.add_mod_flags(app);
  o->variant.add_kernel_flags(app);
  app.add_option("--gqa", o->gqa, "query heads per kv head")->capture_default_str();
  app.add_flag("--divisible", o->divisible, "specialise for lengths that are multiples of the tiles");
  app.add_flag("--no-block-mask", o->no_block_mask, "visit every tile (no block-sparse tables)");
  app.add_option("--q-block", o->q_block, "block-mask query block")->capture_default_str();
  app.add_option("--kv-block", o->kv_block, "block-mask kv block")->capture_default_str();
  app.add_option("--arch", o->arch, "target architecture, e.g. sm_80, sm_90a")->capture_default_str();
  app.add_option("--format", o->format, "what to write: cu, ptx, cubin or context")
      ->check(CLI::IsMember({"cu", "ptx", "cubin", "context"}))->capture_default_str();
  app.add_option("-o,--output", o->output, "output file (default: stdout for cu/ptx/context)");
  return [o]() {
    codegen::KernelSpec spec;
    spec.family = codegen::parse_family(o->family);
    spec.declarations = o->variant.declarations();
    if (!o->variant.score.empty()) spec.score_mod = Expr::parse(ModKind::score, o->variant.score, spec.declarations);
    if (!o->variant.mask.empty()) spec.mask_mod = Expr::parse(ModKind::mask, o->variant.mask, spec.declarations);
    spec.dtype = o->variant.element_type();
    spec.head_dim = o->variant.head_dim;
    spec.head_dim_v = o->variant.value_head_dim();
    spec.config = o->variant.block_config(codegen::default_config(spec.family, spec.head_dim, spec.head_dim_v))
                      .value_or(codegen::default_config(spec.family, spec.head_dim, spec.head_dim_v));
    spec.gqa_group = o->gqa;
    spec.is_divisible = o->divisible;
    spec.has_block_mask = !o->no_block_mask && codegen::is_attention_family(spec.family) &&
                          spec.family != codegen::Family::bwd_preprocess;
    spec.has_full_blocks = spec.has_block_mask;
    spec.sparse_q_block = o->q_block;
    spec.sparse_kv_block = o->kv_block;
    jit::validate_arch(o->arch);
    codegen::check_shared_memory(spec, o->arch);
    if (o->format == "context") {
      write_output(o->output, codegen::template_context(spec).dump(2) + "\n");
      return kExitOk;
    }
    const jit::Source source = codegen::render(spec);
    if (o->format == "cu") {
      write_output(o->output, codegen::self_contained_source(source));
      if (!o->output.empty() && o->output != "-") std::fprintf(stderr, "wrote %s (%s)\n", o->output.c_str(), spec.describe().c_str());
      return kExitOk;
    }
    if (o->format == "cubin" && (o->output.empty() || o->output == "-"))
      throw UsageError("--format cubin writes binary: give an output file with -o");
    const jit::CompiledKernel compiled = codegen::compile_kernel(spec, o->arch);
    write_output(o->output, o->format == "ptx" ? compiled.ptx : compiled.cubin);
    for (const auto& [name, r] : compiled.resources)
      std::fprintf(stderr, "%s: %d registers, %d bytes stack, %d bytes spill stores, %d bytes spill loads, %zu bytes dynamic shared memory (%s)\n",
                   name.c_str(), r.registers, r.stack_frame_bytes, r.spill_store_bytes, r.spill_load_bytes,
                   spec.shared_memory_bytes(), compiled.from_disk_cache ? "from cache" : "compiled");
    if (!o->output.empty() && o->output != "-")
      std::fprintf(stderr, "wrote %s for %s (%s)\n", o->output.c_str(), o->arch.c_str(), spec.describe().c_str());
    return kExitOk;
  };
});

}  // namespace
}  // namespace flexjit::cli
