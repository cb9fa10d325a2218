"""PyTorch autograd for flexjit.attention (imported only when a torch tensor is passed)."""
import torch


def _buffer_grads(names, tensors, grads):
    """The gradient of each buffer tensor passed to an autograd Function (None where not learnable),
    in the tensor's dtype."""
    return tuple(grads[n].to(t.dtype) if n in grads else None for n, t in zip(names, tensors))


class _GpuAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, call, names, q, k, v, *buffer_tensors):
        out, lse = call.forward(q, k, v)
        ctx.call = call
        ctx.names = names
        ctx.save_for_backward(q, k, v, out, lse, *buffer_tensors)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, out, lse, *buffer_tensors = ctx.saved_tensors
        if dout.stride(-1) != 1:
            dout = dout.contiguous()
        dq, dk, dv, grads = ctx.call.backward(q, k, v, out, lse, dout)
        return (None, None, dq, dk, dv) + _buffer_grads(ctx.names, buffer_tensors, grads)


def _tensor_buffers(buffers):
    names = [n for n, b in buffers.items() if isinstance(b, torch.Tensor)]
    return names, [buffers[n] for n in names]


def apply(call, q, k, v):
    """out, lse of a GPU call; differentiable when grad mode is on and an input (or a learnable
    buffer) requires grad."""
    names, tensors = _tensor_buffers(call.buffers)
    wants_grad = any(x.requires_grad for x in (q, k, v)) or any(
        t.requires_grad for n, t in zip(names, tensors) if n in call.learnable)
    if torch.is_grad_enabled() and wants_grad:
        out, lse = _GpuAttention.apply(call, names, q, k, v, *tensors)
    else:
        out, lse = call.forward(q, k, v)
    if call.block_mask is not None and (call.buffers or call.block_mask._per_call):
        out._flexjit_block_mask = call.block_mask  # a per-call mask lives as long as the output
    return out, lse


class _CpuAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, args, names, q, k, v, *buffer_tensors):
        from . import _reference_forward
        score_mod, mask_mod, buffers, params, scale, learnable, lens = args
        plain = {n: (b.detach() if isinstance(b, torch.Tensor) else b) for n, b in (buffers or {}).items()}
        out, lse = _reference_forward(q.detach(), k.detach(), v.detach(), score_mod, mask_mod, plain, params, scale,
                                      lens)
        ctx.args = (score_mod, mask_mod, plain, params, scale, learnable, lens)
        ctx.names = names
        ctx.save_for_backward(q, k, v, *buffer_tensors)
        ctx.mark_non_differentiable(lse)
        return out.to(q.dtype), lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        from . import reference_backward
        q, k, v, *buffer_tensors = ctx.saved_tensors
        score_mod, mask_mod, buffers, params, scale, learnable, lens = ctx.args
        result = reference_backward(q.detach(), k.detach(), v.detach(), dout.detach(), score_mod, mask_mod, buffers,
                                    params, scale, learnable=sorted(learnable) or None,
                                    q_lens=lens.q_lens if lens else None, kv_lens=lens.kv_lens if lens else None)
        dq, dk, dv = result[:3]
        grads = result[3] if learnable else {}
        return (None, None, dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)) + _buffer_grads(ctx.names, buffer_tensors,
                                                                                           grads)


def apply_cpu(q, k, v, score_mod, mask_mod, buffers, params, scale, learnable=(), lens=None):
    """The CPU reference on CPU tensors, differentiable through the reference backward (buffers
    named in `learnable` included; `lens`: per-sequence lengths, an _Lengths or None)."""
    names, tensors = _tensor_buffers(buffers or {})
    return _CpuAttention.apply((score_mod, mask_mod, buffers, params, scale, set(learnable), lens), names, q, k, v,
                               *tensors)
