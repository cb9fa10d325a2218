#pragma once
// "Did you mean ...?" hints: the known name closest to a misspelt one.

#include <string>
#include <string_view>
#include <vector>

namespace flexjit::tmpl {

/// Edit distance counting insertions, deletions, substitutions and swaps of two neighbours
/// (the usual typos) as one step each.
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, or "" when none is close enough to be a likely typo.
/// Ties go to the alphabetically first candidate so that messages are reproducible.
std::string closest_name(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" for the closest candidate, or "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace flexjit::tmpl
