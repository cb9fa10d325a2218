// (zzo) How fast does the tensor pipe run each wgmma shape the dK/dV kernels issue, on every SM at
// once? m64n64k16 and m64n128k16, bf16 in, f32 accumulators, with A from shared memory (SS) or
// from registers (RS), B from shared memory (K-major, 128-byte swizzle),
// issued by one or two warpgroups of a CTA (one CTA per SM). SS at N = 64 reads 4 KB of shared
// memory per 32 tensor cycles: 128 bytes a cycle, all that shared memory delivers; RS at N = 64
// reads 2 KB. Prints TF/s per mode and its share of the peak at the measured clock.
// Build: python3 gen.py && nvcc -O3 -gencode arch=compute_90a,code=sm_90a -o wgmma_rate wgmma_rate.cu
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

typedef unsigned long long u64;
typedef unsigned int u32;

__device__ __forceinline__ u64 desc_sw128(u32 addr) {
  return (u64)((addr & 0x3FFFF) >> 4) | ((u64)(16 >> 4) << 16) | ((u64)(1024 >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_ss_n64(float (&d)[32], u64 a, u64 b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(a), "l"(b));
}
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const u32 (&a)[4], u64 b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], u64 a, u64 b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "l"(a), "l"(b));
}
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const u32 (&a)[4], u64 b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}


// One warpgroup: iters groups of 4 k-steps, two accumulators taking turns (a group runs while the
// next is issued), as the kernels keep one group in flight.
template <int N, bool RS>
__device__ void run(int iters, u32 a_addr, u32 b_addr, float* sink) {
  float d0[N / 2], d1[N / 2];
  for (int i = 0; i < N / 2; ++i) d0[i] = 0.f, d1[i] = 0.f;
  u32 a[4][4];
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 4; ++j) a[k][j] = 0x3c003c00u ^ (threadIdx.x * 7 + k * 4 + j);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int it = 0; it < iters; it += 2) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (RS) {
        if constexpr (N == 64) wgmma_rs_n64(d0, a[k], desc_sw128(b_addr + 32 * k));
        else wgmma_rs_n128(d0, a[k], desc_sw128(b_addr + 32 * k));
      } else {
        if constexpr (N == 64) wgmma_ss_n64(d0, desc_sw128(a_addr + 32 * k), desc_sw128(b_addr + 32 * k));
        else wgmma_ss_n128(d0, desc_sw128(a_addr + 32 * k), desc_sw128(b_addr + 32 * k));
      }
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (RS) {
        if constexpr (N == 64) wgmma_rs_n64(d1, a[k], desc_sw128(b_addr + 32 * k));
        else wgmma_rs_n128(d1, a[k], desc_sw128(b_addr + 32 * k));
      } else {
        if constexpr (N == 64) wgmma_ss_n64(d1, desc_sw128(a_addr + 32 * k), desc_sw128(b_addr + 32 * k));
        else wgmma_ss_n128(d1, desc_sw128(a_addr + 32 * k), desc_sw128(b_addr + 32 * k));
      }
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  float s = 0.f;
  for (int i = 0; i < N / 2; ++i) s += d0[i] + d1[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// mode: N (64 or 128) x RS x warpgroups issuing (1 or 2); with 2 each takes its own B tile.
__global__ void __launch_bounds__(256, 1) rate(int n, int rs, int wgs, int iters, float* sink, long long* clocks) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const u32 base = ((u32)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
  for (int i = threadIdx.x; i < (65536 + 1024) / 4; i += blockDim.x) reinterpret_cast<u32*>(smem_raw)[i] = 0x3c003c00u;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const long long c0 = clock64();
  if (wg < wgs) {
    const u32 a_addr = base + wg * 8192;           // A: 64 x 64 bf16 per warpgroup
    const u32 b_addr = base + 16384 + wg * 16384;  // B: 128 x 64 bf16 per warpgroup
    if (n == 64 && !rs) run<64, false>(iters, a_addr, b_addr, sink);
    if (n == 64 && rs) run<64, true>(iters, a_addr, b_addr, sink);
    if (n == 128 && !rs) run<128, false>(iters, a_addr, b_addr, sink);
    if (n == 128 && rs) run<128, true>(iters, a_addr, b_addr, sink);
  }
  __syncthreads();
  if (threadIdx.x == 0) clocks[blockIdx.x] = clock64() - c0;
}

int main(int argc, char** argv) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int iters = argc > 1 ? std::atoi(argv[1]) / 2 * 2 : 4000;
  float* sink = nullptr;
  long long* clocks = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(float) * sms * 256));
  CHECK(cudaMalloc(&clocks, sizeof(long long) * sms));
  const int smem = 65536 + 1024;
  CHECK(cudaFuncSetAttribute(rate, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::printf("SMs %d, %d groups of 4 k-steps per warpgroup (best of 3)\n", sms, iters);
  std::printf("%-22s %9s %9s %12s %14s\n", "mode", "ms", "TF/s", "SM cycles", "MACs/clk/SM");
  for (int n : {64, 128})
    for (int rs : {0, 1})
      for (int wgs : {1, 2}) {
        float best = 0.f;
        long long cyc = 0;
        for (int rep = 0; rep < 4; ++rep) {
          CHECK(cudaEventRecord(e0));
          rate<<<sms, 256, smem>>>(n, rs, wgs, iters, sink, clocks);
          CHECK(cudaGetLastError());
          CHECK(cudaEventRecord(e1));
          CHECK(cudaEventSynchronize(e1));
          float t = 0.f;
          CHECK(cudaEventElapsedTime(&t, e0, e1));
          long long c = 0;
          CHECK(cudaMemcpy(&c, clocks, sizeof c, cudaMemcpyDeviceToHost));
          if (rep > 0 && (best == 0.f || t < best)) best = t, cyc = c;  // rep 0 warms up
        }
        const double macs = 64.0 * n * 16 * 4 * double(iters) * wgs;  // per SM
        std::printf("m64n%-3dk16 %s x%d wg      %9.3f %9.0f %12lld %14.0f\n", n, rs ? "RS" : "SS", wgs, best,
                    2.0 * macs * sms / best / 1e9, cyc, macs / double(cyc));
      }
  CHECK(cudaFree(sink));
  CHECK(cudaFree(clocks));
  return 0;
}
