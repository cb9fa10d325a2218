// flexjit's host work per call, without a GPU: run with the fake driver of this folder first on the
// library path (LD_LIBRARY_PATH=build/tests/host_cost), which answers as an sm_90 device, hands out
// zeroed host memory and counts launches instead of running kernels. Each case is called once (to
// compile its kernels into the cache), then `--calls` times back to back; the median per call over
// `--rounds` rounds is printed as a JSON line with the launches per call. The numbers are the host
// path's alone (a real driver adds a few microseconds per launch); they are for finding and
// measuring host-side costs on any machine, e.g. under `valgrind --tool=callgrind`.
//
//   LD_LIBRARY_PATH=build/tests/host_cost FLEXJIT_AUTOTUNE=off build/tests/host_cost/flexjit_host_cost
//
// Each line also lists the driver entry points a call made (per call); flexjit_driver_cost, on a
// GPU, says what each of them costs there.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "flexjit/attention.hpp"
#include "flexjit/block_mask.hpp"
#include "flexjit/flexjit.h"
#include "flexjit/paged_kv.hpp"

namespace {

using namespace flexjit;

// "Device" memory: with the fake driver any host pointer does (kernels never run).
struct Arena {
  std::vector<std::vector<unsigned char>> blocks;
  void* get(size_t bytes) {
    blocks.emplace_back(std::max<size_t>(bytes, 16));
    return blocks.back().data();
  }
  TensorView tensor(DType dtype, std::vector<int64_t> shape) {
    size_t n = 1;
    for (int64_t e : shape) n *= static_cast<size_t>(e);
    return TensorView::contiguous(get(n * dtype_size(dtype)), dtype, std::move(shape));
  }
};

int launches() {
  // The same library flexjit opens (by the same name, on the same path).
  static auto count = [] {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return driver ? reinterpret_cast<int (*)()>(dlsym(driver, "fake_cuda_launches")) : nullptr;
  }();
  if (count == nullptr) {
    // Not the fake driver: refuse rather than time a real GPU's queue with the wrong method.
    std::fprintf(stderr, "flexjit_host_cost: libcuda.so.1 is not the fake driver of tests/host_cost; put its "
                         "folder first on LD_LIBRARY_PATH\n");
    std::exit(2);
  }
  return count();
}

// The fake driver's calls per entry point so far.
std::map<std::string, long> driver_calls() {
  static auto calls = [] {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return reinterpret_cast<int (*)(const char**, long*, int)>(dlsym(driver, "fake_cuda_calls"));
  }();
  const char* names[128];
  long counts[128];
  const int n = std::min(calls(names, counts, 128), 128);
  std::map<std::string, long> by_entry;
  for (int i = 0; i < n; ++i) by_entry[names[i]] = counts[i];
  return by_entry;
}

void measure(const std::string& name, int calls, int rounds, const std::function<void()>& call) {
  call();  // compiles (or loads) the kernels
  std::vector<double> per_call;
  int launched = 0;
  std::map<std::string, long> before_calls, after_calls;
  for (int r = 0; r < rounds; ++r) {
    const int before = launches();
    before_calls = driver_calls();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    const auto stop = std::chrono::steady_clock::now();
    launched = launches() - before;
    after_calls = driver_calls();
    per_call.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / calls);
  }
  // Which driver work each call repeats: the entry points the last round called, per call.
  std::string entries;
  for (const auto& [entry, count] : after_calls) {
    const long made = count - (before_calls.count(entry) ? before_calls[entry] : 0);
    if (made == 0) continue;
    char text[160];
    std::snprintf(text, sizeof(text), "%s\"%s\": %.2f", entries.empty() ? "" : ", ", entry.c_str(),
                  double(made) / calls);
    entries += text;
  }
  std::sort(per_call.begin(), per_call.end());
  std::printf("{\"name\": \"%s\", \"host_us\": %.2f, \"min_us\": %.2f, \"launches_per_call\": %.2f, "
              "\"driver_calls_per_call\": {%s}}\n",
              name.c_str(), per_call[per_call.size() / 2], per_call.front(), double(launched) / calls, entries.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000, rounds = 5;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--calls")) calls = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
  }
  auto wanted = [&](const std::string& name) { return only.empty() || name.find(only) != std::string::npos; };
  launches();  // exits unless the fake driver is loaded
  try {
  Arena arena;

  // Decode: B sequences, Hq=32 over Hkv=8, D=128, one query; contiguous or pages of 16.
  for (auto [B, S, page] : {std::tuple{1, 4096, 0}, std::tuple{1, 4096, 16}, std::tuple{64, 1024, 16}}) {
    const int Hq = 32, Hkv = 8, D = 128;
    AttentionSpec spec;
    spec.head_dim = spec.head_dim_v = D;
    const Attention attention(spec);
    const TensorView q = arena.tensor(DType::bf16, {B, Hq, 1, D}), out = arena.tensor(DType::bf16, {B, Hq, 1, D});
    const TensorView lens = arena.tensor(DType::i32, {B});
    std::vector<int32_t> host_lens(B, S);
    std::vector<int32_t> host_table;
    KVCache kv;
    if (page == 0) {
      kv = KVCache::contiguous(arena.tensor(DType::bf16, {B, Hkv, S, D}), arena.tensor(DType::bf16, {B, Hkv, S, D}),
                               lens);
    } else {
      const int pages = B * S / page;
      for (int i = 0; i < pages; ++i) host_table.push_back(i);
      kv = KVCache::paged(arena.tensor(DType::bf16, {pages, page, Hkv, D}),
                          arena.tensor(DType::bf16, {pages, page, Hkv, D}), arena.tensor(DType::i32, {B, S / page}),
                          lens);
    }
    const std::string base = "decode B=" + std::to_string(B) + " S=" + std::to_string(S) +
                             (page ? " pages of " + std::to_string(page) : " contiguous");
    kv.max_seq_len = S;
    if (wanted(base + ", device lengths only")) measure(base + ", device lengths only", calls, rounds, [&] {
      attention.decode(q, kv, out, TensorView{}, nullptr);
    });
    kv.host_seq_lens = host_lens.data();
    if (page) kv.host_page_table = host_table.data();
    if (wanted(base + ", host copies")) measure(base + ", host copies", calls, rounds, [&] {
      attention.decode(q, kv, out, TensorView{}, nullptr);
    });
  }

  // The same contiguous decode step through the C API (what the Python package calls): DLTensors
  // converted to views on every call.
  const std::string capi_case = "decode B=1 S=4096 contiguous through the C API";
  if (wanted(capi_case)) {
    const int B = 1, Hq = 32, Hkv = 8, S = 4096, D = 128;
    flexjit_variant_desc desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.struct_size = sizeof(desc);
    desc.head_dim = desc.head_dim_v = D;
    flexjit_variant* variant = nullptr;
    if (flexjit_variant_create(&desc, &variant) != FLEXJIT_OK) {
      std::fprintf(stderr, "flexjit_host_cost: %s\n", flexjit_last_error());
      return 1;
    }
    struct Tensor {
      DLTensor t;
      std::vector<int64_t> shape, strides;
    };
    auto dl = [&](DLDataTypeCode code, int bits, std::vector<int64_t> shape) {
      Tensor x;
      x.shape = shape;
      x.strides.assign(shape.size(), 1);
      size_t n = 1;
      for (size_t d = shape.size(); d-- > 0;) {
        x.strides[d] = static_cast<int64_t>(n);
        n *= static_cast<size_t>(shape[d]);
      }
      x.t = DLTensor{arena.get(n * bits / 8), DLDevice{kDLCUDA, 0}, static_cast<int32_t>(shape.size()),
                     DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1}, nullptr, nullptr, 0};
      return x;
    };
    Tensor q = dl(kDLBfloat, 16, {B, Hq, 1, D}), k = dl(kDLBfloat, 16, {B, Hkv, S, D}),
           v = dl(kDLBfloat, 16, {B, Hkv, S, D}), out = dl(kDLBfloat, 16, {B, Hq, 1, D}), lens = dl(kDLInt, 32, {B});
    for (Tensor* x : {&q, &k, &v, &out, &lens}) x->t.shape = x->shape.data(), x->t.strides = x->strides.data();
    flexjit_decode_args args;
    std::memset(&args, 0, sizeof(args));
    args.struct_size = sizeof(args);
    args.q = &q.t, args.k = &k.t, args.v = &v.t, args.seq_lens = &lens.t, args.out = &out.t;
    args.max_seq_len = S;
    bool failed = false;
    measure(capi_case, calls, rounds, [&] {
      failed = failed || flexjit_decode(variant, &args, nullptr, nullptr) != FLEXJIT_OK;
    });
    if (failed) {
      std::fprintf(stderr, "flexjit_host_cost: flexjit_decode failed: %s\n", flexjit_last_error());
      return 1;
    }
    flexjit_variant_destroy(variant);
  }

  // A short causal prefill and its backward: B=1, H=8, S=512, D=128, with a block mask.
  {
    const int B = 1, H = 8, S = 512, D = 128;
    AttentionSpec spec;
    spec.head_dim = spec.head_dim_v = D;
    spec.mask_mod = "q_idx >= kv_idx";
    const Attention attention(spec);
    auto t = [&] { return arena.tensor(DType::bf16, {B, H, S, D}); };
    const TensorView q = t(), k = t(), v = t(), out = t(), dout = t(), dq = t(), dk = t(), dv = t();
    const TensorView lse = arena.tensor(DType::f32, {B, H, S});
    const BlockMask mask = attention.block_mask(B, H, S, S);
    if (wanted("forward causal B=1 H=8 S=512")) measure("forward causal B=1 H=8 S=512", calls, rounds, [&] {
      attention.forward(q, k, v, out, lse, &mask, nullptr);
    });
    if (wanted("backward causal B=1 H=8 S=512"))
      measure("backward causal B=1 H=8 S=512", std::max(1, calls / 4), rounds, [&] {
      attention.backward(q, k, v, out, lse, dout, dq, dk, dv, &mask, nullptr);
    });
    if (wanted("block mask causal B=1 H=8 S=512")) measure("block mask causal B=1 H=8 S=512", calls, rounds, [&] {
      (void)attention.block_mask(B, H, S, S);
    });
    // The same build into memory the caller owns (what the Python package does with PyTorch's
    // allocator): no allocation and no free per mask.
    const Expr causal = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
    const size_t table_bytes = BlockMask::gpu_storage_bytes(causal, B, H, S, S);
    void* tables = arena.get(table_bytes);
    if (wanted("block mask causal B=1 H=8 S=512 into caller storage"))
      measure("block mask causal B=1 H=8 S=512 into caller storage", calls, rounds, [&] {
      (void)BlockMask::build_on_gpu(causal, B, H, S, S, SeqLens{}, {}, nullptr, 128, 128, "", tables, table_bytes);
    });
  }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flexjit_host_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
