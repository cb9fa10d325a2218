#pragma once
/// \file
/// The score_mod / mask_mod expression language: parse and type-check a user expression, analyse
/// it, emit it as a CUDA device function, evaluate it on the host, and differentiate it.
///
/// A score_mod sees `score` (float) and the ints `b`, `h`, `q_idx`, `kv_idx`, `q_len`, `kv_len`
/// and yields a number; a mask_mod sees the same ints (no `score`) and yields a bool. Declared
/// parameters (int/float scalars) and buffers (device tensors) may be read by name.
///
/// The language (see DESIGN.md): C operators and precedence (`?:`, `||`, `&&`, `|`, `^`, `&`,
/// `==`, `!=`, `<`, `<=`, `>`, `>=`, `+`, `-`, `*`, `/`, `%`, unary `-`, `!`), literals (ints,
/// floats, `true`, `false`, `inf`), and the functions `abs min max clamp exp exp2 log log2 sqrt
/// rsqrt tanh sigmoid sin cos floor ceil pow where(cond, a, b)` plus the explicit conversions
/// `int(x)` (float: truncates toward zero, saturating, NaN -> 0; bool: 0/1) and `float(x)`.
/// Typing: int is 32-bit and wraps on `+ - *` and unary `-`; int `/` and `%` truncate as in C,
/// `x / 0 == x % 0 == 0` and `INT_MIN / -1 == INT_MIN` (the same on device and host); an int meets
/// a float -> float; nothing converts to int implicitly (buffer indices must be ints); `&& || !`,
/// conditions and mask results are bools; `& | ^` take two ints or two bools; `abs min max clamp`
/// of ints stay ints, the other functions compute in float. The accuracy of the device functions
/// is listed in templates/flexjit_expr.cuh.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit {

/// Which modification an expression describes.
enum class ModKind { score, mask };

/// "score_mod" or "mask_mod": the name used in messages and `#line` directives.
std::string_view mod_name(ModKind kind) noexcept;

/// The static type of an expression or sub-expression.
enum class ScalarType { boolean, integer, floating };

/// "bool", "int" or "float".
std::string_view scalar_type_name(ScalarType type) noexcept;

/// A named device tensor an expression may index, e.g. `slope[h]` or `bias[h][q_idx - kv_idx]`.
struct BufferDecl {
  std::string name;            ///< identifier used in expressions
  DType dtype = DType::f32;    ///< element type; f16/bf16/f32 read as float, i32/u8 as int
  std::vector<int64_t> shape;  ///< one extent per dimension (rank 1..8); -1 = given at call time
  /// The backward also returns d(loss)/d(buffer) (fp32, the buffer's shape). Only float buffers
  /// (f32, f16, bf16) read by score_mod can be learnable (UsageError / ExprError otherwise).
  bool learnable = false;

  /// Parses the CLI form "NAME:DTYPE:DIM[xDIM...]" (DIM may be `?` for a call-time extent);
  /// throws UsageError naming the bad part. The result is not learnable (CLI: `--grad NAME`).
  static BufferDecl parse(std::string_view text);
};

/// A named scalar passed as a kernel argument at launch, so a new value never recompiles.
struct ParamDecl {
  std::string name;                       ///< identifier used in expressions
  ScalarType type = ScalarType::floating; ///< integer or floating (bool is not allowed)

  /// Parses the CLI form "NAME:TYPE" with TYPE `int` or `float`; throws UsageError if malformed.
  static ParamDecl parse(std::string_view text);
};

/// Everything besides the built-in variables that expressions may refer to.
struct Declarations {
  std::vector<BufferDecl> buffers;  ///< buffers, in declaration order (the kernel argument order)
  std::vector<ParamDecl> params;    ///< parameters, in declaration order

  /// The buffer of that name, or nullptr.
  const BufferDecl* find_buffer(std::string_view name) const noexcept;
  /// The parameter of that name, or nullptr.
  const ParamDecl* find_param(std::string_view name) const noexcept;
};

/// A point at which an expression is evaluated on the host.
struct EvalPoint {
  double score = 0.0;  ///< ignored by mask_mods
  int b = 0;           ///< batch index
  int h = 0;           ///< query head index
  int q_idx = 0;       ///< query position
  int kv_idx = 0;      ///< key/value position
  int q_len = 0;       ///< query sequence length
  int kv_len = 0;      ///< key/value sequence length
};

/// A host-side view of a buffer's contents, for the interpreter (row-major, contiguous).
struct HostBufferView {
  const void* data = nullptr;   ///< first element
  DType dtype = DType::f32;     ///< must equal the declaration's dtype
  std::vector<int64_t> shape;   ///< actual extents; must match the declaration where fixed
};

/// Values for the declared buffers and parameters, for host evaluation.
struct EvalInputs {
  std::map<std::string, HostBufferView> buffers;  ///< by buffer name
  std::map<std::string, double> params;           ///< by parameter name (ints given as doubles)
};

namespace expr {
struct Node;  // the typed AST, internal to src/expr
class BoundEvaluator;
}  // namespace expr

/// How the indices of one buffer read vary over the scores of an attention problem. It decides
/// how the read's gradient is accumulated (see BufferReadGradient).
enum class IndexPattern {
  /// No index reads q_idx or kv_idx: one element per (b, h), e.g. `slope[h]`, `gain[0]`.
  per_head,
  /// Exactly one index reads q_idx / kv_idx, and it is `c * (q_idx - kv_idx)` (integer c != 0)
  /// plus terms reading neither: a band of diagonals, e.g. `rel[h][q_idx - kv_idx + 4095]`.
  diagonal,
  /// Injective in (b, h, q_idx, kv_idx): for each of the four some index is `±variable + terms
  /// reading none of them`, e.g. `bias[b][h][q_idx][kv_idx]`. Each element gets one score.
  per_score,
  /// Anything else, e.g. `bias[doc[kv_idx]][h]` or `row[h][q_idx]`.
  arbitrary,
};

/// "per_head", "diagonal", "per_score" or "arbitrary".
std::string_view index_pattern_name(IndexPattern pattern) noexcept;

struct BufferReadGradient;
struct ScoreKvAffineForm;

/// A parsed, type-checked score_mod or mask_mod. Immutable and cheap to copy (shares its AST).
class Expr {
 public:
  /// Parses and type-checks `source` as a mod of `kind`. Throws ExprError listing every problem
  /// found (position, caret, suggestion). `source` may span several lines; its size is capped at
  /// 64 KiB and its nesting depth at 256.
  static Expr parse(ModKind kind, std::string_view source, const Declarations& declarations = {});

  /// The score_mod `score` (what is used when the user gives none).
  static Expr identity_score();
  /// The mask_mod `true` (what is used when the user gives none).
  static Expr no_mask();

  /// Which mod this is.
  ModKind kind() const noexcept;
  /// The text the expression was parsed from (or the canonical text, for derived expressions).
  const std::string& source() const noexcept;
  /// The declarations it was checked against.
  const Declarations& declarations() const noexcept;
  /// The type the expression yields (score_mod: int or float, mask_mod: bool).
  ScalarType type() const noexcept;

  /// Canonical printed form: minimal parentheses, single spaces around binary operators, floats
  /// printed so that they re-parse to the same value, `c ? a : b` printed as `where(c, a, b)`,
  /// unary `+` dropped. Equal canonical forms mean equal expressions, and parsing the canonical
  /// form gives it back unchanged.
  std::string canonical() const;
  /// Stable 64-bit hash of the canonical form (XXH3-64 of canonical(); the same across processes,
  /// platforms and whitespace or redundant-parenthesis changes). It covers the expression text
  /// only, not the declarations (a buffer's dtype or shape).
  uint64_t hash() const;

  /// Built-in variables the expression reads (subset of score, b, h, q_idx, kv_idx, q_len, kv_len).
  std::set<std::string> free_variables() const;
  /// True when the expression reads the named built-in variable.
  bool uses(std::string_view variable) const;
  /// Names of the buffers read.
  std::set<std::string> buffers_read() const;
  /// True when some buffer read has an index that reads q_idx or kv_idx, directly or through
  /// another read: a table over the scores' positions (`bias[q_idx][kv_idx]`, `rel[kv_idx - q_idx]`,
  /// `bias[doc[q_idx]][h]`), not one value per head or batch (`slope[h]`).
  bool reads_buffers_by_position() const;
  /// True when some buffer read has an index that reads q_idx, directly or through another read
  /// (`doc[q_idx]`, `bias[q_idx][kv_idx]`); false for reads at key positions alone (`pad[kv_idx]`).
  bool reads_buffers_at_query_positions() const;
  /// Names of the parameters read.
  std::set<std::string> params_read() const;
  /// True for a score_mod that returns `score` unchanged (after simplification).
  bool is_identity() const;
  /// True for a mask_mod that is the constant `true` (after simplification).
  bool is_always_true() const;
  /// True for a mask_mod that is the constant `false` (after simplification).
  bool is_always_false() const;

  /// d(score_mod)/d(score), simplified, as a new score_mod-kind expression of type float. Chain
  /// rule through every function; `where` / `?:` branchwise; comparisons, ints, `int()`, `floor`,
  /// `ceil` contribute 0. At a kink the derivative of the branch the forward value takes is used
  /// (abs'(0) = 1, min/max ties take the first argument, clamp on a bound takes x). Simplification
  /// treats `0 * x` as 0 even for infinite x. Throws UsageError for a mask_mod.
  Expr gradient() const;
  /// For a score_mod: one entry per distinct read of a learnable buffer (structurally equal reads
  /// are one), in the order they first appear. Each gives d(score_mod)/d(read) (chain rule as in
  /// gradient(); other reads and `score` are held fixed), the index expressions and their
  /// IndexPattern. Empty for a mask_mod or when no learnable buffer is read.
  std::vector<BufferReadGradient> buffer_gradients() const;
  /// The expression with the built-in variable `variable` replaced by a constant, simplified.
  Expr substitute(std::string_view variable, double value) const;

  /// Emits a `__device__ __forceinline__` function named `function_name` (a C++ identifier;
  /// UsageError otherwise) with the fixed signature
  ///   score_mod: `float NAME(float score, int b, int h, int q_idx, int kv_idx, int q_len,
  ///                          int kv_len, const FlexjitModArgs& args)`
  ///   mask_mod:  `bool NAME(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len,
  ///                         const FlexjitModArgs& args)`
  /// The body sits under `#line 1 "score_mod"` / `#line 1 "mask_mod"` (or `line_file` if given).
  /// Needs `flexjit_expr.cuh` and the struct from `emit_mod_args_struct`.
  std::string emit_cuda(const std::string& function_name, const std::string& line_file = "") const;

  /// For a score_mod: the constant by which it and its derivative multiply every `score`, the 1/30
  /// of `30 * tanh(score / 30)` (forms `score * k`, `k * score`, `score / c`, k a literal); 1 where
  /// the two have no one such factor in common (or for a mask_mod). A kernel folds it into the
  /// softmax scale it multiplies by already (emit_cuda_prescaled).
  double score_prescale() const;
  /// For a score_mod: emits `float NAME(float flexjit_acc, float flexjit_score_scale, int b, int h,
  /// int q_idx, int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned&
  /// flexjit_errors)`, the expression's value at score = acc * scale times `output_factor`, where
  /// the caller passes score_scale = scale * prescale: every `score * prescale` is acc *
  /// score_scale, and the root's literal factors are multiplied into output_factor (the same
  /// value up to float rounding, in fewer multiplies).
  /// `prescale` must be score_prescale() of this expression or of the one it is the gradient of
  /// (UsageError otherwise); the two functions then compute their shared subexpressions from the
  /// same float, so a compiler keeps one copy (one tanh for soft-capping's value and derivative).
  std::string emit_cuda_prescaled(const std::string& function_name, double prescale, double output_factor,
                                  const std::string& line_file = "") const;

  /// For a score_mod of the form `g * score + P` whose P changes by the same amount from one key
  /// to the next along a row (ALiBi's `score + slope[h] * (kv_idx - q_idx)`): g, that amount and
  /// the longest length at which the form holds (see ScoreKvAffineForm); nullopt for any other
  /// expression. A kernel then evaluates P once per row and each score in two fused multiply-adds.
  std::optional<ScoreKvAffineForm> kv_affine_form() const;

  /// How many column values the mod has: its largest subexpressions that read a buffer and
  /// depend on kv_idx but not on q_idx or score (`doc[kv_idx]`, a score_mod's `bias[b][kv_idx]`).
  /// A kernel can compute them once per key of a tile instead of once per score
  /// (emit_cuda_columns, emit_cuda_prescaled_columns).
  int column_value_count() const;
  /// For a mask_mod with column values (N = column_value_count()): emits
  ///   `void VALUES_NAME(int b, int h, int kv_idx, int q_len, int kv_len, const FlexjitModArgs&
  ///    args, unsigned (&flexjit_values)[N], unsigned (&flexjit_value_errors)[N])`,
  /// which computes one key's values (int and float bits, bool as 0 or 1) and the error bits each
  /// value's reads reported, and
  ///   `bool MASK_NAME(int b, int h, int q_idx, int kv_idx, int q_len, int kv_len, const
  ///    FlexjitModArgs& args, unsigned& flexjit_errors, const unsigned (&flexjit_values)[N],
  ///    const unsigned (&flexjit_value_errors)[N])`,
  /// the mask with those values read from the arrays. Its result equals emit_cuda's function's,
  /// and so do its errors: a value's error bits count where the mask reads the value, and only
  /// where a `&&` / `||` needs it. Throws UsageError when column_value_count() is 0 or a name is
  /// not a C++ identifier.
  std::string emit_cuda_columns(const std::string& values_name, const std::string& mask_name) const;
  /// For a score_mod with column values (N = column_value_count()): emits the values function
  /// as emit_cuda_columns does (`void VALUES_NAME(int b, int h, int kv_idx, ...)`) and
  ///   `float SCORE_NAME(float flexjit_acc, float flexjit_score_scale, int b, int h, int q_idx,
  ///    int kv_idx, int q_len, int kv_len, const FlexjitModArgs& args, unsigned& flexjit_errors,
  ///    const unsigned (&flexjit_values)[N], const unsigned (&flexjit_value_errors)[N])`,
  /// emit_cuda_prescaled's function with those values read from the arrays: its result equals
  /// that function's, and so do its errors (a value's error bits count where the score_mod
  /// reads the value). Throws UsageError for a mask_mod, a score_mod without column values or
  /// a name that is not a C++ identifier.
  std::string emit_cuda_prescaled_columns(const std::string& values_name, const std::string& score_name,
                                          double prescale, double output_factor) const;
  /// For a score_mod: how many diagonal values it has, its largest subexpressions that read a
  /// buffer and depend on q_idx and kv_idx only through kv_idx - q_idx, and not on score
  /// (`rel[h][kv_idx - q_idx + 4096]`); 0 for a mask_mod. A kernel can compute them once per
  /// diagonal of a tile instead of once per score (emit_cuda_prescaled_diagonals).
  int diagonal_value_count() const;
  /// For a score_mod with diagonal values: true when its derivative (gradient()) has diagonal
  /// values of its own (`score * rel[kv_idx - q_idx + 4096]`), which a backward that stages the
  /// score_mod's would still read once per score; false otherwise (`score + rel[...]`, whose
  /// derivative is 1) and for a mask_mod. Cached, as diagonal_value_count().
  bool gradient_has_diagonal_values() const;
  /// For a score_mod with diagonal values: true when it also has an affine form in kv_idx
  /// (kv_affine_form().has_value(): ALiBi's `slope[h] * (kv_idx - q_idx)`), whose per-score form
  /// (two FFMAs) a kernel keeps rather than a shared load per score; false otherwise. Cached, so
  /// that a launch's shared-memory size need not analyse the tree.
  bool diagonal_values_are_kv_affine() const;
  /// For a score_mod: true when it is `score + V` or `V + score` with V its one diagonal value, a
  /// float (`score + rel[h][kv_idx - q_idx + 4096]`, a T5 bucket's table read): a bias that a
  /// kernel can add to the scores' accumulators before Q K^T adds in, instead of once per score
  /// after it. False otherwise and for a mask_mod. Cached, as diagonal_value_count().
  bool diagonal_value_is_added_to_score() const;
  /// For a score_mod with diagonal values: true when one of them reads b, q_len or kv_len, so
  /// that a table of them per query head and diagonal (a kernel's diagonal table, evaluated once
  /// per call) would not hold them; false otherwise and for a mask_mod. Cached, as
  /// diagonal_value_count().
  bool diagonal_values_read_batch_or_lengths() const;
  /// For a score_mod with diagonal values (N = diagonal_value_count()): emits
  ///   `void VALUES_NAME(int b, int h, int kv_idx, int q_len, int kv_len, const FlexjitModArgs&
  ///    args, unsigned (&flexjit_values)[N], unsigned (&flexjit_value_errors)[N])`,
  /// whose kv_idx is the diagonal kv_idx - q_idx, and the score function emit_cuda_prescaled_columns
  /// emits, with the diagonal's values read from the arrays. Throws UsageError for a mask_mod, a
  /// score_mod without diagonal values or a name that is not a C++ identifier.
  std::string emit_cuda_prescaled_diagonals(const std::string& values_name, const std::string& score_name,
                                            double prescale, double output_factor) const;

  /// For a mask_mod: true when its tiles can be classified by interval bounds (every
  /// sub-expression an int or a bool, and no buffer indexed by kv_idx). The decode kernel then
  /// classifies its own key tiles (no classification kernel); see emit_tile_bounds_cuda.
  bool has_tile_bounds() const;
  /// Emits `__device__ __forceinline__ int NAME(int b, FlexjitRange h, FlexjitRange q_idx,
  /// FlexjitRange kv_idx, int q_len, int kv_len, const FlexjitModArgs& args)`: for the positions
  /// of a tile (h, q_idx, kv_idx each within its range), 0 when the mask keeps none of them, 2 when
  /// it keeps all, 1 when some or when the bounds cannot tell. Sound: 0 and 2 are never wrong.
  /// Needs flexjit_expr.cuh, flexjit_tile_bounds.cuh and the struct from emit_mod_args_struct.
  /// Throws UsageError when has_tile_bounds() is false or NAME is not a C++ identifier.
  std::string emit_tile_bounds_cuda(const std::string& function_name) const;

  /// Evaluates the expression at one point (float math in double precision, integer math exactly
  /// as on the device). Throws ExprError for an out-of-bounds buffer read, naming the expression,
  /// the index and the shape, and UsageError for missing inputs.
  double evaluate(const EvalPoint& point, const EvalInputs& inputs) const;

  /// Binds the inputs once for fast repeated evaluation (CPU reference, CPU block masks): the tree
  /// is compiled into a register program with buffers and parameters resolved, so a call does no
  /// lookups and no allocation. Only the inputs the expression reads must be given (UsageError
  /// otherwise, or when a dtype, rank or fixed extent differs from the declaration). The buffers'
  /// storage must outlive the evaluator. The evaluator is thread-safe.
  expr::BoundEvaluator bind(const EvalInputs& inputs) const;

  /// The root of the typed AST (for codegen and tests inside flexjit).
  const std::shared_ptr<const expr::Node>& root() const noexcept { return root_; }

  /// Builds an Expr around an already-checked AST (used by gradient/substitute and tests).
  Expr(ModKind kind, std::shared_ptr<const expr::Node> root, Declarations declarations,
       std::string source);

 private:
  ModKind kind_;
  std::shared_ptr<const expr::Node> root_;
  std::shared_ptr<const Declarations> declarations_;
  std::string source_;
  int column_values_ = 0;  // column_value_count()
  int diagonal_values_ = 0;  // diagonal_value_count()
  bool gradient_diagonal_values_ = false;  // gradient_has_diagonal_values()
  bool diagonal_kv_affine_ = false;        // diagonal_values_are_kv_affine()
  bool diagonal_added_ = false;            // diagonal_value_is_added_to_score()
  bool diagonal_call_shape_ = false;       // diagonal_values_read_batch_or_lengths()
};

namespace expr {
/// Evaluates one Expr repeatedly against inputs bound once (no per-call name lookups).
class BoundEvaluator {
 public:
  /// Value at `point` (bool results are 0.0 / 1.0). `&&`, `||`, `?:` and `where` evaluate only
  /// the operands they need, as on the device. Throws ExprError for an out-of-bounds buffer read.
  double operator()(const EvalPoint& point) const;
  /// Opaque state, shared by copies.
  struct State;
  /// Used by Expr::bind.
  explicit BoundEvaluator(std::shared_ptr<const State> state);

 private:
  std::shared_ptr<const State> state_;
};
}  // namespace expr

/// A score_mod's affine form in kv_idx (Expr::kv_affine_form): score_mod = score_factor * score + P
/// with P(q_idx, kv_idx + 1) = P(q_idx, kv_idx) + kv_slope, exactly in the integer sums and up to
/// float rounding in the rest.
struct ScoreKvAffineForm {
  double score_factor = 0.0;  ///< d(score_mod)/d(score), a nonzero constant
  Expr kv_slope;              ///< d(P)/d(kv_idx): a float score_mod-kind expression without score or kv_idx
  /// Every int sum that carries kv_idx is a sum of positions and literals; at lengths up to this
  /// value none of them can pass 2^31 - 1, so the form is exact there.
  int max_len = 0;
};

/// The partial derivative of a score_mod with respect to one read `buf[i...]` of a learnable
/// buffer: d(loss)/d(buf[e]) = sum over the scores s where the read's indices equal e of
/// d(loss)/d(score_mod(s)) * derivative(s), summed over the reads of that buffer.
struct BufferReadGradient {
  std::string buffer;          ///< the buffer read
  std::string read;            ///< canonical text of the read, e.g. `rel[h][q_idx - kv_idx + 4095]`
  std::vector<Expr> indices;   ///< one int score_mod-kind expression per dimension
  Expr derivative;             ///< d(score_mod)/d(read): float, simplified, may read `score`
  IndexPattern pattern = IndexPattern::arbitrary;  ///< how the indices vary
  int diagonal_dim = -1;        ///< IndexPattern::diagonal: the index holding q_idx - kv_idx
  int diagonal_coefficient = 0; ///< IndexPattern::diagonal: c in `c * (q_idx - kv_idx)`
};

/// Checks the learnable buffers of a variant: each must be read by `score_mod`. A learnable buffer
/// read only by `mask_mod` throws ExprError at that read (a mask has no gradient); one read by
/// neither throws UsageError. (Int learnable buffers are rejected when the expressions are parsed.)
void check_learnable_buffers(const Expr& score_mod, const Expr& mask_mod);

/// The `struct FlexjitModArgs { ... };` that emitted functions read parameters and buffers from:
/// one field `p_<name>` (int or float) per parameter, in declaration order, then one
/// `FlexjitBuffer<T, RANK> buf_<name>` per buffer. Always defines the struct (an empty
/// declaration list gives a struct with one unused int, so it is never zero-sized).
std::string emit_mod_args_struct(const Declarations& declarations);

/// Byte layout of FlexjitModArgs on the host, so the launcher can fill it field by field.
struct ModArgsLayout {
  /// One field of the struct.
  struct Field {
    std::string name;     ///< parameter or buffer name
    bool is_buffer;       ///< buffer (pointer + extents + strides) or scalar parameter
    ScalarType type;      ///< parameter type (for buffers: the type a read yields)
    size_t offset;        ///< byte offset of the field (for buffers, of the pointer)
    size_t rank;          ///< buffers: rank; extents at offset+8, strides at offset+8+8*rank (int64)
  };
  std::vector<Field> fields;  ///< in declaration order
  size_t size = 0;            ///< sizeof(FlexjitModArgs)
  size_t alignment = 4;       ///< alignof(FlexjitModArgs)
};

/// Computes the layout matching `emit_mod_args_struct(declarations)`.
ModArgsLayout mod_args_layout(const Declarations& declarations);

/// Ready-made expressions and combinators, as expression text to pass to Expr::parse or to
/// AttentionSpec. Each returns a string so results compose.
namespace mods {
/// `q_idx >= kv_idx` (positions attend to themselves and earlier ones), with q and kv aligned at
/// the start.
std::string causal();
/// Causal attention limited to the last `window` positions: `q_idx >= kv_idx && q_idx - kv_idx <=
/// window`.
std::string sliding_window(int window);
/// The first `prefix` keys are visible to every query, the rest causally:
/// `kv_idx < prefix || q_idx >= kv_idx`.
std::string prefix_lm(int prefix);
/// Document packing: `doc[q_idx] == doc[kv_idx]` where `doc_buffer` names an int buffer of
/// document ids.
std::string document(const std::string& doc_buffer);
/// ALiBi: `score + slope[h] * (kv_idx - q_idx)` where `slope_buffer` names a float buffer of
/// per-head slopes.
std::string alibi(const std::string& slope_buffer);
/// Soft-capping: `cap * tanh(score / cap)`.
std::string softcap(double cap);
/// Logical AND of mask expressions (each parenthesised).
std::string and_masks(const std::vector<std::string>& masks);
/// Logical OR of mask expressions (each parenthesised).
std::string or_masks(const std::vector<std::string>& masks);
}  // namespace mods

}  // namespace flexjit
