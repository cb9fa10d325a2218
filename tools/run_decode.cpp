#include "run_decode.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "command.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/error.hpp"
#include "flexjit/paged_kv.hpp"
#include "flexjit/reference.hpp"

namespace flexjit::cli {

namespace {

// Every extent of a tensor the kernels and the reference index: from 1 (a cache of zero heads or
// slots has nothing to decode against; lengths of 0 are given by --seq-lens) to 2^31-1.
void check_extents(const std::vector<int64_t>& shape, const char* flag, const char* layout) {
  static const char* const names[] = {"0", "1", "2", "3"};
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 1 || shape[d] > INT32_MAX)
      throw ShapeError(std::string(flag) + " " + layout + ": dimension " + names[d] + " has extent " +
                       std::to_string(shape[d]) + "; extents must be between 1 and 2^31-1 (a sequence of no keys is "
                       "a length of 0 in --seq-lens, not an empty cache)");
}

std::vector<int64_t> as_bhsd(const NpyArray& a, const char* flag) {
  std::vector<int64_t> shape;
  if (a.shape.size() == 4) shape = a.shape;
  else if (a.shape.size() == 3) shape = {1, a.shape[0], a.shape[1], a.shape[2]};
  else
    throw UsageError(std::string(flag) + ": expected a [B, H, S, D] (or [H, S, D]) array, got rank " +
                     std::to_string(a.shape.size()));
  check_extents(shape, flag, "[B, H, S, D]");
  return shape;
}

std::vector<int32_t> as_ints(const NpyArray& a, const char* flag, size_t rank) {
  if (a.dtype != DType::i32 || a.shape.size() != rank)
    throw UsageError(std::string(flag) + ": expected an int32 array of rank " + std::to_string(rank) + ", got " +
                     std::string(dtype_name(a.dtype)) + " of rank " + std::to_string(a.shape.size()));
  std::vector<int32_t> out;
  for (double x : a.to_doubles()) out.push_back(static_cast<int32_t>(x));
  return out;
}

DeviceBuffer upload(const NpyArray& a) {
  DeviceBuffer b = DeviceBuffer::allocate(std::max<size_t>(a.data.size(), 16));
  b.upload(a.data.data(), a.data.size());
  return b;
}

}  // namespace

int run_decode(const DecodeRunArgs& a) {
  const bool explicit_pages = !a.k_pages.empty() || !a.v_pages.empty() || !a.page_table.empty();
  if (explicit_pages && (a.k_pages.empty() || a.v_pages.empty() || a.page_table.empty()))
    throw UsageError("--k-pages, --v-pages and --page-table go together");
  if (explicit_pages && (!a.k.empty() || !a.v.empty() || a.page_size > 0))
    throw UsageError("give either --k/--v (with an optional --page-size) or --k-pages/--v-pages/--page-table, not both");
  if (!explicit_pages && (a.k.empty() || a.v.empty())) throw UsageError("--k and --v are required");
  if (a.seq_lens.empty()) throw UsageError("a paged cache needs --seq-lens (int32 [B]: the keys of each sequence)");
  const DType dtype = a.dtype;
  auto rounded = [&](const NpyArray& x) { return NpyArray::from_doubles(x.to_doubles(), dtype, x.shape).to_doubles(); };

  const NpyArray q = read_npy(a.q);
  const std::vector<int64_t> qs = as_bhsd(q, "--q");
  const int B = static_cast<int>(qs[0]), Hq = static_cast<int>(qs[1]), Sq = static_cast<int>(qs[2]),
            D = static_cast<int>(qs[3]);
  const std::vector<int32_t> lens = as_ints(read_npy(a.seq_lens), "--seq-lens", 1);
  if (lens.size() != size_t(B))
    throw ShapeError("--seq-lens holds " + std::to_string(lens.size()) + " lengths; q has a batch of " + std::to_string(B));
  const std::vector<double> qd = rounded(q);
  int view_len = 1;  // keys per sequence in the reference's copy of a paged cache: the longest length
  for (int32_t len : lens) view_len = std::max(view_len, len);

  // The logical contiguous cache (for the reference) and, when paged, the pool the GPU reads.
  int Hkv = 0, Dv = 0, S = 0;
  std::vector<double> kd, vd;
  HostPagedKV pages;
  if (explicit_pages) {
    const NpyArray kp = read_npy(a.k_pages), vp = read_npy(a.v_pages), table = read_npy(a.page_table);
    if (kp.shape.size() != 4 || vp.shape.size() != 4 || vp.shape[0] != kp.shape[0] || vp.shape[1] != kp.shape[1] ||
        vp.shape[2] != kp.shape[2])
      throw ShapeError("--k-pages/--v-pages must be [num_pages, page_size, Hkv, D] and [num_pages, page_size, Hkv, Dv]");
    check_extents(kp.shape, "--k-pages", "[num_pages, page_size, Hkv, D]");
    check_extents(vp.shape, "--v-pages", "[num_pages, page_size, Hkv, Dv]");
    pages.num_pages = static_cast<int>(kp.shape[0]);
    pages.page_size = static_cast<int>(kp.shape[1]);
    pages.page_table = as_ints(table, "--page-table", 2);
    if (table.shape[0] != B)
      throw ShapeError("--page-table has " + std::to_string(table.shape[0]) + " rows; q has a batch of " + std::to_string(B));
    check_extents(table.shape, "--page-table", "[B, max_pages]");
    pages.max_pages = static_cast<int>(table.shape[1]);
    pages.k_pages = rounded(kp);
    pages.v_pages = rounded(vp);
    Hkv = static_cast<int>(kp.shape[2]);
    Dv = static_cast<int>(vp.shape[3]);
    if (kp.shape[3] != D) throw ShapeError("--k-pages head dim " + std::to_string(kp.shape[3]) + " differs from q's " + std::to_string(D));
    // The reference's contiguous copy holds the longest sequence, not the table's capacity (a wide
    // table of short sequences would otherwise cost its capacity in host memory).
    S = view_len;
    kd = gather_pages_on_host(pages.k_pages, pages.page_table, lens, B, Hkv, D, pages.page_size, pages.max_pages, pages.num_pages, S);
    vd = gather_pages_on_host(pages.v_pages, pages.page_table, lens, B, Hkv, Dv, pages.page_size, pages.max_pages, pages.num_pages, S);
  } else {
    const NpyArray k = read_npy(a.k), v = read_npy(a.v);
    const auto ks = as_bhsd(k, "--k"), vs = as_bhsd(v, "--v");
    if (ks[0] != B || vs[0] != B || vs[1] != ks[1] || vs[2] != ks[2] || ks[3] != D)
      throw ShapeError("--q/--k/--v shapes do not fit together: q [B, Hq, Sq, D], k [B, Hkv, S, D], v [B, Hkv, S, Dv]");
    Hkv = static_cast<int>(ks[1]);
    S = static_cast<int>(ks[2]);
    Dv = static_cast<int>(vs[3]);
    kd = rounded(k);
    vd = rounded(v);
    validate_kv_on_host(lens.data(), B, S);
    // The pool holds each sequence's pages whole: pages longer than the cache would only pad it
    // (and a hostile size would ask the host for its size in memory).
    if (a.page_size > S)
      throw UsageError("--page-size " + std::to_string(a.page_size) + " is longer than the cache (--k and --v hold S = " +
                       std::to_string(S) + " positions); give pages of 1 to " + std::to_string(S) + " tokens");
    if (a.page_size > 0) {
      // The reference reads the paged copy back through its page table, so the CPU run checks the
      // paging as well (it must not change a single value).
      pages = page_kv_on_host(kd, vd, B, Hkv, S, D, Dv, lens, a.page_size, /*seed=*/0);
      S = view_len;
      kd = gather_pages_on_host(pages.k_pages, pages.page_table, lens, B, Hkv, D, pages.page_size, pages.max_pages, pages.num_pages, S);
      vd = gather_pages_on_host(pages.v_pages, pages.page_table, lens, B, Hkv, Dv, pages.page_size, pages.max_pages, pages.num_pages, S);
    }
  }
  if (Hq % Hkv != 0)
    throw ShapeError("q has " + std::to_string(Hq) + " heads, not a multiple of the cache's " + std::to_string(Hkv));

  AttentionSpec spec;
  spec.score_mod = a.score;
  spec.mask_mod = a.mask;
  spec.dtype = dtype;
  spec.head_dim = D;
  spec.head_dim_v = Dv;
  if (!a.config.empty()) spec.decode_config = BlockConfig::parse(a.config);
  EvalInputs inputs;
  for (const auto& [name, array] : a.buffers) {
    spec.declarations.buffers.push_back(BufferDecl{name, array.dtype, array.shape});
    inputs.buffers[name] = HostBufferView{array.data.data(), array.dtype, array.shape};
  }
  for (const auto& [decl, value] : a.params) {
    spec.declarations.params.push_back(decl);
    inputs.params[decl.name] = value;
  }
  const Attention attention(spec);
  const double scale = a.scale ? *a.scale : 1.0 / std::sqrt(double(D));
  const ReferenceShape shape{B, Hq, Hkv, Sq, std::max(S, 1), D, Dv};
  auto reference = [&]() {
    return reference_forward_ragged(attention.score_mod(), attention.mask_mod(), inputs, shape, qd, kd, vd, lens, scale);
  };

  const std::vector<int64_t> out_shape{B, Hq, Sq, Dv}, lse_shape{B, Hq, Sq};
  std::vector<double> out, lse;
  if (a.device == "cpu") {
    const ReferenceForward r = reference();
    out = r.out;
    lse = r.lse;
  } else {
    DeviceBuffer dq = upload(NpyArray::from_doubles(qd, dtype, qs));
    DeviceBuffer dlens = DeviceBuffer::from_host(lens);
    const TensorView lens_view = TensorView::contiguous(dlens.data(), DType::i32, {B});
    DeviceBuffer dk, dv, dtable;
    KVCache kv;
    if (explicit_pages || a.page_size > 0) {
      dk = upload(NpyArray::from_doubles(pages.k_pages, dtype, {pages.num_pages, pages.page_size, Hkv, D}));
      dv = upload(NpyArray::from_doubles(pages.v_pages, dtype, {pages.num_pages, pages.page_size, Hkv, Dv}));
      dtable = DeviceBuffer::from_host(pages.page_table);
      kv = KVCache::paged(TensorView::contiguous(dk.data(), dtype, {pages.num_pages, pages.page_size, Hkv, D}),
                          TensorView::contiguous(dv.data(), dtype, {pages.num_pages, pages.page_size, Hkv, Dv}),
                          TensorView::contiguous(dtable.data(), DType::i32, {B, pages.max_pages}), lens_view);
      kv.host_page_table = pages.page_table.data();
    } else {
      dk = upload(NpyArray::from_doubles(kd, dtype, {B, Hkv, S, D}));
      dv = upload(NpyArray::from_doubles(vd, dtype, {B, Hkv, S, Dv}));
      kv = KVCache::contiguous(TensorView::contiguous(dk.data(), dtype, {B, Hkv, S, D}),
                               TensorView::contiguous(dv.data(), dtype, {B, Hkv, S, Dv}), lens_view);
    }
    kv.host_seq_lens = lens.data();
    DeviceBuffer dout = DeviceBuffer::allocate(size_t(B) * Hq * Sq * Dv * dtype_size(dtype));
    DeviceBuffer dlse = DeviceBuffer::allocate(size_t(B) * Hq * Sq * 4);
    dout.fill_bytes(0xff);  // NaN: an element the kernel failed to write cannot pass --check
    dlse.fill_bytes(0xff);
    CallOptions call;
    call.scale = static_cast<float>(scale);
    std::vector<DeviceBuffer> storage;
    for (const auto& [name, array] : a.buffers) {
      storage.push_back(upload(array));
      call.values.buffers[name] = TensorView::contiguous(storage.back().data(), array.dtype, array.shape);
    }
    call.values.params = inputs.params;
    attention.decode(TensorView::contiguous(dq.data(), dtype, qs), kv, TensorView::contiguous(dout.data(), dtype, out_shape),
                     TensorView::contiguous(dlse.data(), DType::f32, lse_shape), nullptr, call);
    synchronize();
    check_buffer_errors();
    NpyArray host_out{dtype, out_shape, std::vector<unsigned char>(dout.bytes())};
    dout.download(host_out.data.data(), dout.bytes());
    NpyArray host_lse{DType::f32, lse_shape, std::vector<unsigned char>(dlse.bytes())};
    dlse.download(host_lse.data.data(), dlse.bytes());
    out = host_out.to_doubles();
    lse = host_lse.to_doubles();
  }
  std::filesystem::create_directories(a.out_dir);
  write_npy(a.out_dir + "/out.npy", NpyArray::from_doubles(out, DType::f32, out_shape));
  write_npy(a.out_dir + "/lse.npy", NpyArray::from_doubles(lse, DType::f32, lse_shape));
  std::printf("wrote %s/out.npy and %s/lse.npy (%s, %s, %s cache)\n", a.out_dir.c_str(), a.out_dir.c_str(),
              a.device == "cpu" ? "float64 CPU reference" : "GPU decode", std::string(dtype_name(dtype)).c_str(),
              explicit_pages || a.page_size > 0 ? ("paged, " + std::to_string(pages.page_size) + " tokens a page").c_str()
                                                : "contiguous");
  if (!a.check || a.device == "cpu") return kExitOk;
  const ReferenceForward r = reference();
  const double tol = dtype == DType::f16 ? 5e-3 : 1e-2;
  bool ok = true;
  for (auto [what, e] : {std::pair<const char*, double>{"out", relative_error(out, r.out)}, {"lse", relative_error(lse, r.lse)}}) {
    const bool pass = e < tol;
    ok &= pass;
    std::printf("%-4s relative error %.3e (tolerance %.0e) %s\n", what, e, tol, pass ? "ok" : "FAILED");
  }
  return ok ? kExitOk : kExitFailure;
}

}  // namespace flexjit::cli
