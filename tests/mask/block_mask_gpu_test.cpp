// BlockMask built on the GPU by the JIT kernel: identical tables to the CPU builder, and the
// S = 16384 causal mask builds in well under a millisecond.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flexjit/block_mask.hpp"
#include "flexjit/error.hpp"
#include "support/gpu.hpp"

namespace flexjit {
namespace {

void expect_same_tables(const BlockMask& a, const BlockMask& b) {
  ASSERT_TRUE(a.shape() == b.shape());
  const BlockMaskTables& x = a.host_tables();
  const BlockMaskTables& y = b.host_tables();
  EXPECT_EQ(x.kv_num_blocks, y.kv_num_blocks);
  EXPECT_EQ(x.kv_indices, y.kv_indices);
  EXPECT_EQ(x.full_kv_num_blocks, y.full_kv_num_blocks);
  EXPECT_EQ(x.full_kv_indices, y.full_kv_indices);
  EXPECT_EQ(x.q_num_blocks, y.q_num_blocks);
  EXPECT_EQ(x.q_indices, y.q_indices);
  EXPECT_EQ(x.full_q_num_blocks, y.full_q_num_blocks);
  EXPECT_EQ(x.full_q_indices, y.full_q_indices);
}

TEST(BlockMaskGpu, MatchesTheCpuBuilder) {
  FLEXJIT_REQUIRE_GPU();
  struct Case { const char* mask; int B, H, Sq, Skv, qb, kb; };
  const Case cases[] = {
      {"q_idx >= kv_idx", 2, 4, 1000, 1000, 128, 128},
      {"q_idx >= kv_idx && q_idx - kv_idx <= 300", 1, 1, 2049, 2049, 128, 64},
      {"kv_idx <= 512 || q_idx >= kv_idx", 1, 2, 700, 1500, 64, 128},
      {"(q_idx + 3 * h + b) % 3 != 0 || kv_idx == 0", 2, 3, 300, 200, 32, 16},
  };
  for (const Case& c : cases) {
    const Expr mask = Expr::parse(ModKind::mask, c.mask);
    const BlockMask gpu = BlockMask::build_on_gpu(mask, c.B, c.H, c.Sq, c.Skv, {}, nullptr, c.qb, c.kb);
    const BlockMask cpu = BlockMask::build_on_cpu(mask, c.B, c.H, c.Sq, c.Skv, {}, c.qb, c.kb);
    SCOPED_TRACE(c.mask);
    expect_same_tables(gpu, cpu);
  }
}

TEST(BlockMaskGpu, DocumentMaskReadsItsBuffer) {
  FLEXJIT_REQUIRE_GPU();
  const int S = 3000;
  std::vector<int32_t> doc(S);
  for (int i = 0; i < S; ++i) doc[i] = (i * i) / 400000;  // documents of shrinking length
  DeviceBuffer dev = DeviceBuffer::from_host(doc);
  Declarations decls;
  decls.buffers.push_back(BufferDecl{"doc", DType::i32, {S}});
  const Expr mask = Expr::parse(ModKind::mask, "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx", decls);
  ModValues values;
  values.buffers["doc"] = TensorView::contiguous(dev.data(), DType::i32, {S});
  EvalInputs in;
  in.buffers["doc"] = HostBufferView{doc.data(), DType::i32, {S}};
  expect_same_tables(BlockMask::build_on_gpu(mask, 1, 1, S, S, values),
                     BlockMask::build_on_cpu(mask, 1, 1, S, S, in));
}

// Tables in memory the caller owns (poisoned first): the same tables as the CPU builder's, read
// after the mask's last copy is gone the storage still holds them (the mask freed nothing), and a
// mask that reads b and h (a row per sequence and head) fits the bytes gpu_storage_bytes says.
TEST(BlockMaskGpu, BuildsIntoCallerStorage) {
  FLEXJIT_REQUIRE_GPU();
  struct Case { const char* mask; int B, H, Sq, Skv, qb, kb; };
  const Case cases[] = {
      {"q_idx >= kv_idx", 2, 4, 1000, 1000, 128, 128},
      {"(q_idx + 3 * h + b) % 3 != 0 || kv_idx == 0", 2, 3, 300, 200, 32, 16},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mask);
    const Expr mask = Expr::parse(ModKind::mask, c.mask);
    const size_t bytes = BlockMask::gpu_storage_bytes(mask, c.B, c.H, c.Sq, c.Skv, false, c.qb, c.kb);
    DeviceBuffer storage = DeviceBuffer::allocate(bytes);
    storage.fill_bytes(0xA5);
    std::vector<unsigned char> first;
    {
      const BlockMask gpu = BlockMask::build_on_gpu(mask, c.B, c.H, c.Sq, c.Skv, SeqLens{}, {}, nullptr, c.qb, c.kb, "",
                                                    storage.data(), storage.bytes());
      EXPECT_EQ(gpu.device_tables().kv_num_blocks, static_cast<const int32_t*>(storage.data()));
      expect_same_tables(gpu, BlockMask::build_on_cpu(mask, c.B, c.H, c.Sq, c.Skv, {}, c.qb, c.kb));
      first = storage.to_host<unsigned char>();
    }
    EXPECT_EQ(storage.to_host<unsigned char>(), first);  // the mask is gone; its tables are not
  }
  // 32 x 32 blocks: four count tables of 32 int32 (128 -> 256 bytes), four index tables of 1024
  // (4096), 1024 classes: 1024 + 16384 + 1024 = 18432.
  const Expr causal = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  DeviceBuffer small = DeviceBuffer::allocate(256);
  try {
    BlockMask::build_on_gpu(causal, 1, 1, 4096, 4096, SeqLens{}, {}, nullptr, 128, 128, "", small.data(), 256);
    ADD_FAILURE() << "too little storage was taken";
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()), "block mask storage holds 256 bytes; these tables need 18432 "
                                     "(BlockMask::gpu_storage_bytes says how many)");
  }
}

TEST(BlockMaskGpu, LongCausalMaskBuildsInWellUnderAMillisecond) {
  FLEXJIT_REQUIRE_GPU();
  const Expr mask = Expr::parse(ModKind::mask, "q_idx >= kv_idx");
  BlockMask::build_on_gpu(mask, 1, 1, 16384, 16384);  // compile and warm up
  synchronize();
  std::vector<float> times;
  for (int i = 0; i < 20; ++i) {
    EventTimer timer;
    timer.start();
    const BlockMask bm = BlockMask::build_on_gpu(mask, 1, 1, 16384, 16384);
    timer.stop();
    times.push_back(timer.milliseconds());
  }
  std::sort(times.begin(), times.end());
  const float median = times[times.size() / 2];
  std::printf("S=16384 causal block mask: median %.3f ms over %zu builds\n", median, times.size());
  EXPECT_LT(median, 1.0f);
}

}  // namespace
}  // namespace flexjit
