#include "flexjit/attention.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "../../templates/flexjit_params.cuh"
#include "codegen/tma_maps.hpp"
#include "codegen/error_words.hpp"
#include "codegen/families/bwd_dkdv.hpp"
#include "codegen/families/fwd.hpp"
#include "codegen/family.hpp"
#include "codegen/kernel_store.hpp"
#include "attention/decode.hpp"
#include "attention/kernel_errors.hpp"
#include "codegen/launch.hpp"
#include "attention/buffer_grads.hpp"
#include "attention/bwd_head_splits.hpp"
#include "attention/stream_fork.hpp"
#include "attention/diagonal_table.hpp"
#include "attention/stream_scratch.hpp"
#include "attention/tensor_checks.hpp"
#include "codegen/mod_args.hpp"
#include "mask/seq_lens.hpp"
#include "jit/driver.hpp"
#include "jit/memo.hpp"
#include "common/parallel.hpp"
#include "flexjit/autotune.hpp"
#include "tune/autotune_cache.hpp"
#include "tune/config_space.hpp"
#include "tune/tuner.hpp"
#include "flexjit/error.hpp"

namespace flexjit {

struct Attention::Impl {
  AttentionSpec spec;
  Expr score = Expr::identity_score();
  Expr mask = Expr::no_mask();
  // score.score_prescale(): the kernels take scale times it (FlexjitFwdParams::score_scale).
  float score_prescale = 1.f;
  std::string arch;  // resolved on first launch
  std::mutex arch_mutex;

  const std::string& target_arch() {
    std::lock_guard<std::mutex> lock(arch_mutex);
    if (arch.empty()) arch = codegen::resolve_arch(spec.arch);
    return arch;
  }
  // The device's identity, read once (part of the autotune cache key).
  const DeviceInfo& device() {
    std::lock_guard<std::mutex> lock(arch_mutex);
    if (!device_info) device_info = current_device();
    return *device_info;
  }

  std::optional<DeviceInfo> device_info;
  std::mutex choices_mutex;
  std::map<std::string, KernelChoice> choices;  // by family: what the latest call used

  // Kernels chosen and loaded per (context id, call signature) (see resolve()): a repeat call is
  // a hash lookup. Bounded: a service that sees many lengths keeps the most recent signatures.
  struct Resolved {
    KernelChoice choice;
    codegen::KernelSpec spec;
    std::shared_ptr<const codegen::ReadyKernel> kernel;
    // The diagonal_table kernel where `spec` takes the table form (forward_diagonal_table,
    // dkdv_diagonal_table), loaded with it: a repeat call looks nothing up for it.
    std::shared_ptr<const codegen::ReadyKernel> diagonal_table;
  };
  static constexpr size_t kResolvedCapacity = 256;
  jit::LruMemo<std::shared_ptr<const Resolved>> resolved{kResolvedCapacity};

  // The deterministic backward's way per (context id, call signature, autotune mode), once
  // measured or read from the autotune cache (see measured_deterministic_way): a repeat call
  // skips the two specs, the key and the cache lookup. The mode is in the key because a choice
  // measured with `on` is measured again under `max`.
  enum class DqWay { unknown, ordered, kernel };
  jit::LruMemo<DqWay> deterministic_ways{kResolvedCapacity};

  // Records what a call used; `first_use` says this call paid the kernel's compile or load.
  void remember(KernelChoice choice, const codegen::ReadyKernel& kernel, bool first_use) {
    choice.compile_ms = kernel.compiled.compile_ms;
    choice.from_disk_cache = kernel.compiled.from_disk_cache;
    choice.load_ms = first_use ? kernel.ready_ms : 0.0;
    choice.lean_registers = kernel.spec.lean_registers;
    choice.tile_head_dim = kernel.spec.head_dim;
    choice.tile_head_dim_v = kernel.spec.head_dim_v;
    std::lock_guard<std::mutex> lock(choices_mutex);
    choices[choice.family] = choice;
  }
};

namespace {

// An absent mod is the identity / `true`, still checked against the spec's declarations: every
// kernel of the variant (block mask builder included) then takes the same buffers and params.
Expr parse_or_default(ModKind kind, const std::string& text, const Declarations& decls) {
  if (text.empty()) return Expr::parse(kind, kind == ModKind::score ? "score" : "true", decls);
  return Expr::parse(kind, text, decls);
}

}  // namespace

Attention::Attention(AttentionSpec spec) {
  if (spec.head_dim_v == 0) spec.head_dim_v = spec.head_dim;
  auto impl = std::make_shared<Impl>();
  impl->score = parse_or_default(ModKind::score, spec.score_mod, spec.declarations);
  impl->score_prescale = static_cast<float>(impl->score.score_prescale());
  impl->mask = parse_or_default(ModKind::mask, spec.mask_mod, spec.declarations);
  check_learnable_buffers(impl->score, impl->mask);
  attention::check_buffer_grad_reads(impl->score);
  // Validate dtype, head dims and an explicit config now rather than at the first call.
  codegen::KernelSpec probe = codegen::attention_kernel_spec(codegen::Family::fwd, spec, impl->score, impl->mask, "");
  if (spec.fwd_config) probe.config = *spec.fwd_config;
  probe.validate();
  // The decode tiles are checked against the call's GQA group and page size when it runs; a config
  // with unset fields is wrong whatever the call, so it is named now.
  if (spec.decode_config && !spec.decode_config->is_set())
    throw UsageError("decode config " + spec.decode_config->str() + " has unset fields");
  if (!spec.arch.empty()) impl->arch = codegen::resolve_arch(spec.arch);
  impl->spec = std::move(spec);
  impl_ = std::move(impl);
}

const AttentionSpec& Attention::spec() const noexcept { return impl_->spec; }
const Expr& Attention::score_mod() const noexcept { return impl_->score; }
const Expr& Attention::mask_mod() const noexcept { return impl_->mask; }

BlockMask Attention::block_mask(int batch, int q_heads, int q_len, int kv_len, Stream stream,
                                const ModValues& values) const {
  return BlockMask::build_on_gpu(impl_->mask, batch, q_heads, q_len, kv_len, values, stream, 128,
                                 128, impl_->target_arch());
}

BlockMask Attention::block_mask(int batch, int q_heads, int q_len, int kv_len, const SeqLens& seq_lens, Stream stream,
                                const ModValues& values) const {
  return BlockMask::build_on_gpu(impl_->mask, batch, q_heads, q_len, kv_len, seq_lens, values, stream, 128, 128,
                                 impl_->target_arch());
}

namespace {

// The kernel spec of one attention family for a call of this shape.
codegen::KernelSpec attention_spec(codegen::Family family, const AttentionSpec& spec, const Expr& score,
                                   const Expr& mask, const attention::ProblemShape& shape,
                                   const BlockMask* block_mask, const std::optional<BlockConfig>& config,
                                   const std::string& arch) {
  codegen::KernelSpec ks = codegen::attention_kernel_spec(family, spec, score, mask, arch);
  ks.gqa_group = shape.gqa_group();
  // Only the forward folds the scale into its exp2; the backward recomputes P from the LSE. Its
  // dK/dV kernel may seed Sᵀ from the forward's kind of diagonal table where the score_mod is
  // `score + V` (dkdv_diagonal_seed), under the forward's conditions on the scale.
  const bool scale_shapes_kernel =
      family == codegen::Family::fwd ||
      (family == codegen::Family::bwd_dkdv && score.diagonal_value_is_added_to_score());
  ks.negative_scale = scale_shapes_kernel && shape.negative_scale;
  ks.small_scale = scale_shapes_kernel && shape.small_scale;
  ks.buffer_offsets_32 = shape.buffer_offsets_32 &&
                         codegen::kernel_takes_32_bit_reads(family == codegen::Family::bwd_dkdv && shape.fast_dq,
                                                            score, mask);
  if (config) ks.config = *config;
  ks.buffer_grads = family == codegen::Family::bwd_dq && !score.buffer_gradients().empty();
  ks.dq_accumulate = family == codegen::Family::bwd_dkdv && shape.fast_dq;
  ks.dq_ordered = ks.dq_accumulate && shape.ordered_dq;
  ks.dkdv_head_splits = ks.dq_accumulate && shape.kv_head_splits;
  // Per-sequence lengths: a kernel variant of its own (kernels without them stay as they are). An
  // empty sequence has rows with nothing to attend to, whatever the spec promised.
  ks.seq_lens = shape.seq_lens && (family == codegen::Family::fwd || family == codegen::Family::bwd_dq ||
                                   family == codegen::Family::bwd_dkdv);
  if (ks.seq_lens) ks.rows_guaranteed_safe = false;
  if (block_mask != nullptr) {
    ks.has_block_mask = true;
    ks.has_full_blocks = true;
    ks.sparse_q_block = block_mask->shape().q_block;
    ks.sparse_kv_block = block_mask->shape().kv_block;
  }
  // The warp-specialised dK/dV kernel's own tiles at head dims 129..192 (the dQ sums keep the call's).
  codegen::set_dkdv_half_slab_tiles(ks, spec.head_dim, spec.head_dim_v, arch);
  // Without tables, a mask whose tiles interval bounds can class has the forward walk only the
  // key tiles they keep (and skip mask_mod where they find every position kept).
  ks.tile_bounds_walk = family == codegen::Family::fwd && ks.config.warp_specialized && !ks.has_block_mask &&
                        !ks.seq_lens && ks.has_mask() && codegen::forward_walks_by_bounds(ks.mask_mod);
  ks.dq_long_chains = codegen::ordered_long_chains(ks, shape.kv_len);
  const codegen::FamilyDescriptor& desc = codegen::descriptor(family);
  if (!desc.tiled) return ks;  // row-wise: no tiles to divide
  // Query tiles are walked in steps of block_m (or whole query blocks, through q_* tables), kv
  // tiles in steps of block_n (or whole kv blocks, through kv_* tables).
  const int q_step = desc.walks_kv_rows && ks.has_block_mask ? ks.sparse_q_block : ks.config.block_m;
  const int kv_step = !desc.walks_kv_rows && ks.has_block_mask ? ks.sparse_kv_block : ks.config.block_n;
  ks.is_divisible = !ks.seq_lens && shape.q_len % q_step == 0 && shape.kv_len % kv_step == 0 &&
                    shape.q_len % ks.config.block_m == 0 && shape.kv_len % ks.config.block_n == 0;
  if (family == codegen::Family::bwd_dkdv)
    ks.is_divisible = ks.is_divisible && shape.kv_len % codegen::dkdv_kv_len_multiple(ks) == 0;
  return ks;
}

// The current context's device's SMs (persistent grids are sized from them), read once per thread
// and context.
int device_sm_count() {
  static thread_local std::pair<CUcontext, int> cache{nullptr, 0};
  const CUcontext context = jit::ensure_context();
  if (cache.first != context) cache = {context, current_device().sm_count};
  return cache.second;
}

// The split of each GQA group's query heads over the warp-specialised dK/dV kernel's CTAs (both
// modes; attention/bwd_head_splits.hpp): FLEXJIT_BWD_HEAD_SPLITS, or the simulated grid's choice,
// kept per grid (the simulation walks every CTA of grids up to a few waves).
int bwd_head_splits(const codegen::KernelSpec& ks, const attention::ProblemShape& shape) {
  const int group = shape.q_heads / std::max(shape.kv_heads, 1);
  if (const int forced = attention::forced_bwd_head_splits(group); forced > 0) return forced;
  if (group <= 1) return 1;
  attention::HeadSplitProblem pr;
  pr.kv_tiles = static_cast<int>((int64_t(shape.kv_len) + ks.config.block_n - 1) / ks.config.block_n);
  pr.pairs = int64_t(shape.batch) * shape.kv_heads;
  pr.group = group;
  pr.q_tiles = static_cast<int>((int64_t(shape.q_len) + 63) / 64);
  pr.masked = ks.has_mask() || ks.seq_lens;
  pr.sm_count = device_sm_count();
  pr.kv_len = shape.kv_len;
  pr.head_dims = ks.memory_head_dim() + ks.memory_head_dim_v();
  pr.launch_group_ctas = codegen::dkdv_launch_group_ctas(ks);
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, int> chosen;
  const std::vector<int64_t> key = {pr.kv_tiles, pr.pairs,   pr.group,  pr.q_tiles,
                                    pr.masked,   pr.sm_count, pr.kv_len, pr.head_dims, pr.launch_group_ctas};
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = chosen.find(key); it != chosen.end()) return it->second;
  if (chosen.size() > 4096) chosen.clear();  // bounded: a rebuilt entry is the same choice
  return chosen[key] = attention::choose_bwd_head_splits(pr);
}

codegen::CallShape call_shape(const attention::ProblemShape& shape) {
  codegen::CallShape c;
  c.batch = shape.batch, c.heads = shape.q_heads, c.kv_heads = shape.kv_heads;
  c.q_len = shape.q_len, c.kv_len = shape.kv_len;
  return c;
}

// The kv_* (by query block) or q_* (by kv block) tables of `mask` as a kernel reads them.
FlexjitBlockTables kernel_tables(const BlockMask& mask, bool by_query_block) {
  const BlockMaskShape& ms = mask.shape();
  const BlockMask::DeviceTables& t = mask.device_tables();
  FlexjitBlockTables out;
  std::memset(&out, 0, sizeof(out));
  const int rows = by_query_block ? ms.num_q_blocks() : ms.num_kv_blocks();
  out.num_blocks = by_query_block ? t.kv_num_blocks : t.q_num_blocks;
  out.indices = by_query_block ? t.kv_indices : t.q_indices;
  out.full_num_blocks = by_query_block ? t.full_kv_num_blocks : t.full_q_num_blocks;
  out.full_indices = by_query_block ? t.full_kv_indices : t.full_q_indices;
  out.max_blocks = by_query_block ? ms.num_kv_blocks() : ms.num_q_blocks();
  out.stride_h = ms.heads == 1 ? 0 : rows;
  out.stride_b = ms.batch == 1 ? 0 : static_cast<long long>(ms.heads) * rows;
  return out;
}

// The synchronous wgmma kernel's tiles for a warp-specialised config, for calls that kernel cannot
// serve: the same tiles, or where they are the wide ones it does not have (192 rows with three
// consumer warpgroups, 176 keys), the nearest it does (128 rows with two warpgroups' eight warps,
// 128 keys).
template <typename SpecFor>
BlockConfig synchronous_twin(BlockConfig config, const SpecFor& spec_for) {
  config.warp_specialized = false;
  if (config.block_m > 128) config.block_m = 128, config.num_warps = 8;
  if (config.block_n > 128) config.block_n = 128;
  spec_for(config).validate();
  return config;
}

// The block config of one kernel family for this call: the caller's, or the autotuner's choice
// (cached on disk, tuned on first use with the call's own tensors when FLEXJIT_AUTOTUNE is on).
// `launch` runs one candidate kernel of the family with this call's arguments.
KernelChoice choose_config(codegen::Family family, const std::optional<BlockConfig>& fixed, const AttentionSpec& spec,
                           const Expr& score, const Expr& mask, const attention::ProblemShape& shape,
                           const BlockMask* block_mask, const std::string& arch, const DeviceInfo& device,
                           const std::function<void(const codegen::KernelSpec&, const codegen::ReadyKernel&, Stream)>& launch,
                           Stream stream) {
  KernelChoice choice;
  choice.family = std::string(codegen::family_name(family));
  const codegen::KernelSpec base = attention_spec(family, spec, score, mask, shape, block_mask, std::nullopt, arch);
  choice.default_config = tune::default_for(base, arch);
  if (fixed) {
    choice.config = *fixed;
    choice.source = "fixed";
    return choice;
  }
  const tune::AutotuneKey key = tune::make_autotune_key(base, arch, device, int64_t(shape.batch) * shape.q_heads,
                                                        shape.q_len, shape.kv_len);
  const auto spec_for = [&](const BlockConfig& c) {
    return attention_spec(family, spec, score, mask, shape, block_mask, c, arch);
  };
  const auto launcher = [&](const tune::Candidate& candidate, const codegen::ReadyKernel& kernel, Stream s) {
    launch(candidate.spec, kernel, s);
  };
  tune::TuneOptions options;
  if (const char* jobs = std::getenv("FLEXJIT_TUNE_JOBS")) {
    char* end = nullptr;
    const long n = std::strtol(jobs, &end, 10);
    if (end == jobs || *end != '\0' || n < 1 || n > 1024)
      throw UsageError(std::string("FLEXJIT_TUNE_JOBS='") + jobs + "' is not a number of threads (1 to 1024)");
    options.compile_workers = static_cast<size_t>(n);
  }
  const tune::Selection selection =
      tune::select_config(base, arch, key, spec_for, launcher, stream, autotune_mode(), tune::AutotuneCache(), options);
  choice.config = selection.config;
  // The warp-specialised kernels (forward, dK/dV) read through TMA; tensors they cannot describe
  // (zero or huge strides) take the same tiles on the synchronous wgmma path. A fixed 'ws' config
  // is not changed: its launch names the tensor instead. (Per-sequence lengths need no twin: both
  // warp-specialised kernels take them.)
  const bool synchronous = !shape.tma_ok;
  if (synchronous && choice.default_config.warp_specialized)
    choice.default_config = synchronous_twin(choice.default_config, spec_for);
  if (synchronous && choice.config.warp_specialized) {
    try {
      choice.config = synchronous_twin(choice.config, spec_for);
    } catch (const UsageError&) {
      choice.config = choice.default_config;  // a tuned config whose twin does not fit: the default's
    }
  }
  switch (selection.source) {
    case tune::ConfigSource::defaults: choice.source = "defaults"; break;
    case tune::ConfigSource::cache: choice.source = "cache"; break;
    case tune::ConfigSource::tuned: choice.source = "tuned"; break;
  }
  if (selection.source != tune::ConfigSource::defaults) {
    if (const auto entry = tune::AutotuneCache().lookup(key)) {
      choice.ms = entry->winner_ms;
      choice.default_ms = entry->default_ms;
      choice.candidates = static_cast<int>(entry->candidates.size());
    } else if (selection.outcome) {  // FLEXJIT_CACHE=off: the result lives only in this process
      const tune::TuneOutcome& o = *selection.outcome;
      choice.ms = o.best().ms;
      choice.candidates = static_cast<int>(o.results.size());
      for (const auto& r : o.results)
        if (r.config == choice.default_config) choice.default_ms = r.ms;
    }
  }
  return choice;
}

// What a call's kernel choice depends on beyond the Attention itself: the shape's fields that
// change the spec or the autotune key, and the block mask's tile sizes.
std::string call_signature(std::string_view what, const attention::ProblemShape& shape, const BlockMask* block_mask) {
  char signature[168];
  std::snprintf(signature, sizeof signature, "%.*s %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d",
                static_cast<int>(what.size()), what.data(), shape.negative_scale ? 1 : 0, shape.small_scale ? 1 : 0,
                shape.tma_ok ? 1 : 0,
                shape.seq_lens ? 1 : 0, shape.buffer_offsets_32 ? 1 : 0, shape.fast_dq ? 1 : 0,
                shape.ordered_dq ? 1 : 0, shape.batch, shape.q_heads, shape.kv_heads, shape.q_len, shape.kv_len,
                block_mask != nullptr ? 1 : 0, block_mask ? block_mask->shape().q_block : 0,
                block_mask ? block_mask->shape().kv_block : 0);
  return signature;
}

using KernelLauncher = std::function<void(const codegen::KernelSpec&, const codegen::ReadyKernel&, Stream)>;

// The kernel of `family` for this call: chosen (fixed config, autotune cache or tuning), rendered,
// compiled or loaded from disk, and loaded into the current context on the first call of a
// signature; later calls with the same signature find it in the variant's map.
std::shared_ptr<const Attention::Impl::Resolved> resolve(Attention::Impl& impl, codegen::Family family,
                                                          const std::optional<BlockConfig>& fixed,
                                                          const attention::ProblemShape& shape,
                                                          const BlockMask* block_mask, const KernelLauncher& launch,
                                                          Stream stream) {
  const jit::MemoKey key{jit::current_context_id(), call_signature(codegen::family_name(family), shape, block_mask)};
  if (auto hit = impl.resolved.find(key)) {
    impl.remember(hit->choice, *hit->kernel, false);
    return hit;
  }
  const std::string& arch = impl.target_arch();
  auto r = std::make_shared<Attention::Impl::Resolved>();
  r->choice = choose_config(family, fixed, impl.spec, impl.score, impl.mask, shape, block_mask, arch, impl.device(),
                            launch, stream);
  r->spec = attention_spec(family, impl.spec, impl.score, impl.mask, shape, block_mask, r->choice.config, arch);
  r->kernel = codegen::ready_kernel(r->spec, arch);
  if ((family == codegen::Family::fwd && codegen::forward_diagonal_table(r->spec)) ||
      (family == codegen::Family::bwd_dkdv && codegen::dkdv_diagonal_table(r->spec)))
    r->diagonal_table = codegen::ready_kernel(codegen::diagonal_table_kernel_spec(r->spec), arch);
  impl.remember(r->choice, *r->kernel, true);
  return impl.resolved.insert(key, std::move(r));
}

// The backward mode a call runs, how it sums dQ, and why it is deterministic when the fast mode
// was asked for. Asked for in CallOptions, the fast mode with a fixed dK/dV config that has no fast
// form is the caller's error (named by the config's validation); asked for by default (or
// FLEXJIT_DETERMINISTIC=0), such a config, and defaults without a fast form (no sm_90a, head dims
// without fast tiles such as 192), run deterministically. The deterministic mode sums dQ in order in the
// warp-specialised dK/dV kernel where that kernel can run (sm_90a, head dims with its tiles, tensors TMA
// can read, no per-sequence lengths or learnable buffers, no fixed config of another kind) and
// FLEXJIT_DETERMINISTIC_DQ asks for it (ordered; or auto, the default, where it measured faster:
// see ordered_wins), and with the separate dQ kernel otherwise.
struct BackwardPlan {
  bool fast = false;
  bool ordered = false;  // deterministic, dQ summed in order by the dK/dV kernel
  int dq_chains = 1;     // fp32 copies of dQ the dK/dV kernel sums into (codegen::ordered_dq_chains)
  // FLEXJIT_DETERMINISTIC_DQ=auto with FLEXJIT_AUTOTUNE on, where both ways can run: the call
  // times the ordered sums (this plan) against the dQ kernel and takes the faster, remembered in
  // the autotune cache (see measured_deterministic_way).
  bool measure_way = false;
  // Fast mode: the dK/dV kernel the call expects (fixed or default config) stores each query
  // tile's first dQ share (codegen::dkdv_first_stores), so the preprocess kernel leaves the fp32
  // sums as they are. A tuned kernel without them has the sums zeroed before it instead.
  bool first_stores = false;
  std::string reason;
  const char* dq_path() const { return fast ? "reductions" : ordered ? "ordered reductions" : "dq kernel"; }
};

// Why a call cannot take the warp-specialised dK/dV kernel.
constexpr const char* kNoTmaReason =
    "its lengths or tensors are not ones the kernel's TMA boxes read: at least 64 queries and 128 keys, "
    "16-byte aligned first elements and strides";

BackwardPlan plan_backward(const Attention::Impl& impl, const std::string& arch, attention::ProblemShape shape,
                           const BlockMask* block_mask, const CallOptions& options) {
  BackwardPlan plan;
  const BackwardMode asked = options.backward_mode ? *options.backward_mode : backward_mode_from_env();
  const bool buffer_grads = !impl.score.buffer_gradients().empty();
  const std::optional<BlockConfig>& fixed = impl.spec.bwd_dkdv_config;
  shape.fast_dq = true;
  shape.ordered_dq = asked == BackwardMode::deterministic;
  const auto dkdv_spec = [&](const std::optional<BlockConfig>& config) {
    return attention_spec(codegen::Family::bwd_dkdv, impl.spec, impl.score, impl.mask, shape, block_mask, config, arch);
  };
  if (asked == BackwardMode::deterministic) {
    const DeterministicDq way = deterministic_dq_from_env();
    if (way == DeterministicDq::kernel || buffer_grads || arch != "sm_90a" || !shape.tma_ok ||
        (fixed && !fixed->warp_specialized))
      return plan;
    // Where the ordered sums measured faster than the dQ kernel: a query tile's chain of turns (one
    // per 128-key tile) no longer than a kv tile's walk (one step per 64-query tile). Until session
    // (zh) masks without tile bounds (documents: walks the data cuts into short runs) took the dQ
    // kernel; since the ordered kernels' first stores and early releases ("(zd)" to "(zf)") and two
    // chains for long data-cut walks (codegen::ordered_long_chains) the ordered sums win there too
    // (H200, deterministic backward with tuning off, notes/perf.md "(zh)", zh5: documents 229 -> 253
    // TF/s, documents at d64 162 -> 178, long documents 299 -> 327, nested documents 198 -> 195;
    // H100 "(zd)", one chain: documents of 89-709 keys 1.04-1.06x ordered, of 18-3999 keys 0.93x).
    const bool chains_fit = (int64_t(shape.kv_len) + 127) / 128 <= (int64_t(shape.q_len) + 63) / 64;
    const bool ordered_wins = chains_fit;
    // A document mask's walks gain or lose with its documents' lengths, which a rule on the mask's
    // form cannot see. So with tuning on, the call measures both ways instead.
    // (Not with a fixed config of either way's kernels: the caller chose those.)
    const bool measured = way == DeterministicDq::automatic && !fixed && !impl.spec.bwd_dq_config &&
                          autotune_mode() != AutotuneMode::off;
    if (way == DeterministicDq::automatic && !ordered_wins && !measured && !(fixed && fixed->warp_specialized))
      return plan;
    const codegen::KernelSpec ordered_spec = dkdv_spec(fixed ? *fixed : tune::default_for(dkdv_spec(std::nullopt), arch));
    try {
      ordered_spec.validate();
    } catch (const UsageError&) {
      if (fixed) throw;  // a warp-specialised config the kernel cannot take: its own error
      return plan;       // head dims without warp-specialised tiles
    }
    plan.ordered = true;
    plan.dq_chains = codegen::ordered_dq_chains(ordered_spec);
    plan.measure_way = measured;
    return plan;
  }
  if (buffer_grads) {
    plan.reason = "learnable-buffer gradients are summed by the deterministic dQ kernel";
    return plan;
  }
  const BlockConfig config = fixed ? *fixed : tune::default_for(dkdv_spec(std::nullopt), arch);
  try {
    const codegen::KernelSpec expected = dkdv_spec(config);
    expected.validate();
    plan.first_stores = codegen::dkdv_first_stores(expected) && shape.tma_ok && !shape.seq_lens;
  } catch (const UsageError& e) {
    // The caller asked for both; a fixed warp-specialised config exists only in the fast mode.
    if (fixed && (options.backward_mode || fixed->warp_specialized)) throw;
    plan.reason = fixed ? std::string("the fixed dK/dV config has no fast form: ") + e.what()
                  : arch != "sm_90a"
                      ? "the fast dK/dV kernel runs on sm_90a (wgmma); this call compiles for " + arch
                      : "head dims " + std::to_string(impl.spec.head_dim) + "/" + std::to_string(impl.spec.head_dim_v) +
                            " have no fast dK/dV tiles (the default " + config.str() + " has no fast form)";
    return plan;
  }
  // Calls the warp-specialised kernel cannot serve take its synchronous twin (choose_config);
  // above head dim 128 it has none (its column slices are warpgroups of one CTA). A fixed 'ws'
  // config is not changed: its launch names the tensor.
  if (!fixed && config.warp_specialized && !shape.tma_ok) {
    BlockConfig twin = config;
    twin.warp_specialized = false;
    try {
      dkdv_spec(twin).validate();
    } catch (const UsageError&) {
      plan.reason = "head dims " + std::to_string(impl.spec.head_dim) + "/" + std::to_string(impl.spec.head_dim_v) +
                    " have fast dK/dV tiles on the warp-specialised kernel only, which this call cannot take (" +
                    kNoTmaReason + ")";
      return plan;
    }
  }
  plan.fast = true;
  return plan;
}

// The way a deterministic call takes where both can run and tuning is on (BackwardPlan::
// measure_way): the autotune cache's answer for the problem, else both ways timed on this call's
// tensors (each run first untimed, which tunes and loads its kernels) and the faster stored. The
// entry's family is "deterministic_dq"; its candidates are the two ways, each named by its dK/dV
// kernel's default config, which is warp-specialised for the ordered sums and not for the dQ
// kernel's way.
BackwardPlan measured_deterministic_way(Attention::Impl& impl, attention::ProblemShape shape, const BlockMask* block_mask,
                                        const BackwardPlan& ordered,
                                        const std::function<void(const BackwardPlan&)>& run, Stream stream) {
  BackwardPlan kernel = ordered;
  kernel.ordered = kernel.measure_way = false;
  kernel.dq_chains = 1;
  const AutotuneMode mode = autotune_mode();
  const jit::MemoKey memo_key{jit::current_context_id(),
                              call_signature(std::string("deterministic_dq ") + autotune_mode_name(mode), shape,
                                             block_mask)};
  using DqWay = Attention::Impl::DqWay;
  const auto chosen = [&](bool ordered_way) {
    impl.deterministic_ways.insert(memo_key, ordered_way ? DqWay::ordered : DqWay::kernel);
    return ordered_way ? ordered : kernel;
  };
  if (const DqWay known = impl.deterministic_ways.find(memo_key); known != DqWay::unknown)
    return known == DqWay::ordered ? ordered : kernel;
  const std::string& arch = impl.target_arch();
  const auto dkdv_base = [&](bool sums_dq) {
    shape.fast_dq = shape.ordered_dq = sums_dq;
    return attention_spec(codegen::Family::bwd_dkdv, impl.spec, impl.score, impl.mask, shape, block_mask, std::nullopt,
                          arch);
  };
  const codegen::KernelSpec ordered_base = dkdv_base(true), kernel_base = dkdv_base(false);
  tune::AutotuneKey key = tune::make_autotune_key(ordered_base, arch, impl.device(), int64_t(shape.batch) * shape.q_heads,
                                                  shape.q_len, shape.kv_len);
  key.family = "deterministic_dq";
  const tune::AutotuneCache cache;
  // As for configs, a choice measured with `on` is measured again once with `max` (its ways'
  // kernels are tuned again over the full space).
  if (const auto entry = cache.lookup(key); entry && !(mode == AutotuneMode::max && entry->mode == AutotuneMode::on))
    return chosen(entry->winner.warp_specialized);
  tune::AutotuneEntry entry;
  entry.mode = mode;
  entry.default_config = tune::default_for(ordered_base, arch);
  double best = 0;
  const BackwardPlan* const ways[] = {&ordered, &kernel};
  for (const BackwardPlan* way : ways) {
    const BlockConfig named = way->ordered ? entry.default_config : tune::default_for(kernel_base, arch);
    // time_on_gpu enqueues each run on `stream`, the call's stream `run` launches on.
    const tune::Timing t = tune::time_on_gpu([&](Stream) { run(*way); }, stream, tune::TuneOptions{}.timing);
    entry.candidates.push_back({named, t.median_ms, ""});
    if (way->ordered) entry.default_ms = t.median_ms;
    if (entry.candidates.size() == 1 || t.median_ms < best) best = t.median_ms, entry.winner = named;
  }
  entry.winner_ms = best;
  cache.store(key, entry);
  return chosen(entry.winner.warp_specialized);
}

}  // namespace

DeterministicDq deterministic_dq_from_env() {
  const char* value = std::getenv("FLEXJIT_DETERMINISTIC_DQ");
  if (value == nullptr || *value == '\0' || std::string(value) == "auto") return DeterministicDq::automatic;
  if (std::string(value) == "ordered") return DeterministicDq::ordered;
  if (std::string(value) == "kernel") return DeterministicDq::kernel;
  throw UsageError(std::string("FLEXJIT_DETERMINISTIC_DQ='") + value +
                   "' is not auto, ordered or kernel (auto, the default: each call the faster way; ordered: the dK/dV "
                   "kernel sums dQ in a fixed order wherever it runs; kernel: a separate dQ kernel)");
}

BackwardMode backward_mode_from_env() {
  const char* value = std::getenv("FLEXJIT_DETERMINISTIC");
  if (value == nullptr || *value == '\0' || std::string(value) == "0") return BackwardMode::fast;
  if (std::string(value) == "1") return BackwardMode::deterministic;
  throw UsageError(std::string("FLEXJIT_DETERMINISTIC='") + value +
                   "' is not 0 or 1 (1: the deterministic backward; unset or 0: the fast one)");
}

void Attention::forward(const TensorView& q, const TensorView& k, const TensorView& v,
                        const TensorView& out, const TensorView& lse, const BlockMask* block_mask,
                        Stream stream, const CallOptions& options) const {
  const AttentionSpec& spec = impl_->spec;
  // The wide warp-specialised tiles (192 rows, 176 keys) cannot read tables of 128-row blocks.
  // Where the tables are this call's own mask's (built from its expression) and that mask has
  // interval bounds, the forward walks by the bounds instead: the mask is still evaluated wherever
  // the bounds cannot tell, so the results are the same, and the tables only skip what was known.
  // Tables whose blocks the tiles divide (192-row blocks, say) are read as they are.
  if (block_mask != nullptr && spec.fwd_config && spec.fwd_config->warp_specialized &&
      (spec.fwd_config->block_m == 192 || spec.fwd_config->block_n == 176) &&
      (block_mask->shape().q_block % spec.fwd_config->block_m != 0 ||
       block_mask->shape().kv_block % spec.fwd_config->block_n != 0) &&
      options.seq_lens.empty() && block_mask->built_from() == impl_->mask.canonical() &&
      codegen::forward_walks_by_bounds(impl_->mask))
    block_mask = nullptr;
  attention::ProblemShape shape = attention::check_forward_tensors(
      q, k, v, out, lse, spec.dtype, spec.head_dim, spec.head_dim_v);
  attention::check_written(out, "out");
  if (lse.data != nullptr) attention::check_written(lse, "lse");
  const float scale = attention::checked_scale(options.scale, spec.head_dim, "forward");
  shape.negative_scale = scale < 0.f;
  shape.small_scale = scale > 0.f && scale < codegen::KernelSpec::kSmallScale;
  shape.tma_ok = codegen::tma_unsupported_reason(q, "q").empty() && codegen::tma_unsupported_reason(k, "k").empty() &&
                 codegen::tma_unsupported_reason(v, "v").empty() &&
                 codegen::tma_unsupported_reason(out, "out", codegen::kForwardTmaReader, /*written=*/true).empty();
  if (block_mask != nullptr) attention::check_block_mask(*block_mask, shape);
  const FlexjitSeqLens lens =
      mask::check_seq_lens(options.seq_lens, shape.batch, shape.q_len, shape.kv_len, impl_->mask, block_mask, "forward");
  shape.seq_lens = !options.seq_lens.empty();
  const std::set<std::string> buffers_read = codegen::names_read({&impl_->score, &impl_->mask});
  const std::vector<unsigned char> mod_args =
      codegen::pack_mod_args(spec.declarations, options.values, buffers_read, "forward");
  shape.buffer_offsets_32 = codegen::buffer_offsets_fit_32_bits(options.values, buffers_read);

  FlexjitFwdParams p;
  std::memset(&p, 0, sizeof(p));
  p.q = q.data;
  p.k = k.data;
  p.v = v.data;
  p.o = out.data;
  p.lse = static_cast<float*>(lse.data);
  p.q_stride_b = q.strides[0], p.q_stride_h = q.strides[1], p.q_stride_s = q.strides[2];
  p.k_stride_b = k.strides[0], p.k_stride_h = k.strides[1], p.k_stride_s = k.strides[2];
  p.v_stride_b = v.strides[0], p.v_stride_h = v.strides[1], p.v_stride_s = v.strides[2];
  p.o_stride_b = out.strides[0], p.o_stride_h = out.strides[1], p.o_stride_s = out.strides[2];
  if (lse.data != nullptr) {
    p.lse_stride_b = lse.strides[0], p.lse_stride_h = lse.strides[1], p.lse_stride_s = lse.strides[2];
  }
  if (block_mask != nullptr) p.kv = kernel_tables(*block_mask, true);
  p.batch = shape.batch;
  p.num_q_heads = shape.q_heads;
  p.q_len = shape.q_len;
  p.kv_len = shape.kv_len;
  p.scale = scale;
  p.scale_log2 = scale * FLEXJIT_LOG2E;
  p.score_scale = scale * impl_->score_prescale;

  const codegen::ReadyKernel* diagonal_table_kernel = nullptr;  // the resolved kernel's (candidates look theirs up)
  const auto launch = [&](const codegen::KernelSpec& ks, const codegen::ReadyKernel& kernel, Stream s) {
    codegen::CallShape geometry_shape = call_shape(shape);
    if (ks.config.warp_specialized) geometry_shape.sm_count = device_sm_count();
    const codegen::ConfiguredKernel configured(kernel, geometry_shape);
    FlexjitFwdParams call = p;
    call.num_q_tiles = configured.tiles();
    FlexjitSeqLens call_lens = lens;  // launched by address, as every kernel parameter
    if (ks.config.warp_specialized) {
      FlexjitFwdTma maps = codegen::encode_forward_tma(q, k, v, out, ks.config);
      // The persistent grid strides over equal work tiles. Under a mask or per-sequence lengths the
      // tiles' key counts differ, so CTAs take them by ticket instead, from a counter that starts at zero in fresh
      // stream-ordered memory: no two launches (streams, graph replays) ever share it.
      std::optional<attention::StreamScratch> counter;
      const long long work = static_cast<long long>(configured.tiles()) * shape.q_heads * shape.batch;
      if ((ks.has_mask() || ks.has_block_mask || ks.seq_lens) && work > configured.geometry().grid.x) {
        counter.emplace(sizeof(unsigned), s);
        FLEXJIT_CU(jit::driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(counter->data()), 0, sizeof(unsigned), s));
        call.tile_counter = static_cast<unsigned*>(counter->data());
      }
      // The bias form's values from a table of the call's diagonals (forward_diagonal_table),
      // written ahead of the forward on the same stream.
      std::optional<attention::StreamScratch> diagonal_table;
      if (codegen::forward_diagonal_table(ks))
        call.diagonals = attention::write_diagonal_table(ks, diagonal_table_kernel, impl_->target_arch(), shape.q_heads,
                                                         shape.q_len, shape.kv_len, call.score_scale, /*raw=*/false,
                                                         mod_args, diagonal_table, s);
      call.tile_section = codegen::forward_tile_section(ks, shape.q_heads * shape.batch, configured.tiles(), shape.kv_len,
                                                        static_cast<int>(configured.geometry().grid.x),
                                                        call.tile_counter != nullptr);
      if (ks.seq_lens)
        configured.launch(s, {&call, const_cast<unsigned char*>(mod_args.data()), &call_lens, &maps});
      else
        configured.launch(s, {&call, const_cast<unsigned char*>(mod_args.data()), &maps});
    } else if (ks.seq_lens) {
      configured.launch(s, {&call, const_cast<unsigned char*>(mod_args.data()), &call_lens});
    } else {
      configured.launch(s, {&call, const_cast<unsigned char*>(mod_args.data())});
    }
  };
  const auto fwd = resolve(*impl_, codegen::Family::fwd, spec.fwd_config, shape, block_mask, launch, stream);
  diagonal_table_kernel = fwd->diagonal_table.get();
  launch(fwd->spec, *fwd->kernel, stream);
}

void Attention::backward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
                         const TensorView& lse, const TensorView& dout, const TensorView& dq, const TensorView& dk,
                         const TensorView& dv, const BlockMask* block_mask, Stream stream,
                         const CallOptions& options) const {
  const AttentionSpec& spec = impl_->spec;
  if (lse.data == nullptr)
    throw ShapeError("backward needs the forward's lse (pass an lse tensor to forward and then here)");
  attention::ProblemShape shape = attention::check_forward_tensors(
      q, k, v, out, lse, spec.dtype, spec.head_dim, spec.head_dim_v);
  attention::check_operand(dout, "dout", spec.dtype);
  attention::check_operand(dq, "dq", spec.dtype);
  attention::check_operand(dk, "dk", spec.dtype);
  attention::check_operand(dv, "dv", spec.dtype);
  for (auto [t, name] : {std::pair<const TensorView*, const char*>{&dq, "dq"}, {&dk, "dk"}, {&dv, "dv"}})
    attention::check_written(*t, name);
  auto same_shape = [](const TensorView& a, const TensorView& like, const char* a_name, const char* like_name) {
    if (a.shape != like.shape)
      throw ShapeError(std::string(a_name) + " must have the shape of " + like_name + " " + like.describe() +
                       ", got " + a.describe());
  };
  same_shape(dout, out, "dout", "out");
  same_shape(dq, q, "dq", "q");
  same_shape(dk, k, "dk", "k");
  same_shape(dv, v, "dv", "v");
  if (!options.seq_lens.empty() && !impl_->score.buffer_gradients().empty())
    throw UsageError("backward: learnable-buffer gradients are not computed with seq_lens (per-sequence lengths); "
                     "call without seq_lens, or declare the buffers without learnable");
  attention::check_buffer_grad_tensors(impl_->score, options);
  const float scale = attention::checked_scale(options.scale, spec.head_dim, "backward");
  if (block_mask != nullptr) attention::check_block_mask(*block_mask, shape);
  const FlexjitSeqLens lens =
      mask::check_seq_lens(options.seq_lens, shape.batch, shape.q_len, shape.kv_len, impl_->mask, block_mask, "backward");
  shape.seq_lens = !options.seq_lens.empty();
  // The warp-specialised dK/dV kernel (fast mode) reads Q, K, V and dO through TMA in whole boxes
  // of its 64-query and 128-key tiles; other tensors, and shorter ones, take its 'g' twin.
  shape.tma_ok = shape.q_len >= 64 && shape.kv_len >= 128;
  for (auto [t, name] : {std::pair<const TensorView*, const char*>{&q, "q"}, {&k, "k"}, {&v, "v"}, {&dout, "dout"}})
    shape.tma_ok = shape.tma_ok && codegen::tma_unsupported_reason(*t, name, codegen::kBackwardTmaReader).empty();

  using codegen::Family;
  // The backward kernels' tiles (codegen::tile_head_dims): the dQ sums' rows have tile_d columns.
  const auto [tile_d, tile_dv] = codegen::tile_head_dims(Family::bwd_dkdv, spec.head_dim, spec.head_dim_v,
                                                          impl_->target_arch());
  const auto pre_kernel = resolve(*impl_, Family::bwd_preprocess,
                                  codegen::default_config(Family::bwd_preprocess, tile_d, tile_dv), shape, nullptr,
                                  nullptr, stream);
  const std::set<std::string> buffers_read = codegen::names_read({&impl_->score, &impl_->mask});
  const std::vector<unsigned char> mod_args =
      codegen::pack_mod_args(spec.declarations, options.values, buffers_read, "backward");
  shape.buffer_offsets_32 = codegen::buffer_offsets_fit_32_bits(options.values, buffers_read);

  // delta = rowsum(O * dO): stream-ordered scratch, freed after the kernels that read it.
  attention::StreamScratch delta(size_t(shape.batch) * shape.q_heads * shape.q_len * sizeof(float), stream);

  FlexjitBwdParams p;
  std::memset(&p, 0, sizeof(p));
  p.q = q.data, p.k = k.data, p.v = v.data, p.o = out.data, p.dout = dout.data;
  p.lse = static_cast<const float*>(lse.data);
  p.delta = static_cast<float*>(delta.data());
  p.dq = dq.data, p.dk = dk.data, p.dv = dv.data;
  auto strides = [](const TensorView& t, long long& sb, long long& sh, long long& ss) {
    sb = t.strides[0], sh = t.strides[1], ss = t.strides[2];
  };
  strides(q, p.q_stride_b, p.q_stride_h, p.q_stride_s);
  strides(k, p.k_stride_b, p.k_stride_h, p.k_stride_s);
  strides(v, p.v_stride_b, p.v_stride_h, p.v_stride_s);
  strides(out, p.o_stride_b, p.o_stride_h, p.o_stride_s);
  strides(dout, p.do_stride_b, p.do_stride_h, p.do_stride_s);
  strides(lse, p.lse_stride_b, p.lse_stride_h, p.lse_stride_s);
  strides(dq, p.dq_stride_b, p.dq_stride_h, p.dq_stride_s);
  strides(dk, p.dk_stride_b, p.dk_stride_h, p.dk_stride_s);
  strides(dv, p.dv_stride_b, p.dv_stride_h, p.dv_stride_s);
  if (block_mask != nullptr) {
    p.kv = kernel_tables(*block_mask, true);
    p.qt = kernel_tables(*block_mask, false);
  }
  p.batch = shape.batch;
  p.num_q_heads = shape.q_heads;
  p.num_kv_heads = shape.kv_heads;
  p.q_len = shape.q_len;
  p.kv_len = shape.kv_len;
  p.scale = scale;
  p.scale_log2 = scale * FLEXJIT_LOG2E;
  p.score_scale = scale * impl_->score_prescale;

  // The fast mode's warp-specialised dK/dV kernel (its default on sm_90a, and a tuning candidate)
  // copies each query tile's LSE and delta rows in one piece: the preprocess kernel also writes them
  // side by side, padded to whole tiles.
  const BackwardPlan planned = plan_backward(*impl_, impl_->target_arch(), shape, block_mask, options);
  // One way of running the backward, on this call's tensors (run again when the way is measured).
  const FlexjitBwdParams base_params = p;
  const attention::ProblemShape base_shape = shape;
  const auto run_way = [&](const BackwardPlan& plan) {
    p = base_params;
    shape = base_shape;
    const bool dkdv_sums_dq = plan.fast || plan.ordered;
    // Stream-ordered zeroing of the scratch below (sums, turn counters, first-store words).
    const auto zero = [&](const void* ptr, size_t bytes) {
      FLEXJIT_CU(jit::driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(ptr), 0, bytes, stream));
    };
    std::optional<attention::StreamScratch> row_stats, dq_accum;
    size_t accum_floats = 0;
    if (dkdv_sums_dq) {
      p.row_stats_len = static_cast<int>((int64_t(shape.q_len) + 63) / 64 * 64);
      row_stats.emplace(size_t(shape.batch) * shape.q_heads * 2 * p.row_stats_len * sizeof(float), stream);
      p.row_stats = static_cast<float*>(row_stats->data());
      // dQ / scale summed in fp32 by the dK/dV kernel (stream-ordered scratch). The fast mode's
      // copy is zeroed by the preprocess kernel as it passes each row; the ordered sums store their
      // first share instead (see dq_order below).
      p.dq_chains = plan.dq_chains;
      // (In the tiles' columns: a head dim narrower than the tiles has zero columns after it.)
      accum_floats = size_t(p.dq_chains) * shape.batch * shape.q_heads * shape.q_len * tile_d;
      dq_accum.emplace(accum_floats * sizeof(float), stream);
      p.dq_accum = static_cast<float*>(dq_accum->data());
    }
    // The deterministic mode's turns: a counter per (query tile, chain, column slice), and after
    // them as many words saying which chains' first shares were stored (the ordered sums store
    // their first share instead of adding it, so the preprocess kernel leaves dq_accum as it is).
    // Zeroed before tuning launches and again before the call's launch (a launch leaves the
    // counters zero unless a writer gave up on a turn, FLEXJIT_ERROR_ORDER_LOST; the words it sets
    // depend on the config's kv tiles).
    const size_t counters =
        plan.ordered
            ? static_cast<size_t>(flexjit_dq_order_counters(p, codegen::ordered_dq_counters_per_tile(tile_d, tile_dv)))
            : 0;
    std::optional<attention::StreamScratch> dq_order;
    const auto zero_turns = [&] { zero(p.dq_order, 2 * counters * sizeof(int)); };
    if (plan.ordered) {
      dq_order.emplace(2 * counters * sizeof(int), stream);
      p.dq_order = static_cast<int*>(dq_order->data());
      zero_turns();
    }
    // The fast mode's first stores (FlexjitBwdParams::dq_first): a word per query tile instead of
    // the accumulator's zeroing.
    const bool first_stores = plan.fast && plan.first_stores;
    const size_t first_words = size_t(shape.batch) * shape.q_heads * (size_t(p.row_stats_len) / 64);
    std::optional<attention::StreamScratch> dq_first;
    const auto zero_first = [&] { zero(p.dq_first, first_words * sizeof(int)); };
    if (first_stores) {
      dq_first.emplace(first_words * sizeof(int), stream);
      p.dq_first = static_cast<int*>(dq_first->data());
      zero_first();
    }
    codegen::ConfiguredKernel(*pre_kernel->kernel, call_shape(shape)).launch(stream, {&p});
    // dQ and dK/dV read delta, so their tuning (when it happens) runs after the preprocess. dQ runs
    // on a side stream; its buffer errors belong to the caller's stream.
    const auto launch_dq = [&](const codegen::KernelSpec& ks, const codegen::ReadyKernel& kernel, Stream s) {
      const codegen::ConfiguredKernel configured(kernel, call_shape(shape));
      FlexjitBwdParams call = p;
      call.num_q_tiles = configured.tiles();
      std::optional<attention::BufferGradLaunch> buffer_grads;  // learnable buffers: scratch, zeroing, reduces
      if (ks.buffer_grads) {
        buffer_grads.emplace(ks, options, shape, impl_->target_arch(), s);
        configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data()), buffer_grads->params()});
        buffer_grads->reduce(mod_args);
      } else if (ks.seq_lens) {
        FlexjitSeqLens call_lens = lens;
        configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data()), &call_lens});
      } else {
        configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data())});
      }
    };
    bool dkdv_launched = false;  // by the tuner, within resolve(): its launches add into dq_accum
    // The warp-specialised kernel (both modes) may split each GQA group's query heads over CTAs
    // (attention/bwd_head_splits.hpp); its splits' fp32 dK and dV go to this scratch, and the last
    // launch's split count says whether the sum kernel runs after it.
    std::optional<attention::StreamScratch> dkdv_partial;
    size_t dkdv_partial_bytes = 0;
    int head_splits = 1;
    const codegen::ReadyKernel* dkdv_table_kernel = nullptr;  // the resolved kernel's (candidates look theirs up)
    const auto launch_dkdv = [&](const codegen::KernelSpec& ks, const codegen::ReadyKernel& kernel, Stream s) {
      dkdv_launched = true;
      codegen::CallShape geometry_shape = call_shape(shape);
      head_splits = codegen::dkdv_splits_heads(ks) ? bwd_head_splits(ks, shape) : 1;
      geometry_shape.kv_head_splits = head_splits;
      const codegen::ConfiguredKernel configured(kernel, geometry_shape);
      FlexjitBwdParams call = p;
      call.num_kv_tiles = configured.tiles();
      if (head_splits > 1) {
        const size_t bytes = size_t(shape.batch) * shape.kv_heads * head_splits * size_t(shape.kv_len) *
                             (size_t(spec.head_dim) + spec.head_dim_v) * sizeof(float);
        if (bytes > dkdv_partial_bytes) {
          dkdv_partial.reset();
          dkdv_partial.emplace(bytes, stream);
          dkdv_partial_bytes = bytes;
        }
        call.dkdv_partial = static_cast<float*>(dkdv_partial->data());
        call.kv_head_splits = head_splits;
      }
      FlexjitSeqLens call_lens = lens;
      // The dK/dV kernel's values from a table of the call's diagonals (dkdv_diagonal_table),
      // written ahead of it on its stream: the forward's pairs where they seed Sᵀ
      // (dkdv_diagonal_seed), else V's bits.
      std::optional<attention::StreamScratch> diagonal_table;
      if (codegen::dkdv_diagonal_table(ks))
        call.diagonals = attention::write_diagonal_table(ks, dkdv_table_kernel, impl_->target_arch(), shape.q_heads,
                                                         shape.q_len, shape.kv_len, call.score_scale,
                                                         /*raw=*/!codegen::dkdv_diagonal_seed(ks), mod_args,
                                                         diagonal_table, s);
      if (ks.config.warp_specialized) {
        FlexjitBwdTma maps = codegen::encode_backward_tma(q, k, v, dout, ks.config);
        if (codegen::dkdv_adds_dq_through_tensor_map(ks) && shape.q_len > 0)
          maps.dq = codegen::encode_dq_accum_tma(call.dq_accum, call.dq_chains * shape.batch, shape.q_heads, shape.q_len,
                                                 tile_d);  // the chains' copies one after another
        if (ks.seq_lens)
          configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data()), &call_lens, &maps});
        else
          configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data()), &maps});
      } else if (ks.seq_lens)
        configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data()), &call_lens});
      else
        configured.launch(s, stream, {&call, const_cast<unsigned char*>(mod_args.data())});
    };
    const auto note_mode = [&] {
      std::lock_guard<std::mutex> lock(impl_->choices_mutex);
      KernelChoice& dkdv = impl_->choices["bwd_dkdv"];
      dkdv.backward_mode = plan.fast ? "fast" : "deterministic";
      dkdv.backward_mode_reason = plan.reason;
      dkdv.dq_path = plan.dq_path();
      dkdv.kv_head_splits = head_splits;
      if (dkdv_sums_dq) impl_->choices.erase("bwd_dq");  // no dQ kernel ran
    };
    if (dkdv_sums_dq) {
      // dQ / scale summed in fp32 by the dK/dV kernel into dq_accum (the fast mode's zeroed by the
      // preprocess kernel, and again after any tuning launches have added into it), then scaled and
      // converted by the preprocess family's second kernel. In the deterministic mode the adds take
      // turns on the counters above.
      shape.fast_dq = true;
      shape.ordered_dq = plan.ordered;
      // The kernel that may split GQA groups over its CTAs where the expected kernel (the default
      // or fixed config) would split this call's.
      if (shape.gqa_group() > 1) {
        attention::ProblemShape split_shape = shape;
        split_shape.kv_head_splits = true;
        const std::string& arch = impl_->target_arch();
        codegen::KernelSpec expected = attention_spec(Family::bwd_dkdv, impl_->spec, impl_->score, impl_->mask,
                                                      split_shape, block_mask, spec.bwd_dkdv_config, arch);
        if (!spec.bwd_dkdv_config) expected.config = tune::default_for(expected, arch);
        shape.kv_head_splits = codegen::dkdv_splits_heads(expected) && bwd_head_splits(expected, shape) > 1;
      }
      const auto dkdv_kernel = resolve(*impl_, Family::bwd_dkdv, spec.bwd_dkdv_config, shape, block_mask, launch_dkdv, stream);
      // A kernel without first stores (a tuned config other than the expected one) adds into sums
      // that the preprocess kernel left as they were: zeroed here, as after tuning launches
      // (which added into them, or claimed first-store words).
      if (p.dq_first != nullptr && !codegen::dkdv_first_stores(dkdv_kernel->spec)) p.dq_first = nullptr;
      if (!plan.ordered && p.dq_first == nullptr && (first_stores || dkdv_launched))
        zero(p.dq_accum, accum_floats * sizeof(float));
      if (dkdv_launched && p.dq_first != nullptr) zero_first();
      if (plan.ordered) zero_turns();
      // The early conversion (FlexjitBwdParams::dq_done): a count per (batch, kv head) of the
      // dK/dV CTAs whose dQ shares have landed, zeroed here (after any tuning launches, which ran
      // without it), and the grid's kv tiles as the whole count.
      std::optional<attention::StreamScratch> dq_done;
      if (codegen::dkdv_counts_landed_ctas(dkdv_kernel->spec)) {
        const size_t words = size_t(shape.batch) * shape.kv_heads;
        dq_done.emplace(words * sizeof(int), stream);
        p.dq_done = static_cast<int*>(dq_done->data());
        zero(p.dq_done, words * sizeof(int));
        p.dq_done_expected = codegen::ConfiguredKernel(*dkdv_kernel->kernel, call_shape(shape)).tiles();
      }
      dkdv_table_kernel = dkdv_kernel->diagonal_table.get();
      launch_dkdv(dkdv_kernel->spec, *dkdv_kernel->kernel, stream);
      codegen::ConfiguredKernel(*pre_kernel->kernel, call_shape(shape), 1).launch(stream, {&p});
      if (head_splits > 1) {  // dK and dV: the splits' sums
        FlexjitBwdParams sums = p;
        sums.dkdv_partial = static_cast<float*>(dkdv_partial->data());
        sums.kv_head_splits = head_splits;
        codegen::ConfiguredKernel(*pre_kernel->kernel, call_shape(shape), 2).launch(stream, {&sums});
      }
      note_mode();
      return;
    }
    const auto dkdv_kernel = resolve(*impl_, Family::bwd_dkdv, spec.bwd_dkdv_config, shape, block_mask, launch_dkdv, stream);
    const auto dq_kernel = resolve(*impl_, Family::bwd_dq, spec.bwd_dq_config, shape, block_mask, launch_dq, stream);
    // dQ on a side stream, concurrent with dK/dV: each kernel's tail fills with the other's blocks.
    attention::StreamFork fork(stream);
    dkdv_table_kernel = dkdv_kernel->diagonal_table.get();
    launch_dkdv(dkdv_kernel->spec, *dkdv_kernel->kernel, stream);
    launch_dq(dq_kernel->spec, *dq_kernel->kernel, fork.side());
    fork.join();  // before `delta` is freed on `stream`
    note_mode();
  };
  if (!planned.measure_way) return run_way(planned);
  run_way(measured_deterministic_way(*impl_, shape, block_mask, planned, run_way, stream));
}

void Attention::decode(const TensorView& q, const KVCache& kv, const TensorView& out, const TensorView& lse,
                       Stream stream, const CallOptions& options) const {
  if (!options.seq_lens.empty())
    throw UsageError("decode takes each sequence's length from the cache (KVCache::seq_lens); "
                     "CallOptions::seq_lens is for forward and backward");
  const attention::DecodeVariant variant{impl_->spec, impl_->score, impl_->mask, impl_->score_prescale,
                                         [this] { return impl_->target_arch(); }};
  KernelChoice choice = attention::run_decode(variant, q, kv, out, lse, stream, options);
  std::lock_guard<std::mutex> lock(impl_->choices_mutex);
  impl_->choices[choice.family] = choice;
}

std::vector<KernelChoice> Attention::last_choices() const {
  std::lock_guard<std::mutex> lock(impl_->choices_mutex);
  std::vector<KernelChoice> out;
  for (const auto& [family, choice] : impl_->choices) out.push_back(choice);
  return out;
}

namespace {

void throw_buffer_errors(const std::vector<std::string>& kernels) {
  if (!kernels.empty()) throw ShapeError(attention::kernel_error_message(kernels));
}

}  // namespace

void check_buffer_errors() { throw_buffer_errors(codegen::take_context_errors()); }

void check_buffer_errors(Stream stream) { throw_buffer_errors(codegen::take_stream_errors(stream)); }

std::vector<WarmedKernel> Attention::warm_up(const ProblemSize& size, bool backward, const std::string& arch,
                                             int jobs) const {
  const AttentionSpec& spec = impl_->spec;
  const std::string target = arch.empty() ? impl_->target_arch() : codegen::resolve_arch(arch);
  if (size.batch < 1 || size.q_heads < 1 || size.kv_heads < 1 || size.q_len < 1 || size.kv_len < 1 ||
      size.q_heads % size.kv_heads != 0)
    throw UsageError("warm_up: sizes must be positive and q_heads a multiple of kv_heads");
  attention::ProblemShape shape;
  shape.batch = size.batch, shape.q_heads = size.q_heads, shape.kv_heads = size.kv_heads;
  shape.q_len = size.q_len, shape.kv_len = size.kv_len;
  shape.head_dim = spec.head_dim, shape.head_dim_v = spec.head_dim_v;
  // Calls pass their buffers contiguous (nearly always), so their reads take 32-bit offsets
  // (codegen::buffer_offsets_fit_32_bits); a call with other buffers compiles its kernels then.
  shape.buffer_offsets_32 = codegen::reads_buffers(spec.declarations, {&impl_->score, &impl_->mask});
  // The block mask a call would build: 128 x 128 blocks, only when there is a mask_mod.
  const bool masked = !impl_->mask.is_always_true();
  std::optional<BlockMask> mask;
  if (masked) mask = BlockMask::all_full({1, 1, size.q_len, size.kv_len, 128, 128});
  const BlockMask* mask_ptr = mask ? &*mask : nullptr;
  std::vector<codegen::KernelSpec> specs;
  using codegen::Family;
  // A fixed config compiles alone; otherwise every candidate the autotuner would time (off: the
  // default), so a first call on the GPU finds them all in the disk cache.
  const AutotuneMode mode = autotune_mode();
  attention::ProblemShape family_shape = shape;  // the fast backward's dK/dV kernel: fast_dq set
  const auto add_family = [&](Family family, const std::optional<BlockConfig>& fixed) {
    if (fixed) {
      specs.push_back(attention_spec(family, spec, impl_->score, impl_->mask, family_shape, mask_ptr, fixed, target));
      return;
    }
    const codegen::KernelSpec base =
        attention_spec(family, spec, impl_->score, impl_->mask, family_shape, mask_ptr, std::nullopt, target);
    const std::vector<BlockConfig> configs =
        mode == AutotuneMode::off
            ? std::vector<BlockConfig>{tune::default_for(base, target)}
            : tune::candidate_configs(base, mode == AutotuneMode::max ? tune::SearchSpace::full : tune::SearchSpace::small,
                                      target);
    for (const BlockConfig& c : configs)
      specs.push_back(attention_spec(family, spec, impl_->score, impl_->mask, family_shape, mask_ptr, c, target));
  };
  add_family(Family::fwd, spec.fwd_config);
  if (backward) {
    specs.push_back(
        attention_spec(Family::bwd_preprocess, spec, impl_->score, impl_->mask, shape, nullptr, std::nullopt, target));
    // The kernels of the mode FLEXJIT_DETERMINISTIC selects (default fast; a call that picks the other mode in
    // CallOptions compiles its kernels on first use).
    const BackwardPlan plan = plan_backward(*impl_, target, shape, mask_ptr, CallOptions{});
    if (plan.fast || plan.ordered) {
      family_shape.fast_dq = true;
      family_shape.ordered_dq = plan.ordered;
      add_family(Family::bwd_dkdv, spec.bwd_dkdv_config);
      family_shape.fast_dq = family_shape.ordered_dq = false;
    }
    if (!plan.fast && (!plan.ordered || plan.measure_way)) {  // the dQ kernel's way (also measured)
      add_family(Family::bwd_dq, spec.bwd_dq_config);
      add_family(Family::bwd_dkdv, spec.bwd_dkdv_config);
      const codegen::KernelSpec dq =
          attention_spec(Family::bwd_dq, spec, impl_->score, impl_->mask, shape, mask_ptr, std::nullopt, target);
      if (dq.buffer_grads) specs.push_back(attention::buffer_grad_reduce_spec(dq));
    }
  }
  if (masked) {
    codegen::KernelSpec tables = codegen::block_mask_kernel_spec(impl_->mask, 128, 128);
    tables.buffer_offsets_32 = codegen::reads_buffers(spec.declarations, {&impl_->mask});
    specs.push_back(std::move(tables));
  }
  std::vector<WarmedKernel> out(specs.size());
  parallel_for(specs.size(), jobs > 0 ? size_t(jobs) : 0, [&](size_t i) {
    const jit::CompiledKernel c = codegen::compile_kernel(specs[i], target).kernel;
    WarmedKernel& w = out[i];
    w.family = std::string(codegen::family_name(specs[i].family));
    w.config = codegen::descriptor(specs[i].family).tiled ? specs[i].config.str() : "";
    w.arch = target;
    w.compile_ms = c.compile_ms;
    w.from_cache = c.from_disk_cache;
    if (!c.resources.empty()) {
      w.registers = c.resources.begin()->second.registers;
      w.spill_bytes = c.resources.begin()->second.spill_store_bytes;
    }
  });
  return out;
}

}  // namespace flexjit
