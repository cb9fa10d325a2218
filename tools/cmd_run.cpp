// `flexjit run`: attention on .npy inputs. On the GPU (default) the variant is compiled, its block
// mask built and the kernel run; `--device cpu` computes the float64 reference instead. `--check`
// compares the GPU result with the reference and prints the relative errors.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "command.hpp"
#include "common/npy.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/reference.hpp"
#include "mod_options.hpp"
#include "run_buffer_grads.hpp"

namespace flexjit::cli {
namespace {

struct NamedFile {
  std::string name, path;
};

NamedFile split_assignment(const std::string& text, const char* flag) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(std::string(flag) + " '" + text + "': expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// "--param cap=30.0", "--param window:int=64": the type is explicit after ':' or inferred from the
// literal (an integer literal is an int parameter).
std::pair<ParamDecl, double> parse_param_value(const std::string& text) {
  const NamedFile a = split_assignment(text, "--param");
  ParamDecl decl;
  std::string name = a.name;
  const auto colon = name.find(':');
  bool integer = a.path.find_first_of(".eE") == std::string::npos;
  if (colon != std::string::npos) {
    const std::string type = name.substr(colon + 1);
    name = name.substr(0, colon);
    if (type != "int" && type != "float")
      throw UsageError("--param '" + text + "': type must be int or float, got '" + type + "'");
    integer = type == "int";
  }
  decl.name = name;
  decl.type = integer ? ScalarType::integer : ScalarType::floating;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(a.path, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != a.path.size())
    throw UsageError("--param '" + text + "': '" + a.path + "' is not a number");
  return {decl, value};
}

std::vector<int64_t> as_bhsd(const NpyArray& a, const char* name) {
  if (a.shape.size() == 4) return a.shape;
  if (a.shape.size() == 3) return {1, a.shape[0], a.shape[1], a.shape[2]};
  throw UsageError(std::string("--") + name + ": expected a [B, H, S, D] (or [H, S, D]) array, got rank " +
                   std::to_string(a.shape.size()));
}

void report_error(const char* what, double error, double tolerance, bool& ok) {
  const bool pass = error < tolerance;
  ok &= pass;
  std::printf("%-4s relative error %.3e (tolerance %.0e) %s\n", what, error, tolerance, pass ? "ok" : "FAILED");
}

CommandRegistrar registrar("run", "Run attention on .npy inputs and write out.npy and lse.npy (and dq/dk/dv.npy with --do)", [](CLI::App& app) {
  struct Options {
    VariantOptions variant;
    std::string q, k, v, out_dir, dout;
    std::vector<std::string> buffers, params;
    std::string device = "gpu";
    bool check = false;
    bool no_block_mask = false;
    double scale = 0;
    RunBufferGrads grads;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--q", o->q, "queries .npy [B, Hq, Sq, D]")->required();
  app.add_option("--k", o->k, "keys .npy [B, Hkv, Skv, D]")->required();
  app.add_option("--v", o->v, "values .npy [B, Hkv, Skv, Dv]")->required();
  app.add_option("--do", o->dout, "output gradient .npy [B, Hq, Sq, Dv]: also run the backward and write dq/dk/dv.npy");
  app.add_option("--score", o->variant.score, "score_mod expression (default: score)");
  app.add_option("--mask", o->variant.mask, "mask_mod expression (default: no mask)");
  app.add_option("--buffer", o->buffers, "a buffer the mods read: NAME=FILE.npy (dtype and shape from the file)");
  app.add_option("--param", o->params, "a parameter value: NAME=VALUE or NAME:int|float=VALUE");
  app.add_option("--dtype", o->variant.dtype, "compute dtype of q, k, v: bf16 or f16 (inputs are converted)")->capture_default_str();
  app.add_option("--config", o->variant.config, "forward block config, e.g. m128n64w4s2");
  app.add_option("--scale", o->scale, "multiplies q.k before score_mod (default 1/sqrt(D))");
  app.add_option("--out", o->out_dir, "directory for out.npy and lse.npy (float32)")->required();
  app.add_option("--device", o->device, "gpu (the kernels) or cpu (the float64 reference)")
      ->check(CLI::IsMember({"gpu", "cpu"}))->capture_default_str();
  app.add_flag("--check", o->check, "compare the GPU result with the float64 CPU reference");
  app.add_flag("--no-block-mask", o->no_block_mask, "evaluate mask_mod on every tile instead of building a block mask");
  o->grads.add_option(app);
  return [o]() {
    const NpyArray q = read_npy(o->q), k = read_npy(o->k), v = read_npy(o->v);
    const auto qs = as_bhsd(q, "q"), ks = as_bhsd(k, "k"), vs = as_bhsd(v, "v");
    ReferenceShape shape{static_cast<int>(qs[0]), static_cast<int>(qs[1]), static_cast<int>(ks[1]),
                         static_cast<int>(qs[2]), static_cast<int>(ks[2]), static_cast<int>(qs[3]),
                         static_cast<int>(vs[3])};
    if (ks[0] != qs[0] || vs[0] != qs[0] || vs[1] != ks[1] || vs[2] != ks[2] || ks[3] != qs[3])
      throw ShapeError("--q/--k/--v shapes do not fit together: q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv]");
    const DType dtype = o->variant.element_type();

    AttentionSpec spec;
    spec.score_mod = o->variant.score;
    spec.mask_mod = o->variant.mask;
    spec.dtype = dtype;
    spec.head_dim = shape.head_dim;
    spec.head_dim_v = shape.head_dim_v;
    if (!o->variant.config.empty()) spec.fwd_config = BlockConfig::parse(o->variant.config);
    std::vector<NpyArray> buffer_arrays;
    std::vector<std::string> buffer_names;
    for (const auto& text : o->buffers) {
      const NamedFile f = split_assignment(text, "--buffer");
      buffer_arrays.push_back(read_npy(f.path));
      buffer_names.push_back(f.name);
      spec.declarations.buffers.push_back(BufferDecl{f.name, buffer_arrays.back().dtype, buffer_arrays.back().shape});
    }
    std::map<std::string, double> param_values;
    for (const auto& text : o->params) {
      auto [decl, value] = parse_param_value(text);
      spec.declarations.params.push_back(decl);
      param_values[decl.name] = value;
    }
    o->grads.mark(spec.declarations, !o->dout.empty());
    const Attention attention(spec);
    const double scale = o->scale > 0 ? o->scale : 1.0 / std::sqrt(double(shape.head_dim));

    // Inputs rounded to the compute dtype: the reference sees exactly what the kernel sees.
    auto rounded = [&](const NpyArray& a) {
      return NpyArray::from_doubles(a.to_doubles(), dtype, a.shape).to_doubles();
    };
    const std::vector<double> qd = rounded(q), kd = rounded(k), vd = rounded(v);
    EvalInputs inputs;
    inputs.params = param_values;
    for (size_t i = 0; i < buffer_arrays.size(); ++i)
      inputs.buffers[buffer_names[i]] = HostBufferView{buffer_arrays[i].data.data(), buffer_arrays[i].dtype, buffer_arrays[i].shape};

    std::optional<ReferenceForward> reference;
    auto get_reference = [&]() -> const ReferenceForward& {
      if (!reference)
        reference = reference_forward(attention.score_mod(), attention.mask_mod(), inputs, shape, qd, kd, vd, scale);
      return *reference;
    };
    std::optional<NpyArray> dout_array;
    std::vector<double> dod;
    if (!o->dout.empty()) {
      dout_array = read_npy(o->dout);
      if (as_bhsd(*dout_array, "do") != std::vector<int64_t>{shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v})
        throw ShapeError("--do must have the shape of the output [B, Hq, Sq, Dv]");
      dod = rounded(*dout_array);
    }
    std::optional<ReferenceBackward> reference_grads;
    auto get_reference_grads = [&]() -> const ReferenceBackward& {
      if (!reference_grads)
        reference_grads = reference_backward(attention.score_mod(), attention.mask_mod(), inputs, shape, qd, kd, vd, dod, scale);
      return *reference_grads;
    };
    std::vector<double> out, lse, dq_out, dk_out, dv_out;
    std::map<std::string, std::vector<double>> buffer_grads;
    if (o->device == "cpu") {
      out = get_reference().out;
      lse = get_reference().lse;
      if (dout_array) {
        dq_out = get_reference_grads().dq;
        dk_out = get_reference_grads().dk;
        dv_out = get_reference_grads().dv;
        buffer_grads = reference_buffer_gradients(attention.score_mod(), attention.mask_mod(), inputs, shape, qd, kd, vd, dod, scale);
      }
    } else {
      auto upload = [&](const std::vector<double>& values, DType t, const std::vector<int64_t>& dims) {
        const NpyArray a = NpyArray::from_doubles(values, t, dims);
        DeviceBuffer b = DeviceBuffer::allocate(std::max<size_t>(a.data.size(), 16));
        b.upload(a.data.data(), a.data.size());
        return b;
      };
      const std::vector<int64_t> out_shape{shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v};
      DeviceBuffer dq = upload(qd, dtype, qs), dk = upload(kd, dtype, ks), dv = upload(vd, dtype, vs);
      DeviceBuffer dout = DeviceBuffer::allocate(size_t(shape.batch) * shape.q_heads * shape.q_len * shape.head_dim_v * dtype_size(dtype));
      DeviceBuffer dlse = DeviceBuffer::allocate(size_t(shape.batch) * shape.q_heads * shape.q_len * 4);
      dout.fill_bytes(0xff);  // NaN: an element the kernel failed to write cannot pass --check
      dlse.fill_bytes(0xff);
      CallOptions call;
      call.scale = static_cast<float>(scale);
      call.values.params = param_values;
      std::vector<DeviceBuffer> buffer_storage;
      for (size_t i = 0; i < buffer_arrays.size(); ++i) {
        buffer_storage.push_back(DeviceBuffer::allocate(std::max<size_t>(buffer_arrays[i].data.size(), 16)));
        buffer_storage.back().upload(buffer_arrays[i].data.data(), buffer_arrays[i].data.size());
        call.values.buffers[buffer_names[i]] =
            TensorView::contiguous(buffer_storage.back().data(), buffer_arrays[i].dtype, buffer_arrays[i].shape);
      }
      std::optional<BlockMask> mask;
      if (!attention.mask_mod().is_always_true() && !o->no_block_mask)
        mask = attention.block_mask(shape.batch, shape.q_heads, shape.q_len, shape.kv_len, nullptr, call.values);
      attention.forward(TensorView::contiguous(dq.data(), dtype, qs), TensorView::contiguous(dk.data(), dtype, ks),
                        TensorView::contiguous(dv.data(), dtype, vs), TensorView::contiguous(dout.data(), dtype, out_shape),
                        TensorView::contiguous(dlse.data(), DType::f32, {shape.batch, shape.q_heads, shape.q_len}),
                        mask ? &*mask : nullptr, nullptr, call);
      if (dout_array) {
        DeviceBuffer d_do = upload(dod, dtype, out_shape);
        DeviceBuffer gq = DeviceBuffer::allocate(dq.bytes()), gk = DeviceBuffer::allocate(dk.bytes()),
                     gv = DeviceBuffer::allocate(dv.bytes());
        gq.fill_bytes(0xff);
        gk.fill_bytes(0xff);
        gv.fill_bytes(0xff);
        o->grads.allocate(call);
        attention.backward(TensorView::contiguous(dq.data(), dtype, qs), TensorView::contiguous(dk.data(), dtype, ks),
                           TensorView::contiguous(dv.data(), dtype, vs), TensorView::contiguous(dout.data(), dtype, out_shape),
                           TensorView::contiguous(dlse.data(), DType::f32, {shape.batch, shape.q_heads, shape.q_len}),
                           TensorView::contiguous(d_do.data(), dtype, out_shape), TensorView::contiguous(gq.data(), dtype, qs),
                           TensorView::contiguous(gk.data(), dtype, ks), TensorView::contiguous(gv.data(), dtype, vs),
                           mask ? &*mask : nullptr, nullptr, call);
        synchronize();
        auto fetch = [&](const DeviceBuffer& b, const std::vector<int64_t>& dims) {
          NpyArray a{dtype, dims, std::vector<unsigned char>(b.bytes())};
          b.download(a.data.data(), b.bytes());
          return a.to_doubles();
        };
        dq_out = fetch(gq, qs);
        dk_out = fetch(gk, ks);
        dv_out = fetch(gv, vs);
        buffer_grads = o->grads.download();
      }
      synchronize();
      check_buffer_errors();
      NpyArray host_out{dtype, out_shape, std::vector<unsigned char>(dout.bytes())};
      dout.download(host_out.data.data(), dout.bytes());
      NpyArray host_lse{DType::f32, {shape.batch, shape.q_heads, shape.q_len}, std::vector<unsigned char>(dlse.bytes())};
      dlse.download(host_lse.data.data(), dlse.bytes());
      out = host_out.to_doubles();
      lse = host_lse.to_doubles();
    }
    std::filesystem::create_directories(o->out_dir);
    write_npy(o->out_dir + "/out.npy",
              NpyArray::from_doubles(out, DType::f32, {shape.batch, shape.q_heads, shape.q_len, shape.head_dim_v}));
    write_npy(o->out_dir + "/lse.npy", NpyArray::from_doubles(lse, DType::f32, {shape.batch, shape.q_heads, shape.q_len}));
    std::printf("wrote %s/out.npy and %s/lse.npy (%s, %s)\n", o->out_dir.c_str(), o->out_dir.c_str(),
                o->device == "cpu" ? "float64 CPU reference" : "GPU", std::string(dtype_name(dtype)).c_str());
    if (dout_array) {
      write_npy(o->out_dir + "/dq.npy", NpyArray::from_doubles(dq_out, DType::f32, qs));
      write_npy(o->out_dir + "/dk.npy", NpyArray::from_doubles(dk_out, DType::f32, ks));
      write_npy(o->out_dir + "/dv.npy", NpyArray::from_doubles(dv_out, DType::f32, vs));
      std::printf("wrote %s/dq.npy, dk.npy and dv.npy\n", o->out_dir.c_str());
      RunBufferGrads::write(o->out_dir, buffer_grads, inputs);
    }
    if (!o->check) return kExitOk;
    if (o->device == "cpu") {
      std::printf("--check compares the GPU result with the reference; with --device cpu there is nothing to compare\n");
      return kExitOk;
    }
    const double tol = dtype == DType::f16 ? 5e-3 : 1e-2;
    bool ok = true;
    report_error("out", relative_error(out, get_reference().out), tol, ok);
    report_error("lse", relative_error(lse, get_reference().lse), tol, ok);
    if (dout_array) {
      report_error("dq", relative_error(dq_out, get_reference_grads().dq), tol, ok);
      report_error("dk", relative_error(dk_out, get_reference_grads().dk), tol, ok);
      report_error("dv", relative_error(dv_out, get_reference_grads().dv), tol, ok);
      if (!buffer_grads.empty()) {
        const auto ref = reference_buffer_gradients(attention.score_mod(), attention.mask_mod(), inputs, shape, qd, kd, vd, dod, scale);
        for (const auto& [name, g] : buffer_grads) report_error(("grad_" + name).c_str(), relative_error(g, ref.at(name)), tol, ok);
      }
    }
    return ok ? kExitOk : kExitFailure;
  };
});

}  // namespace
}  // namespace flexjit::cli
