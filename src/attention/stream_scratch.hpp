#pragma once
// Stream-ordered scratch memory (cuMemAllocAsync / cuMemFreeAsync): allocated and freed in the
// order of the work on `stream`, so a kernel's temporary buffer costs no device synchronisation.
#include <cstddef>

#include "flexjit/device.hpp"

namespace flexjit::attention {

class StreamScratch {
 public:
  StreamScratch(size_t bytes, Stream stream);
  ~StreamScratch();  // frees on the stream: kernels already queued still see the memory
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  Stream stream_;
};

}  // namespace flexjit::attention
