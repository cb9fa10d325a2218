// `flexjit run`: attention on .npy inputs. On the GPU (default) the variant is compiled, its block
// mask built and the kernel run; `--device cpu` computes the float64 reference instead. `--check`
// compares the GPU result with the reference and prints the relative errors.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "backward_mode_option.hpp"
#include "command.hpp"
#include "codegen/kernel_spec.hpp"
#include "common/npy.hpp"
#include "flexjit/attention.hpp"
#include "flexjit/reference.hpp"
#include "mod_options.hpp"
#include "run_decode.hpp"
#include "run_buffer_grads.hpp"
#include "run_seq_lens.hpp"

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

// "--param cap=30.0", "--param window:int=64" (the spelling every command takes, mod_options.hpp);
// `run` needs the value.
std::pair<ParamDecl, double> parse_param_value(const std::string& text) {
  auto [decl, value] = parse_param(text);
  if (!value)
    throw UsageError("--param '" + text + "': run needs a value: NAME=VALUE or NAME:TYPE=VALUE, e.g. " + decl.name +
                     "=30.0");
  return {decl, *value};
}

// --scale: the text as given, so that "nan", "0" and "inf" are refused by name instead of being
// replaced with the default.
double parse_scale(const std::string& text) {
  size_t used = 0;
  double value = 0;
  bool out_of_range = false;
  try {
    value = std::stod(text, &used);
  } catch (const std::out_of_range&) {
    out_of_range = true;
  } catch (const std::exception&) {
    used = 0;
  }
  // The kernels take the scale as a 32-bit float: a value it cannot hold would reach them as an
  // infinity or 0 while the CPU reference kept the double.
  const float narrowed = static_cast<float>(value);
  if (out_of_range || (std::isfinite(value) && value != 0 && (std::isinf(narrowed) || narrowed == 0)))
    throw UsageError("--scale " + text + " is beyond the range of a 32-bit float (magnitudes about 1.4e-45 to "
                     "3.4e38); the kernels compute in float");
  if (text.empty() || used != text.size())
    throw UsageError("--scale '" + text + "' is not a number");
  if (std::isnan(value) || std::isinf(value) || value == 0)
    throw UsageError("--scale " + text +
                     ": the scale must be a finite non-zero number (negative is allowed); leave --scale out for "
                     "1/sqrt(head dim)");
  return value;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
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
    BackwardModeOption bwd_mode;
    std::string scale;
    CLI::Option* scale_option = nullptr;  // given (even as '') or not
    std::string seq_lens, k_pages, v_pages, page_table;  // decoding: see run_decode.hpp
    int page_size = 0;
    RunSeqLens lens;  // --seq-lens with --do or --q-lens: forward / backward on padded tensors
    RunBufferGrads grads;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--q", o->q, "queries .npy [B, Hq, Sq, D]")->required();
  app.add_option("--k", o->k, "keys .npy [B, Hkv, Skv, D] (required unless --k-pages)");
  app.add_option("--v", o->v, "values .npy [B, Hkv, Skv, Dv] (required unless --v-pages)");
  app.add_option("--seq-lens", o->seq_lens,
                 "int32 .npy [B], the keys of each sequence (kv_len in the mods): decode, or with --do / "
                 "--q-lens the forward and backward on padded tensors");
  o->lens.add_option(app);
  app.add_option("--page-size", o->page_size,
                 "decode: page the K/V cache into a shuffled pool of pages of N tokens (1 to the cache's S)")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--k-pages", o->k_pages, "decode: paged keys .npy [num_pages, page_size, Hkv, D]");
  app.add_option("--v-pages", o->v_pages, "decode: paged values .npy [num_pages, page_size, Hkv, Dv]");
  app.add_option("--page-table", o->page_table, "decode: int32 .npy [B, max_pages], the pool page of each logical page");
  app.add_option("--do", o->dout, "output gradient .npy [B, Hq, Sq, Dv]: also run the backward and write dq/dk/dv.npy");
  app.add_option("--score", o->variant.score, "score_mod expression (default: score)");
  app.add_option("--mask", o->variant.mask, "mask_mod expression (default: no mask)");
  app.add_option("--buffer", o->buffers, "a buffer the mods read: NAME=FILE.npy (dtype and shape from the file)");
  app.add_option("--param", o->params, "a parameter value: NAME=VALUE or NAME:int|float=VALUE");
  app.add_option("--dtype", o->variant.dtype, "compute dtype of q, k, v: bf16 or f16 (inputs are converted)")->capture_default_str();
  o->variant.add_config_flag(app, "forward block config, e.g. m128n64w4s2");
  o->scale_option = app.add_option("--scale", o->scale,
                                   "multiplies q.k before score_mod (default 1/sqrt(D); finite, non-zero, may be negative)");
  app.add_option("--out", o->out_dir, "directory for out.npy and lse.npy (float32)")->required();
  app.add_option("--device", o->device, "gpu (the kernels) or cpu (the float64 reference)")
      ->check(CLI::IsMember({"gpu", "cpu"}))->capture_default_str();
  app.add_flag("--check", o->check, "compare the GPU result with the float64 CPU reference");
  app.add_flag("--no-block-mask", o->no_block_mask, "evaluate mask_mod on every tile instead of building a block mask");
  o->bwd_mode.add_option(app);
  o->grads.add_option(app);
  return [o]() {
    if (o->bwd_mode.given() && o->dout.empty())
      throw UsageError("--bwd-mode picks the backward's mode; it needs --do (the output gradient)");
    const bool padded_lengths = !o->dout.empty() || !o->lens.q_file.empty();  // forward / backward with lengths
    if ((!o->seq_lens.empty() && !padded_lengths) || !o->k_pages.empty() || o->page_size > 0) {
      if (!o->dout.empty()) throw UsageError("--do (the backward) is not available with pages");
      if (!o->lens.q_file.empty()) throw UsageError("--q-lens is not available with pages (decoding has Sq rows per sequence)");
      if (o->no_block_mask) throw UsageError("--no-block-mask does not apply to decoding (it builds no block mask)");
      const std::optional<BlockConfig> config = o->variant.parsed_config();  // a given '' is refused
      DecodeRunArgs d{o->q, o->k, o->v, o->k_pages, o->v_pages, o->page_table, o->seq_lens, o->out_dir, o->device,
                      o->variant.score, o->variant.mask, config ? config->str() : std::string(), o->page_size,
                      o->scale_option->count() == 0 ? std::optional<double>() : parse_scale(o->scale), o->check,
                      o->variant.element_type(), {}, {}};
      for (const auto& text : o->buffers) {
        const NamedFile f = split_assignment(text, "--buffer");
        d.buffers.emplace_back(f.name, read_npy(f.path));
      }
      for (const auto& text : o->params) d.params.push_back(parse_param_value(text));
      return run_decode(d);
    }
    if (o->k.empty() || o->v.empty()) throw UsageError("--k and --v are required");
    const NpyArray q = read_npy(o->q), k = read_npy(o->k), v = read_npy(o->v);
    const auto qs = as_bhsd(q, "q"), ks = as_bhsd(k, "k"), vs = as_bhsd(v, "v");
    ReferenceShape shape{static_cast<int>(qs[0]), static_cast<int>(qs[1]), static_cast<int>(ks[1]),
                         static_cast<int>(qs[2]), static_cast<int>(ks[2]), static_cast<int>(qs[3]),
                         static_cast<int>(vs[3])};
    if (ks[0] != qs[0] || vs[0] != qs[0] || vs[1] != ks[1] || vs[2] != ks[2] || ks[3] != qs[3])
      throw ShapeError("--q/--k/--v shapes do not fit together: q " + shape_text(qs) + ", k " + shape_text(ks) +
                       ", v " + shape_text(vs) + "; expected q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv]");
    for (const auto* dims : {&qs, &ks, &vs})
      for (int64_t d : *dims)
        if (d > INT32_MAX)
          throw ShapeError("--q/--k/--v: extent " + std::to_string(d) + " is larger than the kernels take (2^31-1)");
    const DType dtype = o->variant.element_type();

    AttentionSpec spec;
    spec.score_mod = o->variant.score;
    spec.mask_mod = o->variant.mask;
    spec.dtype = dtype;
    spec.head_dim = shape.head_dim;
    spec.head_dim_v = shape.head_dim_v;
    // Checked as `emit --family fwd --config` checks it, so both give the same message.
    spec.fwd_config = o->variant.parsed_config();
    if (spec.fwd_config) {
      codegen::KernelSpec fwd;
      fwd.family = codegen::Family::fwd;
      fwd.dtype = dtype;
      fwd.head_dim = shape.head_dim;
      fwd.head_dim_v = shape.head_dim_v;
      fwd.config = *spec.fwd_config;
      fwd.validate();
    }
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
    o->lens.load(o->seq_lens, shape);
    if (o->lens.active() && !o->grads.names.empty())
      throw UsageError("--grad is not available with --seq-lens / --q-lens (learnable-buffer gradients take no "
                       "per-sequence lengths)");
    const Attention attention(spec);
    const double scale = o->scale_option->count() == 0 ? 1.0 / std::sqrt(double(shape.head_dim)) : parse_scale(o->scale);

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
        reference = o->lens.active() ? reference_forward_varlen(attention.score_mod(), attention.mask_mod(), inputs, shape,
                                                                qd, kd, vd, o->lens.q, o->lens.kv, scale)
                                     : reference_forward(attention.score_mod(), attention.mask_mod(), inputs, shape, qd,
                                                         kd, vd, scale);
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
        reference_grads = o->lens.active() ? reference_backward_varlen(attention.score_mod(), attention.mask_mod(), inputs,
                                                                       shape, qd, kd, vd, dod, o->lens.q, o->lens.kv, scale)
                                           : reference_backward(attention.score_mod(), attention.mask_mod(), inputs, shape,
                                                                qd, kd, vd, dod, scale);
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
      DeviceBuffer q_dev = upload(qd, dtype, qs), k_dev = upload(kd, dtype, ks), v_dev = upload(vd, dtype, vs);
      DeviceBuffer out_dev = DeviceBuffer::allocate(size_t(shape.batch) * shape.q_heads * shape.q_len * shape.head_dim_v * dtype_size(dtype));
      DeviceBuffer lse_dev = DeviceBuffer::allocate(size_t(shape.batch) * shape.q_heads * shape.q_len * 4);
      out_dev.fill_bytes(0xff);  // NaN: an element the kernel failed to write cannot pass --check
      lse_dev.fill_bytes(0xff);
      CallOptions call;
      call.scale = static_cast<float>(scale);
      o->bwd_mode.apply(call);
      call.values.params = param_values;
      std::vector<DeviceBuffer> buffer_storage;
      for (size_t i = 0; i < buffer_arrays.size(); ++i) {
        buffer_storage.push_back(DeviceBuffer::allocate(std::max<size_t>(buffer_arrays[i].data.size(), 16)));
        buffer_storage.back().upload(buffer_arrays[i].data.data(), buffer_arrays[i].data.size());
        call.values.buffers[buffer_names[i]] =
            TensorView::contiguous(buffer_storage.back().data(), buffer_arrays[i].dtype, buffer_arrays[i].shape);
      }
      o->lens.attach(call);
      std::optional<BlockMask> mask;
      if (!attention.mask_mod().is_always_true() && !o->no_block_mask && o->lens.active())  // each sequence's tables
        mask = attention.block_mask(shape.batch, shape.q_heads, shape.q_len, shape.kv_len, call.seq_lens, nullptr,
                                    call.values);
      else if (!attention.mask_mod().is_always_true() && !o->no_block_mask)
        mask = attention.block_mask(shape.batch, shape.q_heads, shape.q_len, shape.kv_len, nullptr, call.values);
      attention.forward(TensorView::contiguous(q_dev.data(), dtype, qs), TensorView::contiguous(k_dev.data(), dtype, ks),
                        TensorView::contiguous(v_dev.data(), dtype, vs), TensorView::contiguous(out_dev.data(), dtype, out_shape),
                        TensorView::contiguous(lse_dev.data(), DType::f32, {shape.batch, shape.q_heads, shape.q_len}),
                        mask ? &*mask : nullptr, nullptr, call);
      if (dout_array) {
        DeviceBuffer dout_dev = upload(dod, dtype, out_shape);
        DeviceBuffer dq_dev = DeviceBuffer::allocate(q_dev.bytes()), dk_dev = DeviceBuffer::allocate(k_dev.bytes()),
                     dv_dev = DeviceBuffer::allocate(v_dev.bytes());
        dq_dev.fill_bytes(0xff);
        dk_dev.fill_bytes(0xff);
        dv_dev.fill_bytes(0xff);
        o->grads.allocate(call);
        attention.backward(TensorView::contiguous(q_dev.data(), dtype, qs), TensorView::contiguous(k_dev.data(), dtype, ks),
                           TensorView::contiguous(v_dev.data(), dtype, vs), TensorView::contiguous(out_dev.data(), dtype, out_shape),
                           TensorView::contiguous(lse_dev.data(), DType::f32, {shape.batch, shape.q_heads, shape.q_len}),
                           TensorView::contiguous(dout_dev.data(), dtype, out_shape), TensorView::contiguous(dq_dev.data(), dtype, qs),
                           TensorView::contiguous(dk_dev.data(), dtype, ks), TensorView::contiguous(dv_dev.data(), dtype, vs),
                           mask ? &*mask : nullptr, nullptr, call);
        synchronize();
        auto fetch = [&](const DeviceBuffer& b, const std::vector<int64_t>& dims) {
          NpyArray a{dtype, dims, std::vector<unsigned char>(b.bytes())};
          b.download(a.data.data(), b.bytes());
          return a.to_doubles();
        };
        dq_out = fetch(dq_dev, qs);
        dk_out = fetch(dk_dev, ks);
        dv_out = fetch(dv_dev, vs);
        buffer_grads = o->grads.download();
      }
      synchronize();
      check_buffer_errors();
      NpyArray host_out{dtype, out_shape, std::vector<unsigned char>(out_dev.bytes())};
      out_dev.download(host_out.data.data(), out_dev.bytes());
      NpyArray host_lse{DType::f32, {shape.batch, shape.q_heads, shape.q_len}, std::vector<unsigned char>(lse_dev.bytes())};
      lse_dev.download(host_lse.data.data(), lse_dev.bytes());
      out = host_out.to_doubles();
      lse = host_lse.to_doubles();
      o->lens.blank_padding(out, lse, shape);
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
