// Row-by-row errors against a reference, for the GPU tests: the whole-tensor relative error lets one
// wrong row among thousands through; these do not.
#pragma once

#include <algorithm>
#include <cmath>
#include <ostream>
#include <vector>

namespace flexjit::test {

// The worst row: ||row - ref_row|| / max(||ref_row||, floor) over rows of `width` values, the floor
// a quarter of the RMS norm of the rows the reference makes nonzero, and at least 0.01 (the tests'
// inputs are of unit size). A row's error then reads relative to itself where the row is of the
// usual size, and as an absolute error where the reference makes it small: a dQ row is a sum whose
// terms cancel (its scores' gradients sum to 0), so a small row's rounding is relative to its
// terms, not to itself; and where every row is 0 (one key per query: dS = P (dP - Delta) = 0
// exactly) the kernels' rounding leaves about 1e-5. A row that is wrong, missing or stale is off
// by about its size.
struct RowError {
  double error = 0;   // the worst row's
  size_t row = 0;     // which row (in [B,H,S] order)
  double norm = 0;    // its reference norm, as a fraction of that RMS norm
};

inline RowError worst_row_error(const std::vector<double>& out, const std::vector<double>& ref, int width) {
  RowError worst;
  if (out.size() != ref.size() || width <= 0) return RowError{INFINITY, 0, 0};
  const size_t rows = ref.size() / static_cast<size_t>(width);
  std::vector<double> norms(rows);
  double sum_squares = 0;
  size_t nonzero = 0;
  for (size_t r = 0; r < rows; ++r) {
    double n = 0;
    for (int c = 0; c < width; ++c) n += ref[r * width + c] * ref[r * width + c];
    norms[r] = std::sqrt(n);
    sum_squares += n;
    nonzero += n > 0 ? 1 : 0;
  }
  // Over the rows the reference writes, so that rows it leaves 0 (past a sequence's length) do
  // not shrink the floor.
  const double rms = std::sqrt(sum_squares / std::max<size_t>(nonzero, 1));
  const double floor = std::max(0.25 * rms, 0.01);
  for (size_t r = 0; r < rows; ++r) {
    double diff = 0;
    for (int c = 0; c < width; ++c) {
      const double o = out[r * width + c], e = ref[r * width + c];
      if (!std::isfinite(o) || !std::isfinite(e)) return RowError{INFINITY, r, 0};  // no NaN went in
      diff += (o - e) * (o - e);
    }
    const double error = std::sqrt(diff) / std::max(norms[r], floor);
    if (error > worst.error) worst = RowError{error, r, rms > 0 ? norms[r] / rms : 0};
  }
  return worst;
}

inline std::ostream& operator<<(std::ostream& os, const RowError& e) {
  return os << e.error << " (row " << e.row << ", reference norm " << e.norm << " x the RMS)";
}

// The largest log-sum-exp difference; an infinity (a row without keys) must be matched exactly,
// and a NaN or an unmatched infinity gives +infinity.
inline double worst_lse_error(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isinf(ref[i]) || std::isinf(out[i])) {
      if (out[i] != ref[i]) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(out[i] - ref[i]));
    if (std::isnan(out[i])) return INFINITY;
  }
  return worst;
}

// The bounds the tests hold rows to, as multiples of the whole-tensor tolerance. dQ and dK rows
// get a looser one: their scores' gradients dS = P (dP - Delta) take Delta = rowsum(dO * O) from
// the stored (rounded) output, as every FlashAttention-style backward does, where the reference
// takes the exact one. On a query row with few keys dP - Delta cancels, and so does a key's sum
// over few such rows: worst rows measured 0.085 (dQ, query row 1 of a causal mask) and 0.025 (dK,
// a document's last key), bf16 (perf.md "(zf)"). dV = sum P dO has no Delta.
constexpr double kRowTolerance = 5, kScoreGradientRowTolerance = 25;

}  // namespace flexjit::test
