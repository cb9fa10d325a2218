"""PyTorch autograd for flexjit.attention (imported only when a torch tensor is passed)."""
import torch


class _GpuAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, call, q, k, v, *buffer_tensors):
        out, lse = call.forward(q, k, v)
        ctx.call = call
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.num_buffers = len(buffer_tensors)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, out, lse = ctx.saved_tensors
        if dout.stride(-1) != 1:
            dout = dout.contiguous()
        dq, dk, dv = ctx.call.backward(q, k, v, out, lse, dout)
        # Buffers get no gradient (learnable buffers are not supported yet).
        return (None, dq, dk, dv) + (None,) * ctx.num_buffers


def apply(call, q, k, v):
    """out, lse of a GPU call; differentiable when grad mode is on and an input requires grad."""
    tensors = [b for b in call.buffers.values() if isinstance(b, torch.Tensor)]
    if torch.is_grad_enabled() and any(x.requires_grad for x in (q, k, v)):
        out, lse = _GpuAttention.apply(call, q, k, v, *tensors)
    else:
        out, lse = call.forward(q, k, v)
    if call.buffers and call.block_mask is not None:
        out._flexjit_block_mask = call.block_mask  # a per-call mask lives as long as the output
    return out, lse


class _CpuAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, args, q, k, v):
        from . import _reference_forward
        score_mod, mask_mod, buffers, params, scale = args
        out, lse = _reference_forward(q.detach(), k.detach(), v.detach(), score_mod, mask_mod, buffers, params, scale)
        ctx.args = args
        ctx.save_for_backward(q, k, v)
        ctx.mark_non_differentiable(lse)
        return out.to(q.dtype), lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        from . import reference_backward
        q, k, v = ctx.saved_tensors
        score_mod, mask_mod, buffers, params, scale = ctx.args
        dq, dk, dv = reference_backward(q.detach(), k.detach(), v.detach(), dout.detach(), score_mod, mask_mod,
                                        buffers, params, scale)
        return None, dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


def apply_cpu(q, k, v, score_mod, mask_mod, buffers, params, scale):
    """The CPU reference on CPU tensors, differentiable through the reference backward."""
    return _CpuAttention.apply((score_mod, mask_mod, buffers, params, scale), q, k, v)
