// Golden files of the code generator: for a few KernelSpecs that cover every family and the
// interesting specialisations, the template context (JSON), the rendered kernel source and the
// per-variant header flexjit_variant.cuh must equal tests/codegen/golden/<case>.{context.json,cu,
// variant.cuh} byte for byte. A template or emitter change that alters generated code shows up
// here as a reviewable diff.
//
// FLEXJIT_UPDATE_GOLDEN=1 rewrites the golden files from the current code instead of comparing;
// review `git diff tests/codegen/golden` before committing them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_spec.hpp"

namespace flexjit::codegen {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() { return fs::path(FLEXJIT_TEST_DIR) / "codegen" / "golden"; }

bool updating() {
  const char* v = std::getenv("FLEXJIT_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (!text.empty() && text.back() != '\n') lines.back() += "\\ No newline at end of file";
  return lines;
}

// A unified-style diff of the differing middle: lines common to both ends are trimmed, up to
// `context` lines of them are shown around the change, and at most 40 changed lines per side.
std::string diff(const std::string& expected, const std::string& actual) {
  const auto want = split_lines(expected), got = split_lines(actual);
  size_t head = 0;
  while (head < want.size() && head < got.size() && want[head] == got[head]) ++head;
  size_t tail = 0;
  while (tail < want.size() - head && tail < got.size() - head &&
         want[want.size() - 1 - tail] == got[got.size() - 1 - tail])
    ++tail;
  const size_t context = 3, limit = 40;
  std::ostringstream out;
  const size_t from = head > context ? head - context : 0;
  out << "@@ golden lines " << head + 1 << "-" << want.size() - tail << ", actual lines " << head + 1 << "-"
      << got.size() - tail << " @@\n";
  for (size_t i = from; i < head; ++i) out << "  " << want[i] << "\n";
  for (size_t i = head, n = 0; i < want.size() - tail; ++i, ++n) {
    if (n == limit) {
      out << "  ... " << (want.size() - tail - i) << " more golden lines\n";
      break;
    }
    out << "- " << want[i] << "\n";
  }
  for (size_t i = head, n = 0; i < got.size() - tail; ++i, ++n) {
    if (n == limit) {
      out << "  ... " << (got.size() - tail - i) << " more actual lines\n";
      break;
    }
    out << "+ " << got[i] << "\n";
  }
  for (size_t i = got.size() - tail, n = 0; i < got.size() && n < context; ++i, ++n) out << "  " << got[i] << "\n";
  return out.str();
}

// Compares `actual` with golden/<file>, or writes it there under FLEXJIT_UPDATE_GOLDEN=1.
void expect_golden(const std::string& file, const std::string& actual) {
  const fs::path path = golden_dir() / file;
  if (updating()) {
    fs::create_directories(golden_dir());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::printf("updated %s\n", path.string().c_str());
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << "missing golden file " << path
                                << "; create it with FLEXJIT_UPDATE_GOLDEN=1 and review it";
  const std::string expected = read_file(path);
  if (expected == actual) return;
  ADD_FAILURE() << "generated text differs from " << path << " (" << expected.size() << " bytes golden, "
                << actual.size() << " bytes now)\n"
                << diff(expected, actual)
                << "If the change is intended, rerun with FLEXJIT_UPDATE_GOLDEN=1 and review the diff.";
}

Declarations alibi_document_declarations() {
  Declarations d;
  d.buffers.push_back({"slope", DType::f32, {16}});
  d.buffers.push_back({"doc", DType::i32, {4096}});
  return d;
}

struct GoldenCase {
  std::string name;
  std::function<KernelSpec()> make;
};

// Specs as Attention builds them for a call (block mask with full blocks when there is a mask).
std::vector<GoldenCase> golden_cases() {
  return {
      {"fwd_causal_bf16_d128",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.dtype = DType::bf16;
         s.head_dim = s.head_dim_v = 128;
         s.config = default_config(s.family, 128, 128);
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.is_divisible = true;
         return s;
       }},
      {"fwd_alibi_document_f16_d64_gqa4",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.dtype = DType::f16;
         s.head_dim = s.head_dim_v = 64;
         s.gqa_group = 4;
         s.config = default_config(s.family, 64, 64);
         s.declarations = alibi_document_declarations();
         s.score_mod = Expr::parse(ModKind::score, mods::alibi("slope"), s.declarations);
         s.mask_mod = Expr::parse(ModKind::mask, mods::document("doc"), s.declarations);
         s.has_block_mask = s.has_full_blocks = true;
         s.is_divisible = true;
         return s;
       }},
      {"bwd_dq_softcap_bf16_d128",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dq;
         s.head_dim = s.head_dim_v = 128;
         s.config = default_config(s.family, 128, 128);
         s.score_mod = Expr::parse(ModKind::score, mods::softcap(30));
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         return s;
       }},
      {"bwd_dkdv_splits_bf16_d256",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 256;
         s.config = default_config(s.family, 256, 256);
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.is_divisible = true;
         return s;
       }},
      {"block_mask_document",
       [] {
         KernelSpec s;
         s.family = Family::block_mask;
         s.config = default_config(s.family, 0, 0);
         s.declarations.buffers.push_back({"doc", DType::i32, {-1}});
         s.mask_mod = Expr::parse(ModKind::mask, mods::document("doc"), s.declarations);
         return s;
       }},
      {"bwd_preprocess_dv192",
       [] {
         KernelSpec s;
         s.family = Family::bwd_preprocess;
         s.head_dim = 128;
         s.head_dim_v = 192;
         s.config = default_config(s.family, 128, 192);
         return s;
       }},
      // The Hopper path (wgmma) beyond the suite's bf16 d64/d128: f16 with head dims 192 and 256.
      {"fwd_wgmma_f16_d192",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.dtype = DType::f16;
         s.head_dim = s.head_dim_v = 192;
         s.config = BlockConfig::parse("m128n64w8s2g");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         return s;
       }},
      // The warp-specialised forward (TMA producer, consumer warpgroups), with a GQA ratio of 3.
      {"fwd_ws_alibi_bf16_d128_gqa3",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.head_dim = s.head_dim_v = 128;
         s.gqa_group = 3;
         s.config = BlockConfig::parse("m128n128w8s2ws");
         s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
         s.score_mod = Expr::parse(ModKind::score, "score + slope[h] * (kv_idx - q_idx)", s.declarations);
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         return s;
       }},
      // The warp-specialised forward under the document mask, nested: the mask's column values
      // (doc[kv_idx] and what start[] gives for it) computed once per key of a masked tile.
      {"fwd_ws_nested_document_bf16_d64",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.head_dim = s.head_dim_v = 64;
         s.config = BlockConfig::parse("m128n128w8s2ws");
         s.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
         s.declarations.buffers.push_back(BufferDecl::parse("start:i32:?"));
         s.mask_mod = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && kv_idx - start[doc[kv_idx]] >= 0",
                                  s.declarations);
         s.has_block_mask = s.has_full_blocks = true;
         s.buffer_offsets_32 = true;
         return s;
       }},
      // The wide warp-specialised tiles, unmasked: three consumer warpgroups over 192 query rows
      // (d64), and 176-key tiles (f16 d128, lengths the tiles divide).
      {"fwd_ws_m192_bf16_d64",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.head_dim = s.head_dim_v = 64;
         s.config = BlockConfig::parse("m192n128w12s2ws");
         return s;
       }},
      {"fwd_ws_n176_f16_d128",
       [] {
         KernelSpec s;
         s.family = Family::fwd;
         s.dtype = DType::f16;
         s.head_dim = s.head_dim_v = 128;
         s.config = BlockConfig::parse("m128n176w8s2ws");
         s.is_divisible = true;
         return s;
       }},
      {"bwd_dq_wgmma_f16_d256",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dq;
         s.dtype = DType::f16;
         s.head_dim = s.head_dim_v = 256;
         s.config = BlockConfig::parse("m64n32w4s2g");
         s.score_mod = Expr::parse(ModKind::score, mods::softcap(30));
         s.has_block_mask = s.has_full_blocks = false;
         return s;
       }},
      {"bwd_dkdv_wgmma_f16_d256",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.dtype = DType::f16;
         s.head_dim = s.head_dim_v = 256;
         s.config = BlockConfig::parse("m32n64w4s2g");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.is_divisible = true;
         return s;
       }},
      // The fast backward's dK/dV kernel (dQ summed there), GQA 4:1, d64: two warpgroups
      // splitting the kv rows of dQ += dS K.
      {"bwd_dkdv_fast_bf16_d64_gqa4",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 64;
         s.gqa_group = 4;
         s.config = BlockConfig::parse("m64n128w8s2g");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // The warp-specialised dK/dV kernel of the fast backward, d128, ALiBi + causal: a producer
      // warp (TMA), a dQ writer warp (bulk reductions) and two consumer warpgroups.
      {"bwd_dkdv_ws_bf16_d128_alibi",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 128;
         s.config = BlockConfig::parse("m64n128w8s2ws");
         s.declarations.buffers.push_back(BufferDecl::parse("slope:f32:?"));
         s.score_mod = Expr::parse(ModKind::score, "score + slope[h] * (kv_idx - q_idx)", s.declarations);
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // The same kernel at d256, GQA 8:1, causal: one column slice of dK, dV and dQ per consumer
      // warpgroup, dQ staged for tensor reductions (no pairs of CTAs since session (zx)).
      {"bwd_dkdv_ws_bf16_d256_gqa8_causal",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 256;
         s.gqa_group = 8;
         s.config = BlockConfig::parse("m64n64w8s2ws");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // The fast kernel at d128, GQA 4:1, causal, whole groups: one walk for the group's heads in
      // the consumers' registers, and each CTA's landed dQ shares counted for the early
      // conversion (DQ_DONE_COUNT).
      {"bwd_dkdv_ws_bf16_d128_gqa4_causal_counts",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 128;
         s.gqa_group = 4;
         s.config = BlockConfig::parse("m64n128w8s2ws");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // The fast kernel at d128, GQA 8:1, causal, with its GQA groups split over CTAs
      // (dkdv_head_splits: HEAD_SPLITS, the walk over a split's heads and the fp32 partial stores).
      {"bwd_dkdv_ws_bf16_d128_gqa8_head_splits",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 128;
         s.gqa_group = 8;
         s.config = BlockConfig::parse("m64n128w8s2ws");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         s.dkdv_head_splits = true;
         return s;
       }},
      // The same at d64, prefix LM: dQ by turns, each tile's share a tile late (DQ_DEFERRED, four
      // dSᵀ tiles at three stages), warpgroup 1's walk started behind warpgroup 0's.
      {"bwd_dkdv_ws_bf16_d64_prefix_lm_deferred",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 64;
         s.config = BlockConfig::parse("m64n128w8s3ws");
         s.mask_mod = Expr::parse(ModKind::mask, "q_idx >= kv_idx || kv_idx < 1024");
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // The same at d64 beside a per-head relative table, causal: the score_mod's diagonal values
      // staged once per diagonal of each warpgroup's tile (dkdv_score_diagonal_values), read by each
      // recomputed score.
      {"bwd_dkdv_ws_bf16_d64_relative_table_diagonals",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 64;
         s.config = BlockConfig::parse("m64n128w8s3ws");
         s.declarations.buffers.push_back(BufferDecl::parse("relh:f32:?x?"));
         s.score_mod = Expr::parse(ModKind::score, "score + relh[h][kv_idx - q_idx + 4096]", s.declarations);
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // The same at d256 with soft-capping, GQA 2:1 (no pairs): the consumer warpgroups split the
      // tile's queries for Sᵀ, dPᵀ and the score_mod's pass (SCORE_HALVES) and read each other's
      // Pᵀ and dSᵀ halves from shared memory.
      {"bwd_dkdv_ws_bf16_d256_softcap_halves",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 256;
         s.gqa_group = 2;
         s.config = BlockConfig::parse("m64n64w8s2ws");
         s.score_mod = Expr::parse(ModKind::score, "30.0 * tanh(score / 30.0)");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // MLA's 192 / 128 on 192-column tiles (codegen::set_dkdv_half_slab_tiles), causal: slices of 96
      // columns (wgmmas of 64 and 32), dQ pieces of 64 columns into each warpgroup's buffer and of
      // 32 into the shared one, which warp 3 adds (HALF_SLAB_SLICES).
      {"bwd_dkdv_ws_bf16_d192_128_causal_half_slab",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = 192;
         s.head_dim_v = 128;
         s.config = BlockConfig::parse("m64n64w8s3ws");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = true;
         return s;
       }},
      // Its ordered form (the deterministic mode), GQA 2:1, causal: the writer warp takes turns on
      // the query tiles' counters, ranks counted from the kv_* rows; descending (GQA under a mask
      // with tile bounds).
      {"bwd_dkdv_ordered_bf16_d128_causal",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 128;
         s.gqa_group = 2;
         s.config = BlockConfig::parse("m64n128w8s2ws");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = s.dq_ordered = true;
         return s;
       }},
      // The ordered form with soft-capping: the score_mod's derivative folded into Pᵀ as Pᵀ is
      // computed (FOLD_SCORE_GRAD), Pᵀ packed for dV there.
      {"bwd_dkdv_ordered_bf16_d128_softcap_folded",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 128;
         s.config = BlockConfig::parse("m64n128w8s2ws");
         s.score_mod = Expr::parse(ModKind::score, "30.0 * tanh(score / 30.0)");
         s.mask_mod = Expr::parse(ModKind::mask, mods::causal());
         s.has_block_mask = s.has_full_blocks = true;
         s.dq_accumulate = s.dq_ordered = true;
         return s;
       }},
      // The ordered form under documents without GQA: the sums run from the last kv tile down
      // (DQ_ASCENDING, codegen::ordered_dq_ascending) in every pair but the last wave's, whose
      // walks ascend and whose units launch in reverse.
      {"bwd_dkdv_ordered_bf16_d128_documents",
       [] {
         KernelSpec s;
         s.family = Family::bwd_dkdv;
         s.head_dim = s.head_dim_v = 128;
         s.config = BlockConfig::parse("m64n128w8s2ws");
         s.declarations.buffers.push_back(BufferDecl::parse("doc:i32:?"));
         s.mask_mod = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", s.declarations);
         s.has_block_mask = s.has_full_blocks = true;
         s.buffer_offsets_32 = true;
         s.dq_accumulate = s.dq_ordered = true;
         return s;
       }},
  };
}

// Names the case in gtest's failure lines (instead of a hex dump of the struct).
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

class CodegenGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CodegenGolden, ContextSourceAndVariantHeader) {
  const GoldenCase& c = GetParam();
  const KernelSpec spec = c.make();
  ASSERT_NO_THROW(spec.validate());
  const jit::Source source = render(spec);
  expect_golden(c.name + ".context.json", template_context(spec).dump(2) + "\n");
  expect_golden(c.name + ".cu", source.text);
  // The headers render() provides, written out by hand per case.
  std::vector<std::string> headers;
  for (const auto& [name, text] : source.headers) headers.push_back(name);
  std::vector<std::string> expected_headers = {"flexjit_attention.cuh", "flexjit_bwd_gemm.cuh", "flexjit_epilogue.cuh",
                                               "flexjit_expr.cuh",      "flexjit_mma.cuh",      "flexjit_params.cuh",
                                               "flexjit_softmax.cuh",   "flexjit_tma.cuh",      "flexjit_variant.cuh",
                                               "flexjit_warp_gemm.cuh"};
  if (c.name.find("wgmma") != std::string::npos || c.name.find("_ws_") != std::string::npos ||
      c.name.find("_fast_") != std::string::npos || c.name.find("_ordered_") != std::string::npos)
    expected_headers.push_back("flexjit_wgmma.cuh");
  expected_headers.push_back("flexjit_wgmma_ops.cuh");
  std::sort(expected_headers.begin(), expected_headers.end());
  EXPECT_EQ(headers, expected_headers);
  ASSERT_EQ(source.headers.count("flexjit_variant.cuh"), 1u) << "render() must provide the variant header";
  const std::string& variant = source.headers.at("flexjit_variant.cuh");
  EXPECT_EQ(variant.rfind("// Per-variant code emitted by flexjit's expression compiler.\n#pragma once\n"
                          "struct FlexjitModArgs {\n",
                          0),
            0u)
      << variant;
  // Only the backward's dQ and dK/dV kernels apply d(score_mod)/d(score).
  const bool backward = c.name.rfind("bwd_dq", 0) == 0 || c.name.rfind("bwd_dkdv", 0) == 0;
  EXPECT_EQ(variant.find("flexjit_score_grad(") != std::string::npos, backward) << variant;
  expect_golden(c.name + ".variant.cuh", variant);
  if (source.headers.count("flexjit_wgmma.cuh")) expect_golden(c.name + ".wgmma.cuh", source.headers.at("flexjit_wgmma.cuh"));
}

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(Specs, CodegenGolden, ::testing::ValuesIn(golden_cases()), case_name);

// Every golden file belongs to a case: a renamed or deleted case must not leave stale files.
TEST(CodegenGoldenFiles, NoOrphans) {
  if (updating()) GTEST_SKIP() << "updating golden files";
  std::vector<std::string> expected;
  for (const auto& c : golden_cases())
    for (const char* ext : {".context.json", ".cu", ".variant.cuh", ".wgmma.cuh"}) expected.push_back(c.name + ext);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(golden_dir(), ec)) {
    const std::string file = entry.path().filename().string();
    EXPECT_TRUE(std::find(expected.begin(), expected.end(), file) != expected.end())
        << "golden/" << file << " belongs to no case of golden_test.cpp";
  }
  EXPECT_FALSE(ec) << ec.message();
}

// The golden cases are what they claim to be (so a default change cannot silently retarget them).
TEST(CodegenGoldenFiles, CasesCoverTheirSpecialisations) {
  const auto cases = golden_cases();
  auto spec = [&](const std::string& name) {
    for (const auto& c : cases)
      if (c.name == name) return c.make();
    throw std::runtime_error("no case " + name);
  };
  EXPECT_EQ(spec("bwd_dkdv_splits_bf16_d256").describe().find("splits=2") != std::string::npos, true)
      << spec("bwd_dkdv_splits_bf16_d256").describe();
  EXPECT_EQ(spec("fwd_alibi_document_f16_d64_gqa4").describe(),
            "fwd f16 d64/64 m128n64w4s2 gqa4 divisible=1 block_mask=1 full_blocks=1 safe_rows=0 "
            "score_mod=score + slope[h] * (kv_idx - q_idx) mask_mod=doc[q_idx] == doc[kv_idx]");
  EXPECT_EQ(spec("fwd_causal_bf16_d128").describe(),
            "fwd bf16 d128/128 m128n32w4s2 gqa1 divisible=1 block_mask=1 full_blocks=1 safe_rows=0 "
            "score_mod=score mask_mod=q_idx >= kv_idx");
  EXPECT_EQ(spec("bwd_preprocess_dv192").describe(),
            "bwd_preprocess bf16 d128/192 m0n0w8s0 gqa1 divisible=0 block_mask=0 full_blocks=0 safe_rows=0 "
            "score_mod=score mask_mod=true");
  EXPECT_EQ(spec("block_mask_document").describe(), "block_mask blocks 128x128 mask_mod=doc[q_idx] == doc[kv_idx]");
  EXPECT_EQ(spec("fwd_wgmma_f16_d192").describe(),
            "fwd f16 d192/192 m128n64w8s2g gqa1 divisible=0 block_mask=1 full_blocks=1 safe_rows=0 "
            "score_mod=score mask_mod=q_idx >= kv_idx");
  EXPECT_EQ(spec("fwd_ws_alibi_bf16_d128_gqa3").describe(),
            "fwd bf16 d128/128 m128n128w8s2ws gqa3 divisible=0 block_mask=1 full_blocks=1 safe_rows=0 "
            "score_mod=score + slope[h] * (kv_idx - q_idx) mask_mod=q_idx >= kv_idx");
  EXPECT_EQ(spec("bwd_dkdv_wgmma_f16_d256").describe(),
            "bwd_dkdv f16 d256/256 m32n64w4s2g gqa1 divisible=1 block_mask=1 full_blocks=1 safe_rows=0 "
            "score_mod=score mask_mod=q_idx >= kv_idx splits=2");
  EXPECT_TRUE(ordered_dq_ascending(spec("bwd_dkdv_ordered_bf16_d128_documents")));
  EXPECT_FALSE(ordered_dq_ascending(spec("bwd_dkdv_ordered_bf16_d128_causal")));
}

}  // namespace
}  // namespace flexjit::codegen
