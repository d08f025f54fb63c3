"""Tiny VibeASR-shaped model with quantization-aware training (spec sections 2-4).

Encoder (two branches, acoustic and semantic): causal ConvNeXt stages, strides
1,2,2,4,5,5,8 (3200 samples per frame), ReLU FFN, RMSNorm eps 1e-5, head conv to D,
connector FC1 -> RMSNorm(1e-5) -> FC2. When `quant` is on, every weight is int8 with one
scale per tensor (amax/127, roundf) and every activation is requantized to int8 with one
scale per tensor (127/amax) after every conv/linear/norm/residual, exactly where the
engine requantizes (spec 3.3). Per tensor means per clip: amax is taken over the valid
(unpadded) frames of each batch element separately.

Decoder: Qwen2 (RMSNorm 1e-6, NEOX RoPE, GQA, q/k/v biases, SwiGLU); with `quant` on every
projection is ternary (absmean recipe, spec 2.2.3) and its input is quantized to int8 per
row (spec 2.3). Straight-through estimators everywhere.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

STRIDES = [1, 2, 2, 4, 5, 5, 8]
RAW_K = [7, 4, 4, 8, 10, 10, 16]          # raw kernel sizes; stored padded to 8,4,4,8,16,16,16
AUX_STAGE = 5                              # trunk stage the auxiliary heads read (hop 400)
AUX_CHARS = " abcdefghijklmnopqrstuvwxyz'"
AUX_MELS = 80
FEAT_SUB = 8                               # sub-frames per feature frame for the char CTC
HOP = 3200


def pad_k(k):
    """Stored kernel width (spec 1.3): <4 -> 4, 5..7 -> 8, 9..15 -> 16, else unchanged."""
    if k < 4:
        return 4
    if 5 <= k <= 7:
        return 8
    if 9 <= k <= 15:
        return 16
    return k


def round_away(x):
    return torch.sign(x) * torch.floor(x.abs() + 0.5)


class _STE(torch.autograd.Function):
    """Forward: the quantized value exactly (x + (xq - x).detach() would add rounding
    error); backward: identity to x."""
    @staticmethod
    def forward(ctx, x, xq):
        return xq.detach().clone()

    @staticmethod
    def backward(ctx, g):
        return g, None


def ste(x, xq):
    return _STE.apply(x, xq)


class QState:
    """Shared switches: quantization on/off (float warm-up first, then QAT), and `exact`
    (eval: round ties away from zero where the engine does; training uses RNE everywhere,
    which differs only on exact .5 ties)."""
    def __init__(self):
        self.on = False
        self.exact = False
        # Decoder layers in a faster float order: one matmul for q/k/v and one for gate/up
        # (shared_input_linear), grouped-query attention without copying K/V. The same
        # values to rounding; stage G only, so that stages A-F stay bit-identical.
        self.fast = False


def fq_weight_i8(w, qs):
    if not qs.on:
        return w
    amax = w.detach().abs().max()
    # tensor/tensor true divisions (python-scalar / tensor rounds differently) so the
    # values equal the exported q * (1.0f / s) bit for bit
    one = torch.ones_like(amax)
    s = torch.full_like(amax, 127.0) / amax if amax > 0 else one
    q = round_away(w.detach() * s).clamp(-127, 127)
    return ste(w, q * (one / s))


class _FQAct(torch.autograd.Function):
    """Per-clip int8 requantization of y [B, C, T] (one scale per batch element); the
    gradient passes straight through."""
    @staticmethod
    def forward(ctx, y, away):
        g = y.abs().amax(dim=(1, 2), keepdim=True)
        inv = torch.where(g > 0, 127.0 / g, torch.zeros_like(g))
        v = (y * inv).clamp_(-127, 127)
        q = round_away(v) if away else v.round_()
        return q.div_(torch.where(inv > 0, inv, torch.ones_like(inv)))

    @staticmethod
    def backward(ctx, g):
        return g, None


def fq_act(y, qs, mode="rne"):
    """Requantize an activation; mode "away" = roundf (mul_mat_add), "rne" = norm/add."""
    if not qs.on:
        return y
    return _FQAct.apply(y, mode == "away" and qs.exact)


def quant_input(a, qs):
    """Audio [B, T] -> int8 with amax floor 1e-5 (spec 3.3 step 1)."""
    if not qs.on:
        return a
    g = a.abs().amax(dim=1, keepdim=True).clamp_min(1e-5)
    s = 127.0 / g
    q = round_away(a * s).clamp(-128, 127)
    return q / s


def rms_c(x, eps=1e-5):
    """RMSNorm over channels of [B, C, T]."""
    return x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + eps)


def conv1d(x, w, bias, stride, groups):
    """F.conv1d, except a stride-1 depthwise conv, done as K shifted multiply-adds (the same
    sums in another float order): mkldnn's depthwise backward is slow on this CPU (3x on a
    [3, 128, 967] input, forward + backward; pointwise convs stay with mkldnn, which was
    faster there than a batched matmul in this channel-first layout)."""
    oc, icg, k = w.shape
    if groups == x.shape[1] == oc and icg == 1 and stride == 1:
        t = x.shape[2] - k + 1
        y = x[:, :, 0:t] * w[None, :, 0, 0:1]
        for j in range(1, k):
            y = y + x[:, :, j:j + t] * w[None, :, 0, j:j + 1]
        return y + bias[:, None]
    return F.conv1d(x, w, bias, stride=stride, groups=groups)


class QConv(nn.Module):
    """Causal conv (left pad K - stride, no right pad) with an int8 weight [OC, IC/g, K];
    output requantized. Activations are channel-first [B, C, T] (torch conv1d/mkldnn)."""
    def __init__(self, cin, cout, k, stride=1, groups=1, relu=False):
        super().__init__()
        self.cin, self.k, self.stride, self.groups, self.relu = cin, k, stride, groups, relu
        self.weight = nn.Parameter(torch.empty(cout, cin // groups, k))
        self.bias = nn.Parameter(torch.zeros(cout))
        # Zero biases: torch's default (uniform +-1/sqrt(fan_in)) swamps a -25 dBFS waveform
        # (std ~0.056) at the stem, and the stack of linear stages passes almost no signal.
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))

    def forward(self, x, qs):
        w = fq_weight_i8(self.weight, qs)
        if self.k > self.stride:
            x = F.pad(x, (self.k - self.stride, 0))
        y = conv1d(x, w, self.bias, self.stride, self.groups)
        y = fq_act(y, qs, "away")                 # absmax taken before the ReLU (spec 2.4)
        return F.relu(y) if self.relu else y


class Block(nn.Module):
    def __init__(self, c, qs):
        super().__init__()
        self.qs = qs
        self.norm = nn.Parameter(torch.ones(c))
        self.mixer = QConv(c, c, 7, groups=c)
        # Layer scales start at 0.1: with 0.5 the low-rate stage-6 residual stream grew to
        # hundreds and its output lost its time structure (features constant over time).
        self.gamma = nn.Parameter(torch.full((c,), 0.1))
        self.ffn_norm = nn.Parameter(torch.ones(c))
        self.linear1 = QConv(c, 4 * c, 1, relu=True)
        self.linear2 = QConv(4 * c, c, 1)
        self.ffn_gamma = nn.Parameter(torch.full((c,), 0.1))

    def forward(self, x):
        qs = self.qs
        h = fq_act(rms_c(x) * self.norm[:, None], qs)
        h = self.mixer(h, qs)
        x = fq_act(h * self.gamma[:, None] + x, qs)
        h = fq_act(rms_c(x) * self.ffn_norm[:, None], qs)
        h = self.linear2(self.linear1(h, qs), qs)
        return fq_act(h * self.ffn_gamma[:, None] + x, qs)


class Trunk(nn.Module):
    """Stem + 7 stages (downsample conv, then depths[i] ConvNeXt blocks)."""
    def __init__(self, chans, depths, qs):
        super().__init__()
        self.qs = qs
        self.down = nn.ModuleList()
        self.stages = nn.ModuleList()
        cin = 1
        for i, c in enumerate(chans):
            self.down.append(QConv(cin, c, RAW_K[i], STRIDES[i]))
            self.stages.append(nn.ModuleList([Block(c, qs) for _ in range(depths[i])]))
            cin = c

    def forward(self, audio, tap=None):
        """audio [B, T] float (front-end normalized; every clip of the batch has the same
        length, the trainer pads with silence) -> ([B, C_last, floor(T/3200)], the output
        of stage `tap` or None) (the tap feeds the training-only auxiliary heads)."""
        x = quant_input(audio, self.qs)[:, None, :]
        tapped = None
        for i in range(len(STRIDES)):
            x = self.down[i](x, self.qs)
            for blk in self.stages[i]:
                x = blk(x)
            if i == tap:
                tapped = x
        return x, tapped


@torch.no_grad()
def lsuv_init(trunk, audio, stages=None):
    """Data-dependent init of the trunk's downsampling convs (all, or those of `stages`: the
    freshly initialized ones of a warm start): scale each weight so that its output has unit
    standard deviation on a real batch (the early stages have no norm to do it, and the
    waveform's level is fixed by the front end)."""
    x = audio[:, None, :]
    for i in range(len(STRIDES)):
        x = trunk.down[i](x, trunk.qs)
        if stages is None or i in stages:
            sd = max(float(x.std()), 1e-6)
            trunk.down[i].weight.div_(sd)
            trunk.down[i].bias.div_(sd)
            x = x / sd                # = the rescaled conv's output
        for blk in trunk.stages[i]:
            x = blk(x)


class Head(nn.Module):
    """Head conv to D, then connector FC1 -> RMSNorm(1e-5) -> FC2 (spec 3.3 steps 3-4)."""
    def __init__(self, cin, d, hidden, qs):
        super().__init__()
        self.qs = qs
        self.head = QConv(cin, d, 7)
        self.fc1 = QConv(d, hidden, 1)
        self.cnorm = nn.Parameter(torch.ones(hidden))
        self.fc2 = QConv(hidden, hidden, 1)

    def forward(self, x):
        qs = self.qs
        x = self.fc1(self.head(x, qs), qs)
        x = fq_act(rms_c(x) * self.cnorm[:, None], qs)
        return self.fc2(x, qs)


class Encoder(nn.Module):
    """Acoustic and semantic branches. To halve the training cost on this 2-core machine
    the two branches SHARE their trunk weights (the GGUF stores them once per branch, so
    the engine computes both, as for the published model); they differ in head width D
    and connector weights."""
    def __init__(self, chans, depths, d_ac, d_se, hidden, qs):
        super().__init__()
        self.trunk = Trunk(chans, depths, qs)
        self.acoustic = Head(chans[-1], d_ac, hidden, qs)
        self.semantic = Head(chans[-1], d_se, hidden, qs)

    def forward(self, audio, tap=None):
        """-> features [B, F, hidden]; with `tap`, also the trunk's stage `tap` output."""
        t, tapped = self.trunk(audio, tap)
        f = (self.acoustic(t) + self.semantic(t)).transpose(1, 2)
        return f if tap is None else (f, tapped)


# ----------------------------------------------------------------------------- decoder

def act_quant_row(x, qs):
    if not qs.on:
        return x
    amax = x.detach().abs().amax(dim=-1, keepdim=True).clamp_min(1e-5)
    s = 127.0 / amax
    q = torch.round(x.detach() * s).clamp(-128, 127)
    return ste(x, q / s)


def ternary(w, qs):
    if not qs.on:
        return w
    m = w.detach().abs().mean().clamp(min=1e-5)
    one = torch.ones_like(m)
    s = one / m
    # t * fl(1/s): exactly the engine's (code - 1) * scale with the stored scale
    return ste(w, torch.round(w.detach() * s).clamp(-1, 1) * (one / s))


def shared_input_linear(x, lins):
    """x through several TLinears at once (QState.fast): x's int8 rows quantized once and
    the ternary weights, each with its own scale, concatenated into one matmul; the same
    values as calling each in turn, in a float order of its own (train_decoder.py)."""
    qs = lins[0].qs
    w = torch.cat([ternary(l.weight, qs) for l in lins])
    b = None if lins[0].bias is None else torch.cat([l.bias for l in lins])
    return F.linear(act_quant_row(x, qs), w, b).split([l.weight.shape[0] for l in lins], -1)


class TLinear(nn.Module):
    def __init__(self, cin, cout, qs, bias=False):
        super().__init__()
        self.qs = qs
        self.weight = nn.Parameter(torch.randn(cout, cin) / math.sqrt(cin))
        self.bias = nn.Parameter(torch.zeros(cout)) if bias else None

    def forward(self, x):
        return F.linear(act_quant_row(x, self.qs), ternary(self.weight, self.qs), self.bias)


def rms_last(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope_neox(x, pos, theta):
    """x [B, H, S, Dh], pos [B, S]: rotate pairs (i, i + Dh/2)."""
    dh = x.shape[-1]
    half = dh // 2
    inv = theta ** (-torch.arange(0, half, dtype=torch.float32) * 2.0 / dh)
    ang = pos[:, None, :, None].float() * inv            # [B,1,S,half]
    c, s = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)


class Layer(nn.Module):
    def __init__(self, h, nh, nkv, ffn, qs):
        super().__init__()
        self.nh, self.nkv, self.dh = nh, nkv, h // nh
        self.attn_norm = nn.Parameter(torch.ones(h))
        self.q = TLinear(h, h, qs, True)
        self.k = TLinear(h, nkv * self.dh, qs, True)
        self.v = TLinear(h, nkv * self.dh, qs, True)
        self.o = TLinear(h, h, qs)
        self.ffn_norm = nn.Parameter(torch.ones(h))
        self.gate = TLinear(h, ffn, qs)
        self.up = TLinear(h, ffn, qs)
        self.down = TLinear(ffn, h, qs)

    def forward(self, x, pos, mask, theta, eps, f16_kv=False, past=None, keep=False):
        """`past`: keys and values [1, nkv, P, dh] of a prefix shared by every sequence of
        the batch, which x continues (mask [B, S, P + S]); `keep` stores this call's as
        self.kv (train_decoder.py computes the prompt's fixed head once per batch)."""
        B, S, _ = x.shape
        fast = self.q.qs.fast
        h = rms_last(x, self.attn_norm, eps)
        if fast:
            q, k, v = shared_input_linear(h, (self.q, self.k, self.v))
        else:
            q, k, v = self.q(h), self.k(h), self.v(h)
        q = q.reshape(B, S, self.nh, self.dh).transpose(1, 2)
        k = k.reshape(B, S, self.nkv, self.dh).transpose(1, 2)
        v = v.reshape(B, S, self.nkv, self.dh).transpose(1, 2)
        q, k = rope_neox(q, pos, theta), rope_neox(k, pos, theta)
        if f16_kv:                                  # the engine's F16 KV cache
            k, v = k.half().float(), v.half().float()
        if keep:
            self.kv = (k, v)
        if past is not None:
            k = torch.cat([past[0].expand(B, -1, -1, -1), k], dim=2)
            v = torch.cat([past[1].expand(B, -1, -1, -1), v], dim=2)
        rep, T = self.nh // self.nkv, k.shape[2]
        if fast:        # the rep query heads of one K/V head as one [rep * S, dh] matrix
            att = q.reshape(B, self.nkv, rep * S, self.dh) @ k.transpose(-1, -2)
            att = att.view(B, self.nh, S, T) / math.sqrt(self.dh)
        else:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            att = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
        att = att.masked_fill(~mask[:, None], float("-inf")).softmax(-1)
        self.last_att = att                         # for the training-only alignment guide
        if fast:
            a = (att.reshape(B, self.nkv, rep * S, T) @ v).view(B, self.nh, S, self.dh)
        else:
            a = att @ v
        a = a.transpose(1, 2).reshape(B, S, -1)
        x = x + self.o(a)
        h = rms_last(x, self.ffn_norm, eps)
        if fast:
            g, u = shared_input_linear(h, (self.gate, self.up))
        else:
            g, u = self.gate(h), self.up(h)
        return x + self.down(F.silu(g) * u)


class Decoder(nn.Module):
    def __init__(self, vocab, h, layers, nh, nkv, ffn, qs, theta=10000.0, eps=1e-6):
        super().__init__()
        self.theta, self.eps = theta, eps
        self.embed = nn.Embedding(vocab, h)
        nn.init.normal_(self.embed.weight, std=0.02 * math.sqrt(h) / 4)
        self.layers = nn.ModuleList([Layer(h, nh, nkv, ffn, qs) for _ in range(layers)])
        self.norm = nn.Parameter(torch.ones(h))
        self.output = nn.Linear(h, vocab, bias=False)

    def forward(self, x, pos, mask, f16_kv=False, past=None, keep=False, head=True):
        """past/keep: Layer.forward's, per layer; head=False returns the normed hidden states
        instead of the logits (to apply the head to a few positions only)."""
        for i, l in enumerate(self.layers):
            x = l(x, pos, mask, self.theta, self.eps, f16_kv, None if past is None else past[i],
                  keep)
        x = rms_last(x, self.norm, self.eps)
        return self.output(x) if head else x


class ASR(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.qs = QState()
        depths = cfg.get("depths", [1] * len(cfg["chans"]))    # older checkpoints: depth 1
        self.encoder = Encoder(cfg["chans"], depths, cfg["d_ac"], cfg["d_se"], cfg["hidden"],
                               self.qs)
        self.decoder = Decoder(cfg["vocab"], cfg["hidden"], cfg["layers"], cfg["heads"],
                               cfg["kv_heads"], cfg["ffn"], self.qs, cfg["theta"])
        # Training aids, not exported: CTC over the BPE tokens on the features (7.5 Hz), and on
        # the trunk's stage-5 output (60 Hz, one frame per 400 samples) CTC over characters
        # and a log-mel regression, dense targets that teach the waveform stages to hear long
        # before the sparse token losses do.
        self.ctc = nn.Linear(cfg["hidden"], cfg["vocab"] + 1)
        self.aux_char = nn.Linear(cfg["chans"][AUX_STAGE], len(AUX_CHARS) + 1)
        # and on the features themselves, CTC over characters with each 7.5 Hz frame read as
        # FEAT_SUB sub-frames (60 Hz): a dense target that makes the features (not only
        # stage 5) carry the characters of their 133 ms; token CTC alone plateaus there.
        self.aux_feat_char = nn.Linear(cfg["hidden"], FEAT_SUB * (len(AUX_CHARS) + 1))
        self.aux_mel = nn.Linear(cfg["chans"][AUX_STAGE], AUX_MELS)
