#include "codegen/error_words.hpp"

#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "jit/memo.hpp"

namespace flexjit::codegen {
namespace {

constexpr size_t kWordsPerSlab = 256;

struct Word {
  Stream stream;
  std::string kernel;
  CUdeviceptr address;
};

// The words of one context. Slabs are allocated zeroed and never freed (the context may outlive
// any caller, and the memory is tiny).
struct ContextWords {
  std::vector<CUdeviceptr> slabs;
  size_t used_in_last = kWordsPerSlab;
  std::map<std::pair<Stream, std::string>, CUdeviceptr> by_owner;
};

std::mutex g_mutex;
std::map<unsigned long long, ContextWords> g_contexts;  // by context id

// Reads every word `select` picks in the current context (after the caller synchronised), clears
// those that are set and returns their kernels, each once, in order.
template <typename Select>
std::vector<std::string> take(Select select) {
  const unsigned long long context = jit::current_context_id();
  std::vector<Word> words;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_contexts.find(context);
    if (it == g_contexts.end()) return {};
    for (const auto& [owner, address] : it->second.by_owner)
      if (select(owner.first)) words.push_back({owner.first, owner.second, address});
  }
  std::vector<std::string> kernels;
  std::set<std::string> seen;
  for (const Word& w : words) {
    unsigned value = 0;
    FLEXJIT_CU(jit::driver().cuMemcpyDtoH(&value, w.address, sizeof(value)));
    if (value == 0) continue;
    FLEXJIT_CU(jit::driver().cuMemsetD8(w.address, 0, sizeof(value)));
    std::string line = w.kernel;
    if ((value & 2u) && w.kernel.find("seq_lens=1") != std::string::npos)  // forward / backward with lengths
      line += " [per-sequence length outside the padded length: clamped into range]";
    else if (value & 2u)  // FLEXJIT_ERROR_KV_OUT_OF_RANGE (flexjit_expr.cuh): decode's page-table guard
      line += " [page-table entry outside the page pool or sequence length beyond the cache: those keys were not read]";
    if (value & 4u)  // FLEXJIT_ERROR_ORDER_LOST: the ordered dQ writer gave up waiting for its turn
      line += " [the deterministic dQ sum waited too long for its turn and added out of order: dQ is right but its "
              "last bits may differ between runs]";
    if (value & 8u)  // FLEXJIT_ERROR_FIRST_STORE_LOST: the fast dQ writer gave up waiting for a first store
      line += " [the fast backward's dQ writer waited too long for a query tile's first store and added before it: "
              "that tile's dQ is wrong]";
    if (value & 16u)  // FLEXJIT_ERROR_BIAS_STAND_IN: a row's largest score was a finite stand-in held at 2^126
      line += " [a row's largest score came from a finite stand-in beyond 2^126 times the scale: its lse, and its "
              "output where such values differ, are not exact]";
    if (seen.insert(line).second) kernels.push_back(line);
  }
  return kernels;
}

}  // namespace

CUdeviceptr error_word(Stream stream, const std::string& kernel) {
  const unsigned long long context = jit::current_context_id();
  std::lock_guard<std::mutex> lock(g_mutex);
  ContextWords& words = g_contexts[context];
  const auto key = std::make_pair(stream, kernel);
  if (auto it = words.by_owner.find(key); it != words.by_owner.end()) return it->second;
  if (words.used_in_last == kWordsPerSlab) {
    CUdeviceptr slab = 0;
    FLEXJIT_CU(jit::driver().cuMemAlloc(&slab, kWordsPerSlab * sizeof(unsigned)));
    FLEXJIT_CU(jit::driver().cuMemsetD8(slab, 0, kWordsPerSlab * sizeof(unsigned)));
    words.slabs.push_back(slab);
    words.used_in_last = 0;
  }
  const CUdeviceptr address = words.slabs.back() + words.used_in_last++ * sizeof(unsigned);
  words.by_owner.emplace(key, address);
  return address;
}

std::vector<std::string> take_stream_errors(Stream stream) {
  jit::ensure_context();
  FLEXJIT_CU(jit::driver().cuStreamSynchronize(stream));
  return take([stream](Stream owner) { return owner == stream; });
}

std::vector<std::string> take_context_errors() {
  jit::ensure_context();
  FLEXJIT_CU(jit::driver().cuCtxSynchronize());
  return take([](Stream) { return true; });
}

}  // namespace flexjit::codegen
