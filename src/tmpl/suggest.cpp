#include "tmpl/suggest.hpp"

#include <algorithm>

namespace flexjit::tmpl {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance; three rows are enough for the swap rule.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::string closest_name(std::string_view word, const std::vector<std::string>& candidates) {
  // Short words tolerate fewer edits: 'x' -> 'y' is a different name, not a typo.
  const size_t allowed = word.size() <= 3 ? 1 : word.size() <= 6 ? 2 : 3;
  std::vector<std::string> sorted = candidates;
  std::sort(sorted.begin(), sorted.end());
  std::string best;
  size_t best_distance = allowed + 1;
  for (const auto& candidate : sorted) {
    if (candidate == word) continue;
    size_t distance = edit_distance(word, candidate);
    if (distance < best_distance && distance < word.size()) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best = closest_name(word, candidates);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

}  // namespace flexjit::tmpl
