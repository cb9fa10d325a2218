#include "support/gpu.hpp"

#include <cmath>
#include <limits>

namespace flexjit::test {

double relative_error(const std::vector<double>& out, const std::vector<double>& ref) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (out.size() != ref.size()) return inf;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i]) || !std::isfinite(ref[i])) return inf;
    diff += (out[i] - ref[i]) * (out[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  if (norm == 0) return diff == 0 ? 0 : inf;
  return std::sqrt(diff / norm);
}

}  // namespace flexjit::test
