// The JIT runtime on a real GPU: kernels compiled through the cache, loaded and launched, checked
// against host computations on fresh random data. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <regex>
#include <thread>

#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "jit/driver.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/module.hpp"
#include "support/gpu.hpp"
#include "test_util.hpp"

namespace flexjit::test {
namespace {

using jit::CompileOptions;
using jit::Dim3;

// Each test compiles into its own fresh cache directory, for the device's own arch.
struct GpuTest : ::testing::Test {
  TempDir dir;
  ScopedEnv cache_dir{"FLEXJIT_CACHE_DIR", dir.str().c_str()};
  ScopedEnv cache_on{"FLEXJIT_CACHE", nullptr};
  CompileOptions options;

  void SetUp() override {
    FLEXJIT_REQUIRE_GPU();
    options.arch = current_device().default_arch();
  }
};

std::mt19937 seeded_rng() {
  const unsigned seed = std::random_device{}();
  std::printf("random seed %u\n", seed);
  return std::mt19937(seed);
}

std::vector<float> random_floats(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST_F(GpuTest, DeviceInfo) {
  const DeviceInfo d = current_device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 8);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_memory, size_t{1} << 30);
  EXPECT_GE(d.max_smem_per_block_optin, size_t{99} * 1024);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GE(d.driver_version, 12000);
  EXPECT_EQ(d.driver_version, jit::driver().version);
  const auto& archs = jit::supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), d.default_arch()), archs.end()) << d.default_arch();
  std::printf("%s: cc %d.%d, %d SMs, %zu bytes opt-in smem, arch %s\n", d.name.c_str(), d.cc_major,
              d.cc_minor, d.sm_count, d.max_smem_per_block_optin, d.default_arch().c_str());
}

TEST_F(GpuTest, SaxpyThroughTheCacheMatchesTheHost) {
  const jit::CompiledKernel compiled = jit::get_or_compile(saxpy_source("gpu"), options);
  auto module = jit::load(compiled);
  const jit::LoadedKernel saxpy = module->kernel("saxpy");
  EXPECT_GT(saxpy.max_threads, 0);
  EXPECT_GT(saxpy.registers, 0);

  auto rng = seeded_rng();
  const int n = (1 << 20) + 123;  // a partial last block
  const std::vector<float> x = random_floats(rng, n), y = random_floats(rng, n);
  const float a = std::uniform_real_distribution<float>(0.5f, 3.0f)(rng);
  DeviceBuffer dx = DeviceBuffer::from_host(x), dy = DeviceBuffer::from_host(y);
  void* px = dx.data();
  void* py = dy.data();
  float a_arg = a;
  int n_arg = n;
  void* args[] = {&a_arg, &px, &py, &n_arg};
  const unsigned block = 256;
  saxpy.launch(Dim3{(n + block - 1) / block, 1, 1}, Dim3{block, 1, 1}, 0, nullptr, args);
  synchronize();
  const std::vector<float> out = dy.to_host<float>();
  std::vector<double> got(out.begin(), out.end()), want(n);
  for (int i = 0; i < n; ++i) want[i] = static_cast<double>(a) * x[i] + y[i];
  EXPECT_LT(relative_error(got, want), 1e-6);
}

TEST_F(GpuTest, SecondLoadIsAnInProcessHit) {
  const jit::CompiledKernel first = jit::get_or_compile(saxpy_source("in-process"), options);
  auto module = jit::load(first);
  const size_t modules = jit::loaded_module_count();
  // A disk hit yields the same key, so the same loaded module.
  const jit::CompiledKernel again = jit::get_or_compile(saxpy_source("in-process"), options);
  EXPECT_TRUE(again.from_disk_cache);
  EXPECT_EQ(jit::load(again).get(), module.get());
  EXPECT_EQ(jit::load(first).get(), module.get());
  EXPECT_EQ(jit::loaded_module_count(), modules);
  EXPECT_EQ(module->key(), first.key);
}

TEST_F(GpuTest, ConcurrentLoadsAndLaunchesFromThreads) {
  const jit::CompiledKernel compiled = jit::get_or_compile(saxpy_source("threads"), options);
  const int n = 4096;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(8);
  std::vector<const jit::LoadedModule*> modules(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto module = jit::load(compiled);
        modules[t] = module.get();
        std::vector<float> x(n, 1.0f), y(n, static_cast<float>(t));
        DeviceBuffer dx = DeviceBuffer::from_host(x), dy = DeviceBuffer::from_host(y);
        void* px = dx.data();
        void* py = dy.data();
        float a = 2.0f;
        int count = n;
        void* args[] = {&a, &px, &py, &count};
        module->kernel("saxpy").launch(Dim3{n / 128, 1, 1}, Dim3{128, 1, 1}, 0, nullptr, args);
        const auto out = dy.to_host<float>();
        for (int i = 0; i < n; ++i)
          if (out[i] != 2.0f + static_cast<float>(t)) throw std::runtime_error("wrong value");
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(errors[t], "") << t;
    EXPECT_EQ(modules[t], modules[0]);
  }
}

jit::Source reverse_source() {
  jit::Source s;
  s.name = "reverse.cu";
  // Reverses `n` floats through dynamic shared memory with one block.
  s.text = R"(
extern "C" __global__ void reverse_smem(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
)";
  s.kernel_names = {"reverse_smem"};
  return s;
}

TEST_F(GpuTest, DynamicSharedMemoryAbove48KiB) {
  const DeviceInfo device = current_device();
  auto module = jit::load(jit::get_or_compile(reverse_source(), options));
  const jit::LoadedKernel k = module->kernel("reverse_smem");
  // 100 KiB, or the most the device allows if that is less (still above 48 KiB on sm_80+).
  const size_t bytes = std::min<size_t>(100 * 1024, device.max_smem_per_block_optin) / 4 * 4;
  ASSERT_GT(bytes, 48u * 1024);
  const int n = static_cast<int>(bytes / sizeof(float));
  auto rng = seeded_rng();
  const std::vector<float> in = random_floats(rng, n);
  DeviceBuffer din = DeviceBuffer::from_host(in), dout = DeviceBuffer::allocate(bytes);
  poison_with_nan(dout, DType::f32);
  void* pin = din.data();
  void* pout = dout.data();
  int count = n;
  void* args[] = {&pin, &pout, &count};
  k.launch(Dim3{1, 1, 1}, Dim3{512, 1, 1}, bytes, nullptr, args);
  synchronize();
  const auto out = dout.to_host<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], in[n - 1 - i]) << i;

  // The full opt-in limit works too.
  k.set_max_dynamic_smem(device.max_smem_per_block_optin - k.static_smem);
}

TEST_F(GpuTest, TooMuchSharedMemoryIsAClearError) {
  const DeviceInfo device = current_device();
  auto module = jit::load(jit::get_or_compile(reverse_source(), options));
  const jit::LoadedKernel k = module->kernel("reverse_smem");
  const size_t bytes = device.max_smem_per_block_optin + 1024;
  void* null_ptr = nullptr;
  int count = 0;
  void* args[] = {&null_ptr, &null_ptr, &count};
  const std::string expected =
      "kernel 'reverse_smem' needs " + std::to_string(bytes) +
      " bytes of dynamic shared memory (+ 0 static = " + std::to_string(bytes) +
      " bytes per block), but this device allows at most " +
      std::to_string(device.max_smem_per_block_optin) +
      " bytes per block; choose a configuration with smaller tiles or fewer pipeline stages";
  try {
    k.launch(Dim3{1, 1, 1}, Dim3{128, 1, 1}, bytes, nullptr, args);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  EXPECT_THROW(k.set_max_dynamic_smem(bytes), UsageError);
}

TEST_F(GpuTest, LaunchErrorsNameTheKernelAndShape) {
  auto module = jit::load(jit::get_or_compile(saxpy_source("launch errors"), options));
  const jit::LoadedKernel k = module->kernel("saxpy");
  float a = 1;
  void* p = nullptr;
  int n = 0;
  void* args[] = {&a, &p, &p, &n};
  try {
    k.launch(Dim3{1, 1, 1}, Dim3{2048, 1, 1}, 0, nullptr, args);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernel 'saxpy' launched with a block of 2048x1x1 = 2048 threads, but it can run at "
              "most " + std::to_string(k.max_threads) + " threads per block (it uses " +
                  std::to_string(k.registers) + " registers per thread)");
  }
  // grid.y is limited to 65535: the driver rejects the launch.
  try {
    k.launch(Dim3{1, 70000, 1}, Dim3{128, 1, 1}, 0, nullptr, args);
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cuLaunchKernel(saxpy, grid 1x70000x1, block 128x1x1, 0 bytes dynamic "
                         "shared memory) failed: CUDA_ERROR_INVALID_VALUE (invalid argument) at "
                         "src/jit/module.cpp:",
                         0),
              0u)
        << what;
  }
  try {
    module->kernel("nope");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "the module of saxpy.cu has no kernel 'nope'; it has: saxpy");
  }
  synchronize();  // the context is still healthy
}

TEST_F(GpuTest, DriverErrorFormatOnAFailedCall) {
  jit::ensure_context();
  const std::string garbage(4096, '\x5a');
  CUmodule module = nullptr;
  try {
    FLEXJIT_CU(jit::driver().cuModuleLoadData(&module, garbage.data()));
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(std::regex_match(
        what, std::regex(R"(cuModuleLoadData failed: CUDA_ERROR_[A-Z_]+ \(.+\) at tests/jit/jit_gpu_test\.cpp:\d+)")))
        << what;
    EXPECT_NE(e.code(), 0);
    std::printf("%s\n", what.c_str());
  }
  // Through load(): the message also names the source and its arch.
  jit::CompiledKernel fake;
  fake.key = "garbage";
  fake.source_name = "garbage.cu";
  fake.arch = options.arch;
  fake.cubin = garbage;
  try {
    jit::load(fake);
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cuModuleLoadData failed: CUDA_ERROR_", 0), 0u) << what;
    EXPECT_NE(what.find("(loading garbage.cu, built for " + options.arch + ")"), std::string::npos)
        << what;
  }
}

TEST_F(GpuTest, CubinForAnotherArchNamesTheRightOne) {
  const DeviceInfo device = current_device();
  if (device.cc_major == 8) GTEST_SKIP() << "an sm_80 cubin may run on this device";
  CompileOptions sm80 = options;
  sm80.arch = "sm_80";
  try {
    jit::load(jit::get_or_compile(saxpy_source("wrong arch"), sm80));
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("(loading saxpy.cu, built for sm_80): device "), std::string::npos) << what;
    EXPECT_NE(what.find("; compile for " + device.default_arch()), std::string::npos) << what;
    std::printf("%s\n", what.c_str());
  }
}

TEST_F(GpuTest, BuffersAndPoison) {
  auto rng = seeded_rng();
  const std::vector<float> values = random_floats(rng, 1000);
  DeviceBuffer b = DeviceBuffer::from_host(values);
  EXPECT_EQ(b.bytes(), 4000u);
  EXPECT_EQ(b.to_host<float>(), values);
  b.fill_bytes(0xAB);
  for (uint8_t byte : b.to_host<uint8_t>()) ASSERT_EQ(byte, 0xAB);
  poison_with_nan(b, DType::f32);
  for (float v : b.to_host<float>()) ASSERT_TRUE(std::isnan(v));
  poison_with_nan(b, DType::bf16);
  for (uint16_t v : b.to_host<uint16_t>()) ASSERT_EQ(v, 0x7FC0);
  poison_with_nan(b, DType::f16);
  for (uint16_t v : b.to_host<uint16_t>()) ASSERT_EQ(v, 0x7E00);
  DeviceBuffer moved = std::move(b);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(moved.bytes(), 4000u);
  EXPECT_THROW(moved.upload(values.data(), 4001), UsageError);
  DeviceBuffer empty = DeviceBuffer::allocate(0);
  EXPECT_EQ(empty.data(), nullptr);
}

TEST_F(GpuTest, EventTimerMeasuresAKernel) {
  jit::Source s;
  s.name = "spin.cu";
  s.text = R"(
extern "C" __global__ void spin(long long cycles, int* out) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  if (threadIdx.x == 0) *out = 1;
}
)";
  s.kernel_names = {"spin"};
  auto module = jit::load(jit::get_or_compile(s, options));
  DeviceBuffer out = DeviceBuffer::allocate(4);
  void* p = out.data();
  long long cycles = 20'000'000;  // ~10 ms at 2 GHz
  void* args[] = {&cycles, &p};
  EventTimer timer;
  timer.start();
  module->kernel("spin").launch(Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, nullptr, args);
  timer.stop();
  const float ms = timer.milliseconds();
  EXPECT_GT(ms, 1.0f);
  EXPECT_LT(ms, 1000.0f);
  EXPECT_EQ(out.to_host<int>()[0], 1);
  // Reusable.
  timer.start();
  timer.stop();
  EXPECT_GE(timer.milliseconds(), 0.0f);
}

}  // namespace
}  // namespace flexjit::test
