#pragma once
// `flexjit run --grad NAME`: the gradients of learnable buffers (GPU, or the float64 reference with
// --device cpu), written as grad_<NAME>.npy beside dq/dk/dv.npy and compared under --check. Kept
// out of cmd_run.cpp, which calls these few members.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/npy.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/device.hpp"
#include "flexjit/error.hpp"
#include "flexjit/reference.hpp"
#include "mod_options.hpp"

namespace flexjit::cli {

struct RunBufferGrads {
  std::vector<std::string> names;
  std::vector<DeviceBuffer> storage;
  std::map<std::string, std::vector<int64_t>> shapes;

  void add_option(CLI::App& app) {
    app.add_option("--grad", names, "learnable buffer: with --do, also write grad_NAME.npy (d loss / d buffer)");
  }
  // Marks the buffers learnable in the spec; they need the backward.
  void mark(Declarations& declarations, bool backward) const {
    if (!names.empty() && !backward) throw UsageError("--grad needs --do (buffer gradients come from the backward)");
    mark_learnable(declarations, names);
  }
  // GPU: fp32 gradient tensors (poisoned with NaN, so an unwritten element cannot pass --check).
  void allocate(CallOptions& call) {
    for (const auto& name : names) {
      const TensorView& value = call.values.buffers.at(name);
      shapes[name] = value.shape;
      storage.push_back(DeviceBuffer::allocate(std::max<size_t>(size_t(value.numel()) * 4, 16)));
      storage.back().fill_bytes(0xff);
      call.buffer_grads[name] = TensorView::contiguous(storage.back().data(), DType::f32, value.shape);
    }
  }
  std::map<std::string, std::vector<double>> download() const {
    std::map<std::string, std::vector<double>> out;
    size_t i = 0;
    for (const auto& name : names) {
      const std::vector<int64_t>& shape = shapes.at(name);
      NpyArray a{DType::f32, shape, std::vector<unsigned char>(storage[i].bytes())};
      storage[i++].download(a.data.data(), a.data.size());
      auto values = a.to_doubles();
      size_t n = 1;
      for (int64_t e : shape) n *= size_t(e);
      values.resize(n);
      out[name] = std::move(values);
    }
    return out;
  }
  static void write(const std::string& dir, const std::map<std::string, std::vector<double>>& grads,
                    const EvalInputs& inputs) {
    for (const auto& [name, values] : grads) {
      write_npy(dir + "/grad_" + name + ".npy", NpyArray::from_doubles(values, DType::f32, inputs.buffers.at(name).shape));
      std::printf("wrote %s/grad_%s.npy\n", dir.c_str(), name.c_str());
    }
  }
};

}  // namespace flexjit::cli
