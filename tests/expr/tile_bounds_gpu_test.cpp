// flexjit_mask_mod_bounds (src/expr/tile_bounds.cpp over templates/flexjit_tile_bounds.cuh) on a
// GPU. Sound: on random tiles of masks that use every rule (wrapping ints, % and / by negative
// constants, abs, min, max, clamp, where, int(bool), & | ^, exact buffer reads, reads out of
// bounds), a tile called "none kept" has no kept position and a tile called "all kept" has no
// masked one, by brute force over every position with the host interpreter (a position whose
// evaluation reads out of bounds makes any answer but "cannot tell" wrong). Tight where it must
// be: hand-counted tiles get the class written next to them.
//
// Everything up to the NVRTC compile runs without a GPU too (for sm_80 then).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "expr_test_util.hpp"
#include "mini_driver.hpp"

namespace flexjit::test {
namespace {

Declarations declarations() {
  Declarations d;
  d.buffers.push_back(BufferDecl::parse("limit:i32:4"));
  d.buffers.push_back(BufferDecl::parse("flags:u8:16"));
  d.params = {ParamDecl::parse("window:int")};
  return d;
}

const char* const kMasks[] = {
    "q_idx >= kv_idx",                                          // 0
    "q_idx + kv_len - q_len - kv_idx < window",                 // 1
    "kv_idx < limit[b] || kv_len - kv_idx <= 100",              // 2
    "flags[h] == 17 && q_idx - kv_idx >= 0",                    // 3
    "(kv_idx / 7) % 3 != 1",                                    // 4
    "kv_idx % -5 > -3 || kv_idx / -3 < -50",                    // 5
    "abs(q_idx - kv_idx) <= 33",                                // 6
    "min(q_idx, kv_idx) * 3 > max(q_idx - 100, kv_idx / 2)",    // 7
    "clamp(kv_idx - q_idx, -10, 10) == 10",                     // 8
    "where(h > 3, kv_idx < 200, kv_idx >= 500)",                // 9
    "int(q_idx > kv_idx) + int(h == 2) == 1",                   // 10
    "(q_idx & 1) == 0 && (kv_idx ^ 3) > 10 | (h | 1) == 3",     // 11
    "!(kv_idx < 100) != (q_idx < 50)",                          // 12
    "kv_idx * kv_idx < 1000000",                                // 13
    "kv_idx + 2147483000 > 0",                                  // 14
    "-kv_idx < -1000 && q_idx * 100000 > kv_idx * 100000",      // 15
    "limit[b + 10] > 0 || kv_idx < 5",                          // 16
    "(kv_idx - kv_len) % 64 > -60 && kv_idx % 128 < 100 + h",   // 17
};

struct Tile {
  int b, h_lo, h_hi, q_lo, q_hi, kv_lo, kv_hi, q_len, kv_len;
};

// Hand-counted tiles: (mask, tile, class). limit = {15000, 3, 700, 0}, flags[h] = 17 h % 256,
// window = 4096.
struct Expected {
  int mask;
  Tile tile;
  int klass;  // 0 none kept, 1 some or cannot tell, 2 all kept
};
const Expected kExpected[] = {
    {0, {0, 0, 0, 100, 100, 0, 63, 1, 200}, 2},
    {0, {0, 0, 0, 100, 100, 64, 127, 1, 200}, 1},
    {0, {0, 0, 0, 100, 100, 128, 191, 1, 200}, 0},
    {1, {0, 0, 0, 0, 0, 0, 127, 1, 32768}, 0},            // keys 28672.. are the window
    {1, {0, 0, 0, 0, 0, 28672, 28799, 1, 32768}, 2},
    {1, {0, 0, 0, 0, 0, 28600, 28727, 1, 32768}, 1},
    {1, {0, 0, 3, 0, 3, 28672, 28799, 4, 32768}, 2},      // Sq 4: query q keeps keys > 28668 + q
    {1, {0, 0, 3, 0, 3, 28668, 28795, 4, 32768}, 1},
    {2, {0, 0, 0, 0, 0, 0, 63, 1, 5000}, 2},               // limit 15000
    {2, {1, 0, 0, 0, 0, 0, 63, 1, 5000}, 1},               // limit 3
    {2, {3, 0, 0, 0, 0, 64, 127, 1, 5000}, 0},             // limit 0, far from the end
    {2, {3, 0, 0, 0, 0, 4900, 4963, 1, 5000}, 2},          // the last 100 keys
    {3, {0, 1, 1, 50, 50, 0, 50, 1, 100}, 2},              // flags[1] = 17
    {3, {0, 2, 2, 50, 50, 0, 50, 1, 100}, 0},              // flags[2] = 34
    {3, {0, 0, 1, 50, 50, 0, 50, 1, 100}, 1},              // h spans 0 (0) and 1 (17)
    {4, {0, 0, 0, 0, 0, 0, 6, 1, 100}, 2},
    {4, {0, 0, 0, 0, 0, 7, 13, 1, 100}, 0},
    {4, {0, 0, 0, 0, 0, 0, 63, 1, 100}, 1},
    {6, {0, 0, 0, 50, 50, 20, 80, 1, 100}, 2},
    {6, {0, 0, 0, 50, 50, 100, 163, 1, 200}, 0},
    {9, {0, 0, 3, 0, 0, 300, 363, 1, 1000}, 0},
    {9, {0, 4, 7, 0, 0, 0, 63, 1, 1000}, 2},
    {9, {0, 2, 5, 0, 0, 0, 63, 1, 1000}, 1},
    {14, {0, 0, 0, 0, 0, 0, 63, 1, 100}, 2},               // 2147483063 fits in int32
    {14, {0, 0, 0, 0, 0, 1000, 1063, 1, 2000}, 1},         // wraps past INT_MAX: cannot tell
    {16, {0, 0, 0, 0, 0, 100, 163, 1, 200}, 1},            // limit[10] is out of bounds
};

TEST(TileBoundsGpu, SoundOnRandomTilesAndTightOnCountedOnes) {
  const MiniDriver& cu = driver();
  const Declarations decls = declarations();
  std::vector<int32_t> limit = {15000, 3, 700, 0};
  std::vector<uint8_t> flags(16);
  for (int i = 0; i < 16; ++i) flags[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 17);
  EvalInputs inputs;
  inputs.buffers["limit"] = {limit.data(), DType::i32, {4}};
  inputs.buffers["flags"] = {flags.data(), DType::u8, {16}};
  inputs.params["window"] = 4096;

  std::vector<Expr> exprs;
  std::string program = "#include \"flexjit_expr.cuh\"\n#include \"flexjit_tile_bounds.cuh\"\n" +
                        emit_mod_args_struct(decls);
  for (size_t i = 0; i < std::size(kMasks); ++i) {
    exprs.push_back(Expr::parse(ModKind::mask, kMasks[i], decls));
    ASSERT_TRUE(exprs.back().has_tile_bounds()) << kMasks[i];
    const std::string name = "bounds" + std::to_string(i);
    program += exprs.back().emit_tile_bounds_cuda(name);
    program += "extern \"C\" __global__ void k" + std::to_string(i) +
               "(FlexjitModArgs args, const int* tiles, int n, int* out) {\n"
               "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n"
               "  const int* t = tiles + 9 * i;\n"
               "  out[i] = " + name + "(t[0], FlexjitRange{t[1], t[2]}, FlexjitRange{t[3], t[4]}, "
               "FlexjitRange{t[5], t[6]}, t[7], t[8], args);\n}\n";
  }
  std::vector<char> cubin;
  ASSERT_NO_FATAL_FAILURE(compile_for_device(program, {"flexjit_expr.cuh", "flexjit_tile_bounds.cuh"}, cubin));
  if (!cu.unavailable.empty()) GTEST_SKIP() << cu.unavailable << " (the program compiled for sm_80)";
  CUmodule module = nullptr;
  CU(cu.load(&module, cubin.data()));
  std::vector<CUdeviceptr> buffers;
  std::vector<unsigned char> args = pack_mod_args_for_test(decls, inputs, buffers);

  // Random tiles as the decode kernel forms them (a head group's range, a few query positions,
  // up to 64 keys before kv_len), a quarter of them near 2^30 where products and sums wrap.
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Tile> random_tiles;
  for (int n = 0; n < 600; ++n) {
    Tile t;
    t.b = uniform(0, 3);
    t.h_lo = uniform(0, 15);
    t.h_hi = std::min(15, t.h_lo + uniform(0, 3));
    t.q_len = uniform(1, 64);
    t.q_lo = uniform(0, t.q_len - 1);
    t.q_hi = std::min(t.q_len - 1, t.q_lo + uniform(0, 3));
    t.kv_len = n % 4 == 3 ? (1 << 30) - uniform(0, 1000) : uniform(1, 40000);
    t.kv_lo = uniform(std::max(0, t.kv_len - 3000), t.kv_len - 1);
    if (n % 2 == 0) t.kv_lo = uniform(0, t.kv_len - 1);
    t.kv_hi = std::min(t.kv_len - 1, t.kv_lo + uniform(0, 63));
    random_tiles.push_back(t);
  }

  for (size_t m = 0; m < exprs.size(); ++m) {
    std::vector<Tile> tiles = random_tiles;
    std::vector<int> want;  // -1: checked for soundness only
    want.assign(tiles.size(), -1);
    for (const Expected& e : kExpected)
      if (static_cast<size_t>(e.mask) == m) {
        tiles.push_back(e.tile);
        want.push_back(e.klass);
      }
    std::vector<int> flat;
    for (const Tile& t : tiles)
      flat.insert(flat.end(), {t.b, t.h_lo, t.h_hi, t.q_lo, t.q_hi, t.kv_lo, t.kv_hi, t.q_len, t.kv_len});
    const CUdeviceptr d_tiles = device_copy(flat.data(), flat.size() * 4);
    CUdeviceptr d_out = 0;
    CU(cu.alloc(&d_out, tiles.size() * 4));
    const std::vector<int> poison(tiles.size(), -7);
    CU(cu.upload(d_out, poison.data(), poison.size() * 4));
    CUfunction fn = nullptr;
    CU(cu.function(&fn, module, ("k" + std::to_string(m)).c_str()));
    int count = static_cast<int>(tiles.size());
    void* params[] = {args.data(), (void*)&d_tiles, &count, (void*)&d_out};
    CU(cu.launch(fn, static_cast<unsigned>((count + 127) / 128), 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
    CU(cu.synchronize());
    std::vector<int> got(tiles.size());
    CU(cu.download(got.data(), d_out, got.size() * 4));
    CU(cu.free(d_tiles));
    CU(cu.free(d_out));

    const auto evaluator = exprs[m].bind(inputs);
    int failures = 0;
    for (size_t i = 0; i < tiles.size() && failures < 5; ++i) {
      const Tile& t = tiles[i];
      bool any = false, all = true, unreadable = false;
      EvalPoint p;
      p.b = t.b, p.q_len = t.q_len, p.kv_len = t.kv_len;
      for (int h = t.h_lo; h <= t.h_hi; ++h)
        for (int q = t.q_lo; q <= t.q_hi; ++q)
          for (int k = t.kv_lo; k <= t.kv_hi; ++k) {
            p.h = h, p.q_idx = q, p.kv_idx = k;
            try {
              const bool keep = evaluator(p) != 0.0;
              any = any || keep;
              all = all && keep;
            } catch (const ExprError&) {
              unreadable = true;
            }
          }
      const std::string where = std::string(kMasks[m]) + " on b=" + std::to_string(t.b) + " h=[" +
                                std::to_string(t.h_lo) + "," + std::to_string(t.h_hi) + "] q=[" +
                                std::to_string(t.q_lo) + "," + std::to_string(t.q_hi) + "] kv=[" +
                                std::to_string(t.kv_lo) + "," + std::to_string(t.kv_hi) + "] q_len=" +
                                std::to_string(t.q_len) + " kv_len=" + std::to_string(t.kv_len) + " (seed " +
                                std::to_string(seed) + ")";
      const int c = got[i];
      bool ok = c == 0 || c == 1 || c == 2;
      if (c == 0) ok = !any && !unreadable;
      if (c == 2) ok = all && !unreadable;
      if (want[i] >= 0) ok = ok && c == want[i];
      if (!ok) {
        ++failures;
        ADD_FAILURE() << where << ": bounds say " << c << (want[i] >= 0 ? ", expected " + std::to_string(want[i]) : "")
                      << "; positions: " << (any ? "some kept" : "none kept") << ", "
                      << (all ? "all kept" : "some masked") << (unreadable ? ", some read out of bounds" : "");
      }
    }
  }
  for (CUdeviceptr b : buffers) CU(cu.free(b));
}

}  // namespace
}  // namespace flexjit::test
