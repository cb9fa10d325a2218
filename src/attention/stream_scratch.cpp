#include "attention/stream_scratch.hpp"

#include <algorithm>

#include "jit/driver.hpp"

namespace flexjit::attention {

StreamScratch::StreamScratch(size_t bytes, Stream stream) : stream_(stream) {
  jit::ensure_context();
  CUdeviceptr ptr = 0;
  FLEXJIT_CU(jit::driver().cuMemAllocAsync(&ptr, std::max<size_t>(bytes, 16), stream));
  data_ = reinterpret_cast<void*>(ptr);
}

StreamScratch::~StreamScratch() {
  if (data_ != nullptr)
    jit::driver().cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(data_), stream_);  // errors at teardown are moot
}

}  // namespace flexjit::attention
