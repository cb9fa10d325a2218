// `flexjit emit`: render one kernel configuration (or the three backward kernels) and write its CUDA
// source, PTX or cubin. Needs no GPU: NVRTC compiles for the named architecture. Register and spill
// counts go to stderr.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/families/bwd_dkdv.hpp"
#include "codegen/families/decode.hpp"
#include "codegen/family.hpp"
#include "codegen/kernel_spec.hpp"
#include "codegen/kernel_store.hpp"
#include "codegen/mod_args.hpp"
#include "codegen/tma_maps.hpp"
#include "command.hpp"
#include "jit/compiler.hpp"
#include "mod_options.hpp"
#include "tune/config_space.hpp"

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

// "out/k.cu" -> "out/k.bwd_dq.cu": one file per kernel when one emit writes several.
std::string path_for_family(const std::string& path, std::string_view family) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + "." + std::string(family);
  return path.substr(0, dot) + "." + std::string(family) + path.substr(dot);
}

CommandRegistrar registrar("emit", "Render kernels and write their .cu, .ptx or .cubin (no GPU needed)", [](CLI::App& app) {
  struct Options {
    VariantOptions variant;
    std::string family = "fwd";
    std::string arch = "sm_90a";
    std::string format = "cu";
    std::string output;
    int gqa = 1;
    bool divisible = false;
    bool no_block_mask = false;
    bool paged = false;
    int page_size = 0;
    bool seq_lens = false;
    bool fast_dq = false;
    bool ordered_dq = false;
    bool long_chains = false;
    bool head_splits = false;
    int q_block = 128, kv_block = 128;
    std::string buffer_offsets = "auto";
  };
  auto o = std::make_shared<Options>();
  app.add_option("--family", o->family,
                 "kernel family: fwd, bwd_preprocess, bwd_dq, bwd_dkdv, bwd_buffer_grad, decode, decode_combine, block_mask, "
                 "diagonal_table, builtin; bwd is all three "
                 "backward kernels (-o NAME.EXT writes NAME.<family>.EXT for each; context: one JSON object by family)")
      ->capture_default_str();
  o->variant.add_mod_flags(app);
  o->variant.add_kernel_flags(app);
  app.add_option("--gqa", o->gqa, "query heads per kv head")->capture_default_str();
  app.add_flag("--divisible", o->divisible, "specialise for lengths that are multiples of the tiles");
  app.add_flag("--no-block-mask", o->no_block_mask, "visit every tile (no block-sparse tables)");
  app.add_flag("--paged", o->paged, "decode: read K/V from a page pool through a page table");
  app.add_option("--page-size", o->page_size,
                 "decode with --paged: the call's page size, for the default tiles (on sm_90a a page size whose "
                 "TMA boxes are multiples of 8 rows takes the TMA tiles); 0: the cp.async tiles")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_flag("--seq-lens", o->seq_lens, "fwd, bwd_dq, bwd_dkdv, block_mask: the per-sequence lengths variant (SeqLens)");
  app.add_flag("--fast-dq", o->fast_dq,
               "bwd_dkdv: the fast backward's kernel, which also sums dQ (sm_90a; configs ending in 'g' or 'ws')");
  app.add_flag("--ordered-dq", o->ordered_dq,
               "bwd_dkdv: the deterministic mode's form of that kernel, whose dQ sums take turns in a fixed order "
               "(sm_90a; configs ending in 'ws'; implies --fast-dq)");
  app.add_flag("--head-splits", o->head_splits,
               "bwd_dkdv with --fast-dq or --ordered-dq (sm_90a, configs ending in 'ws'): the kernel that may split each GQA group's "
               "query heads over its CTAs, each storing fp32 partial dK and dV (as a call takes it with few kv heads)");
  app.add_flag("--long-chains", o->long_chains,
               "bwd_dkdv with --ordered-dq: two chains of turns per query tile, as a call takes them under a mask "
               "without tile bounds (documents) or tables alone over 64 kv tiles or more");
  app.add_option("--q-block", o->q_block, "block-mask query block")->capture_default_str();
  app.add_option("--kv-block", o->kv_block, "block-mask kv block")->capture_default_str();
  app.add_option("--buffer-offsets", o->buffer_offsets,
                 "the mods' buffer reads: 32 (the variant a call takes when every buffer its mods read keeps its "
                 "offsets below 2^31), 64 (any other call), or auto: 32 where the mods read a buffer and the kernel "
                 "takes the 32-bit form (all but the dK/dV kernel that sums dQ)")
      ->check(CLI::IsMember({"auto", "32", "64"}))->capture_default_str();
  app.add_option("--arch", o->arch, "target architecture, e.g. sm_80, sm_90a (also picks the default block config)")
      ->capture_default_str();
  app.add_option("--format", o->format, "what to write: cu, ptx, cubin or context")
      ->check(CLI::IsMember({"cu", "ptx", "cubin", "context"}))->capture_default_str();
  app.add_option("-o,--output", o->output, "output file (default: stdout for cu/ptx/context)");
  return [o]() {
    const bool to_stdout = o->output.empty() || o->output == "-";
    std::vector<codegen::Family> families;
    if (o->family == "bwd") {
      if (o->variant.block_config(BlockConfig()).has_value())
        throw UsageError("--family bwd emits three kernels, each with its default block config; to choose a config, "
                         "emit --family bwd_dq or --family bwd_dkdv on its own");
      families = {codegen::Family::bwd_preprocess, codegen::Family::bwd_dq, codegen::Family::bwd_dkdv};  // backward order
    } else {
      try {
        families = {codegen::parse_family(o->family)};
      } catch (const UsageError& e) {  // name the CLI's extra choice too
        std::string text = e.what();
        if (!text.empty() && text.back() == ')') text.insert(text.size() - 1, "; bwd for all three backward kernels");
        throw UsageError(text);
      }
    }
    if (o->format == "cubin" && to_stdout)
      throw UsageError("--format cubin writes binary: give an output file with -o");
    jit::validate_arch(o->arch);
    const Declarations declarations = o->variant.declarations();
    std::optional<Expr> score, mask;
    if (!o->variant.score.empty()) score = Expr::parse(ModKind::score, o->variant.score, declarations);
    if (!o->variant.mask.empty()) mask = Expr::parse(ModKind::mask, o->variant.mask, declarations);

    nlohmann::json contexts = nlohmann::json::object();  // --format context of several kernels: one document
    for (const codegen::Family family : families) {
      codegen::KernelSpec spec;
      spec.family = family;
      spec.declarations = declarations;
      if (score) spec.score_mod = *score;
      if (mask) spec.mask_mod = *mask;
      spec.dtype = o->variant.element_type();
      spec.set_head_dims(o->variant.head_dim, o->variant.value_head_dim(), o->arch);  // the tiles a call on `arch` takes
      spec.gqa_group = o->gqa;
      spec.is_divisible = o->divisible;
      spec.has_block_mask = !o->no_block_mask && codegen::descriptor(spec.family).tiled;
      spec.has_full_blocks = spec.has_block_mask;
      spec.paged = o->paged && family == codegen::Family::decode;
      spec.seq_lens = o->seq_lens && (family == codegen::Family::fwd || family == codegen::Family::bwd_dq ||
                                      family == codegen::Family::bwd_dkdv || family == codegen::Family::block_mask);
      spec.dq_accumulate = (o->fast_dq || o->ordered_dq) && family == codegen::Family::bwd_dkdv;
      spec.dq_ordered = o->ordered_dq && family == codegen::Family::bwd_dkdv;
      spec.dq_long_chains = o->long_chains && family == codegen::Family::bwd_dkdv;
      spec.dkdv_head_splits = o->head_splits && family == codegen::Family::bwd_dkdv;
      const bool reads_buffers = codegen::reads_buffers(declarations, {&spec.score_mod, &spec.mask_mod});
      if (o->buffer_offsets == "32" && !reads_buffers)
        throw UsageError("--buffer-offsets 32: the mods read no buffer, so there are no buffer reads to narrow");
      spec.buffer_offsets_32 = o->buffer_offsets == "32" ||
                               (o->buffer_offsets == "auto" && reads_buffers &&
                                codegen::kernel_takes_32_bit_reads(spec.dq_accumulate, spec.score_mod, spec.mask_mod));
      spec.sparse_q_block = o->q_block;
      spec.sparse_kv_block = o->kv_block;
      // Without a config, the one a call on `arch` launches when tuning is off (the wgmma kernels on
      // sm_90a), so what is emitted is what runs.
      spec.config = codegen::default_config(spec.family, spec.head_dim, spec.head_dim_v);
      // Decoding picks its tiles per call (one query row per kv-head group here, as a decode step of
      // long sequences: emit knows no lengths).
      codegen::DecodeCacheFacts cache;
      cache.paged = spec.paged;
      cache.tma_reads_cache = !spec.paged || o->page_size > 0;
      cache.page_size = spec.paged ? o->page_size : 0;
      const BlockConfig launched =
          family == codegen::Family::decode
              ? codegen::decode_default_config(family, spec.head_dim, spec.head_dim_v, spec.gqa_group, o->arch, cache)
              : tune::default_for(spec, o->arch);
      spec.config = o->variant.block_config(launched).value_or(launched);
      codegen::set_dkdv_half_slab_tiles(spec, o->variant.head_dim, o->variant.value_head_dim(), o->arch);
      if (o->head_splits && family == codegen::Family::bwd_dkdv && !codegen::dkdv_splits_heads(spec))
        throw UsageError("--head-splits: only the warp-specialised dK/dV kernel that sums dQ splits GQA groups over "
                         "its CTAs (--fast-dq or --ordered-dq, a config ending in 'ws' on sm_90a); this one is " +
                         spec.config.str() + (spec.dq_accumulate ? "" : " without --fast-dq"));
      // A paged call's TMA boxes: a page's rows where the pages cut the key tiles.
      if (family == codegen::Family::decode)
        spec.decode_box_rows = codegen::decode_box_rows(spec.config, spec.paged, o->page_size);
      // Tile bounds as a call whose cache fits the in-kernel list would take them.
      spec.decode_tile_bounds =
          family == codegen::Family::decode && codegen::decode_classifies_by_bounds(spec, 0, o->arch);
      codegen::check_shared_memory(spec, o->arch);
      // The form that runs: the lean one where the family has one and the full form spills. For
      // PTX and cubin that choice is the compile itself, kept for the write below.
      std::optional<codegen::CompiledSpec> compiled;
      if (o->format == "ptx" || o->format == "cubin") {
        compiled = codegen::compile_kernel(spec, o->arch);
        spec = compiled->spec;
      } else {
        spec = codegen::compiled_form(spec, o->arch);
      }
      const std::string output = families.size() > 1 && !to_stdout && o->format != "context"
                                     ? path_for_family(o->output, codegen::family_name(family))
                                     : o->output;
      // Several kernels to one stream: a line names each before its text.
      if (families.size() > 1 && to_stdout && o->format != "context")
        std::cout << "// ==== flexjit emit --family " << codegen::family_name(family) << " ====\n";
      if (o->format == "context" && families.size() > 1) {
        contexts[std::string(codegen::family_name(family))] = codegen::template_context(spec);
        continue;
      }
      if (o->format == "context") {
        write_output(output, codegen::template_context(spec).dump(2) + "\n");
        continue;
      }
      if (o->format == "cu") {
        write_output(output, codegen::self_contained_source(codegen::render(spec)));
        if (!to_stdout) std::fprintf(stderr, "wrote %s (%s)\n", output.c_str(), spec.describe().c_str());
        continue;
      }
      const jit::CompiledKernel& kernel = compiled->kernel;
      write_output(output, o->format == "ptx" ? kernel.ptx : kernel.cubin);
      for (const auto& [name, r] : kernel.resources)
        std::fprintf(stderr, "%s: %d registers, %d bytes stack, %d bytes spill stores, %d bytes spill loads, %zu bytes dynamic shared memory (%s)\n",
                     name.c_str(), r.registers, r.stack_frame_bytes, r.spill_store_bytes, r.spill_load_bytes,
                     spec.shared_memory_bytes(), kernel.from_disk_cache ? "from cache" : "compiled");
      if (!to_stdout)
        std::fprintf(stderr, "wrote %s for %s (%s)\n", output.c_str(), o->arch.c_str(), spec.describe().c_str());
    }
    if (!contexts.empty()) write_output(o->output, contexts.dump(2) + "\n");
    return kExitOk;
  };
});

}  // namespace
}  // namespace flexjit::cli
