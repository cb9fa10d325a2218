#pragma once
// The text of the error a call raises when its kernels set error words (codegen::error_words):
// what went wrong, what it did to the results, and what to check, followed by one line per
// kernel that reported (its description and what it saw).
#include <string>
#include <vector>

namespace flexjit::attention {

// The message for the reporting kernels' lines (codegen::take_context_errors /
// take_stream_errors); empty when none reported. Where several kinds are present the most serious
// leads: a lost first dQ store (dQ wrong, a flexjit bug), a lost dQ turn when every line reports
// one (dQ right, not reproducible, a flexjit bug), per-sequence lengths, page-table entries, then
// buffer indices.
std::string kernel_error_message(const std::vector<std::string>& kernels);

}  // namespace flexjit::attention
