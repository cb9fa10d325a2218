// The driver loader and the device API without a GPU: the messages a user sees when there is no
// driver, the error format of failed calls, and what works without a device.
#include "jit/driver.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "support/gpu.hpp"
#include "test_util.hpp"

namespace flexjit::test {
namespace {

const char* kAdvice =
    ". flexjit can still check, emit and compile kernels without a GPU; running them needs the "
    "NVIDIA driver.";

TEST(Driver, MissingLibraryMessage) {
  try {
    jit::load_driver("libflexjit-no-such-driver.so.1");
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    EXPECT_EQ(e.code(), -1);
    EXPECT_EQ(e.kind(), "DriverError");
    EXPECT_EQ(std::string(e.what()),
              std::string("no CUDA driver found (libflexjit-no-such-driver.so.1): "
                          "libflexjit-no-such-driver.so.1: cannot open shared object file: No "
                          "such file or directory") +
                  kAdvice);
  }
}

TEST(Driver, AbsentDriverGivesTheExactError) {
  std::string why;
  if (jit::driver_available(&why)) GTEST_SKIP() << "a CUDA driver is installed here";
  const std::string expected =
      std::string("no CUDA driver found (libcuda.so.1): libcuda.so.1: cannot open shared object "
                  "file: No such file or directory") +
      kAdvice;
  EXPECT_EQ(why, expected);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same error every time
    try {
      jit::driver();
      FAIL() << "expected DriverError";
    } catch (const DriverError& e) {
      EXPECT_EQ(std::string(e.what()), expected);
      EXPECT_EQ(e.code(), -1);
    }
  }
  std::string reason;
  EXPECT_FALSE(gpu_available(&reason));
  EXPECT_EQ(reason, expected);
  EXPECT_FALSE(gpu_available());
  EXPECT_EQ(no_gpu_reason(), expected);
  EXPECT_THROW(current_device(), DriverError);
  EXPECT_THROW(DeviceBuffer::allocate(16), DriverError);
  EXPECT_THROW(jit::ensure_context(), DriverError);
  EXPECT_THROW(synchronize(), DriverError);
  EventTimer timer;
  EXPECT_THROW(timer.start(), DriverError);
}

TEST(Driver, CheckMessageFormat) {
  EXPECT_NO_THROW(jit::check(CUDA_SUCCESS, "driver().cuInit(0)", __FILE__, __LINE__));
  try {
    jit::check(CUDA_ERROR_INVALID_IMAGE, "driver().cuModuleLoadData(&module, image)",
               "/home/me/flexjit/src/jit/module.cpp", 42);
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    EXPECT_EQ(e.code(), static_cast<int>(CUDA_ERROR_INVALID_IMAGE));
    const std::string description = jit::driver_available()
                                        ? "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)"
                                        : "CUresult 200 (unknown error)";
    EXPECT_EQ(std::string(e.what()),
              "cuModuleLoadData failed: " + description + " at src/jit/module.cpp:42");
  }
  try {
    FLEXJIT_CU(CUDA_ERROR_OUT_OF_MEMORY);
    FAIL() << "expected DriverError";
  } catch (const DriverError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("CUDA_ERROR_OUT_OF_MEMORY failed: ", 0), 0u) << what;
    EXPECT_NE(what.find(" at tests/jit/driver_test.cpp:"), std::string::npos) << what;
  }
}

TEST(Driver, DeviceOrdinalFromEnvironment) {
  {
    ScopedEnv unset("FLEXJIT_DEVICE", nullptr);
    EXPECT_EQ(jit::requested_device_ordinal(), 0);
  }
  {
    ScopedEnv one("FLEXJIT_DEVICE", "1");
    EXPECT_EQ(jit::requested_device_ordinal(), 1);
  }
  for (const char* bad : {"abc", "-1", "1.5", "0x1"}) {
    ScopedEnv env("FLEXJIT_DEVICE", bad);
    try {
      jit::requested_device_ordinal();
      FAIL() << bad;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("FLEXJIT_DEVICE='") + bad +
                    "' is not a device ordinal; set it to 0 for the first GPU, 1 for the second, "
                    "...");
    }
  }
}

TEST(Device, DefaultArch) {
  auto arch = [](int major, int minor) {
    DeviceInfo d;
    d.cc_major = major;
    d.cc_minor = minor;
    return d.default_arch();
  };
  EXPECT_EQ(arch(8, 0), "sm_80");
  EXPECT_EQ(arch(8, 6), "sm_86");
  EXPECT_EQ(arch(8, 9), "sm_89");
  EXPECT_EQ(arch(9, 0), "sm_90a");
  EXPECT_EQ(arch(10, 0), "sm_100a");
  EXPECT_EQ(arch(12, 0), "sm_120a");
}

TEST(Device, WhatWorksWithoutADevice) {
  DeviceBuffer empty;
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.bytes(), 0u);
  DeviceBuffer moved = std::move(empty);
  EXPECT_EQ(moved.bytes(), 0u);
  moved = DeviceBuffer();
  EXPECT_THROW(moved.upload("x", 1), UsageError);
  char byte = 0;
  EXPECT_THROW(moved.download(&byte, 1), UsageError);

  EventTimer timer;
  try {
    (void)timer.milliseconds();
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "EventTimer::milliseconds() called before start() and stop()");
  }
  EXPECT_THROW(timer.stop(), UsageError);
  EventTimer other = std::move(timer);
}

TEST(TestSupport, RelativeError) {
  EXPECT_DOUBLE_EQ(relative_error({1, 2, 3}, {1, 2, 3}), 0.0);
  EXPECT_NEAR(relative_error({3, 0}, {0, 4}), 5.0 / 4.0, 1e-12);
  EXPECT_TRUE(std::isinf(relative_error({1, std::nan("")}, {1, 1})));
  EXPECT_TRUE(std::isinf(relative_error({1}, {1, 1})));
  EXPECT_TRUE(std::isinf(relative_error({1}, {0})));
  EXPECT_DOUBLE_EQ(relative_error({0}, {0}), 0.0);
}

}  // namespace
}  // namespace flexjit::test
