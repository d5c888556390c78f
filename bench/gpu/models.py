"""The GPU benchmark suite, exported and timed in PyTorch on this GPU (bench/gpu/bench-gpu.sh on a
machine of one's own, bench/gpu/gpu-models.sh on the device machine; docs/gpu-benchmark.md).

For each workload: the model (random weights, seeded per model) exported with torch.export to
<out>/<name>/model.pt2 with static shapes, its inputs and fp32 outputs (computed on this GPU) as
raw little-endian files with a meta.json like test/fixtures', PyTorch's own fp16 output, and
PyTorch's times in each configuration:
  eagerFp32           eager, fp32 (TF32 off)
  eagerFp16           eager, fp16 (channels-last for CNNs)
  reduceOverheadFp16  torch.compile(mode="reduce-overhead"): inductor + CUDA graphs, fp16
                      (SKIP_TORCH_COMPILE=1 skips it)
  maxAutotuneFp16     torch.compile(mode="max-autotune"), fp16, only with MAX_AUTOTUNE=1 (slow:
                      minutes of autotuning per model; MAX_AUTOTUNE_S is the budget it is held to)
Each configuration gets three figures after TORCH_WARM (10) warm-up calls, over TORCH_REPS (50)
calls: latencyMs, the median wall time of one call followed by a synchronize; throughputMs, the
wall time of TORCH_REPS calls back to back and one synchronize, per call; eventMs, the median
CUDA-event time of one call (what eagerFp32Ms, eagerFp16Ms and inductorGraphsFp16Ms always were).
Prints one JSON line per workload; writes <out>/torch.json after each one.

usage: python3 models.py OUT [--group N] [name ...]     (GROUP=N in the environment works too)
       python3 models.py --list                          (the suite's names, by group)
Names given on the command line win over a group; with neither, the whole suite runs.
"""
import argparse
import gc
import json
import math
import os
import sys
import time
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = "cuda"
SEED = 0
WARM = int(os.environ.get("TORCH_WARM") or 10)
REPS = int(os.environ.get("TORCH_REPS") or 50)
MAX_AUTOTUNE_S = float(os.environ.get("MAX_AUTOTUNE_S") or 300)
# cuDNN's algorithm search for PyTorch's convolutions: off by default, as in the earlier results.
torch.backends.cudnn.benchmark = bool(os.environ.get("TORCH_CUDNN_BENCHMARK"))


# ---- Llama-style blocks (written out here: no checkpoint config needed) ----


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, freqs_cis):
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = torch.view_as_real(xc * freqs_cis.view(1, xc.shape[1], 1, xc.shape[-1])).flatten(3)
    return out.type_as(x)


class Block(nn.Module):
    def __init__(self, d, heads, kv_heads, hidden):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, d // heads
        self.wq = nn.Linear(d, heads * self.hd, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.wo = nn.Linear(heads * self.hd, d, bias=False)
        self.w1 = nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)
        self.w3 = nn.Linear(d, hidden, bias=False)
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)

    def forward(self, x, freqs_cis):
        b, s, _ = x.shape
        h = self.n1(x)
        q = rope(self.wq(h).view(b, s, self.h, self.hd), freqs_cis)
        k = rope(self.wk(h).view(b, s, self.kv, self.hd), freqs_cis)
        v = self.wv(h).view(b, s, self.kv, self.hd)
        rep = self.h // self.kv
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, -1))
        h = self.n2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Llama(nn.Module):
    """Llama-style blocks: RMSNorm, GQA attention with complex RoPE, SwiGLU."""

    def __init__(self, d=2048, layers=4, heads=16, kv_heads=4, hidden=5632):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d, heads, kv_heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(d)

    def forward(self, x, freqs_cis):
        for blk in self.blocks:
            x = blk(x, freqs_cis)
        return self.norm(x)


def freqs(seq, head_dim):
    f = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    return torch.polar(torch.ones(seq, head_dim // 2), torch.outer(torch.arange(seq).float(), f))


# ---- torchvision ----


def torchvision_model(name):
    """A torchvision model by its builder's name, random weights (weights=None: nothing is downloaded)."""

    def make():
        import torchvision

        return getattr(torchvision.models, name)(weights=None)

    return make


def resnet50():
    import torchvision

    return torchvision.models.resnet50()


class RetinaNetRaw(nn.Module):
    """RetinaNet (ResNet-50 + FPN): backbone and head, no anchors, no box decoding, no NMS. The head's
    class logits (b, anchors, 91) and box regressions (b, anchors, 4) concatenated on the last dim."""

    def __init__(self):
        super().__init__()
        import torchvision

        m = torchvision.models.detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None)
        self.backbone, self.head = m.backbone, m.head

    def forward(self, images):
        features = list(self.backbone(images).values())
        out = self.head(features)
        return torch.cat([out["cls_logits"], out["bbox_regression"]], dim=-1)


# ---- transformers (models built from configs: random weights, nothing downloaded) ----


def hf(model_cls, config_cls, model_kwargs=None, **config_kwargs):
    """`model_cls(config_cls(**config_kwargs))` with SDPA attention where the model supports it, else its
    eager attention (a model without SDPA support refuses the setting when it is built). Returns the
    model and the attention implementation it got."""
    try:
        return model_cls(config_cls(attn_implementation="sdpa", **config_kwargs), **(model_kwargs or {})), "sdpa"
    except Exception:  # noqa: BLE001 - anything else fails again below, and that error is the one reported
        return model_cls(config_cls(attn_implementation="eager", **config_kwargs), **(model_kwargs or {})), "eager"


class LastHidden(nn.Module):
    """A transformers model's last_hidden_state, called with one tensor as `arg`=..."""

    def __init__(self, model, attn, arg, **call_kwargs):
        super().__init__()
        self.m, self.attn, self.arg, self.call_kwargs = model, attn, arg, call_kwargs

    def forward(self, x):
        return self.m(**{self.arg: x}, **self.call_kwargs).last_hidden_state


class BertLast(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel

        self.m, self.attn = hf(BertModel, BertConfig)

    def forward(self, ids):
        return self.m(input_ids=ids).last_hidden_state


def gpt2():
    """GPT-2 small (GPT2Config's defaults: 12 layers, d 768, 12 heads), prefill: the last hidden states."""
    from transformers import GPT2Config, GPT2Model

    m, attn = hf(GPT2Model, GPT2Config, use_cache=False)
    return LastHidden(m, attn, "input_ids", use_cache=False)


def t5_encoder():
    """T5-base's encoder: 12 layers, d 768, 12 heads of 64, feed-forward 3072 (ReLU), vocabulary 32128."""
    from transformers import T5Config, T5EncoderModel

    m, attn = hf(T5EncoderModel, T5Config, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12, vocab_size=32128, feed_forward_proj="relu", use_cache=False)
    return LastHidden(m, attn, "input_ids")


def whisper_encoder():
    """Whisper-base's encoder: 80 mel bins x 3000 frames in, 6 layers, d 512, 8 heads, feed-forward 2048."""
    from transformers import WhisperConfig

    sizes = dict(d_model=512, encoder_layers=6, encoder_attention_heads=8, encoder_ffn_dim=2048, decoder_layers=6, decoder_attention_heads=8, decoder_ffn_dim=2048, num_mel_bins=80, max_source_positions=1500)
    try:
        from transformers.models.whisper.modeling_whisper import WhisperEncoder

        m, attn = hf(WhisperEncoder, WhisperConfig, **sizes)
    except ImportError:  # the encoder class elsewhere: the whole model's encoder
        from transformers import WhisperModel

        m, attn = hf(WhisperModel, WhisperConfig, **sizes)
        m = m.get_encoder()
    return LastHidden(m, attn, "input_features")


def clip_vision():
    """CLIP ViT-B/32's image tower (CLIPVisionConfig's defaults: 224 px, patch 32, 12 layers, d 768)."""
    from transformers import CLIPVisionConfig, CLIPVisionModel

    m, attn = hf(CLIPVisionModel, CLIPVisionConfig)
    return LastHidden(m, attn, "pixel_values")


def deit_small():
    """DeiT-small: 224 px, patch 16, 12 layers, d 384, 6 heads, MLP 1536 (no pooler)."""
    from transformers import DeiTConfig, DeiTModel

    sizes = dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536, image_size=224, patch_size=16)
    try:
        m, attn = hf(DeiTModel, DeiTConfig, model_kwargs={"add_pooling_layer": False}, **sizes)
    except TypeError:  # a DeiTModel without that argument: the pooler's output is simply not used
        m, attn = hf(DeiTModel, DeiTConfig, **sizes)
    return LastHidden(m, attn, "pixel_values")


class DetrBoxes(nn.Module):
    """DETR with a ResNet-50 backbone (transformers' own ResNet, not timm; ResNetConfig's defaults are
    ResNet-50's sizes), 100 queries: class logits (b, 100, 92) and boxes (b, 100, 4) concatenated on the
    last dim, no postprocessing. The pixel mask is the model's default (all ones)."""

    def __init__(self):
        super().__init__()
        from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig

        # COCO's 91 labels (+1 "no object"), as detr-resnet-50 has them (a bare config has 2).
        backbone = ResNetConfig(out_features=["stage4"])
        self.m, self.attn = hf(DetrForObjectDetection, DetrConfig, num_labels=91, use_timm_backbone=False, use_pretrained_backbone=False, backbone=None, backbone_config=backbone)

    def forward(self, pixel_values):
        out = self.m(pixel_values=pixel_values)
        return torch.cat([out.logits, out.pred_boxes], dim=-1)


# ---- the suite ----

Workload = namedtuple("Workload", "make inputs cnn fallback", defaults=(None,))


def images(b, size=224):
    return lambda: [torch.randn(b, 3, size, size)]


def tokens(b, s, vocab):
    return lambda: [torch.randint(0, vocab, (b, s))]


WORKLOADS = {
    # The first four are the workloads of earlier results: same models, inputs and seeds.
    "resnet50_b32": Workload(resnet50, images(32), True),
    "resnet50_b1": Workload(resnet50, images(1), True),
    "llama4_d2048_s512": Workload(Llama, lambda: [torch.randn(1, 512, 2048) * 0.5, freqs(512, 128)], False),
    "bert_base_b8_s128": Workload(BertLast, tokens(8, 128, 30522), False),
    "mobilenet_v3_large_b32": Workload(torchvision_model("mobilenet_v3_large"), images(32), True),
    "efficientnet_b0_b32": Workload(torchvision_model("efficientnet_b0"), images(32), True),
    "efficientnet_v2_s_b16": Workload(torchvision_model("efficientnet_v2_s"), images(16), True),
    "regnet_y_1_6gf_b32": Workload(torchvision_model("regnet_y_1_6gf"), images(32), True),
    "convnext_tiny_b16": Workload(torchvision_model("convnext_tiny"), images(16), True),
    "convnext_small_b16": Workload(torchvision_model("convnext_small"), images(16), True),
    "densenet121_b16": Workload(torchvision_model("densenet121"), images(16), True),
    "vit_b_16_b8": Workload(torchvision_model("vit_b_16"), images(8), False),
    "vit_b_32_b16": Workload(torchvision_model("vit_b_32"), images(16), False),
    "deit_small_b16": Workload(deit_small, images(16), False),
    "swin_t_b8": Workload(torchvision_model("swin_t"), images(8), False),
    "swin_v2_t_b8": Workload(torchvision_model("swin_v2_t"), images(8, 256), False),  # its own resolution: 256 = 8 windows of 8 at stride 4
    "maxvit_t_b8": Workload(torchvision_model("maxvit_t"), images(8), True),
    "detr_resnet50_b2": Workload(DetrBoxes, images(2, 800), True, fallback="retinanet_resnet50_fpn_b2"),
    "retinanet_resnet50_fpn_b2": Workload(RetinaNetRaw, images(2, 640), True),
    "gpt2_b4_s256": Workload(gpt2, tokens(4, 256, 50257), False),
    "t5_encoder_b8_s128": Workload(t5_encoder, tokens(8, 128, 32128), False),
    "whisper_base_encoder_b4": Workload(whisper_encoder, lambda: [torch.randn(4, 80, 3000)], False),
    "clip_vit_b32_b16": Workload(clip_vision, images(16), False),
}

# The suite in three groups of similar PyTorch time (torch.compile dominates it), each with CNNs and
# transformers, so that a group fits one device-machine command (GROUP=N, --group N).
# retinanet_resnet50_fpn_b2 is in no group: it runs in DETR's place when DETR fails.
SUITE_GROUPS = [
    ["resnet50_b32", "resnet50_b1", "efficientnet_v2_s_b16", "vit_b_16_b8", "swin_t_b8", "clip_vit_b32_b16", "bert_base_b8_s128", "llama4_d2048_s512"],
    ["mobilenet_v3_large_b32", "regnet_y_1_6gf_b32", "convnext_tiny_b16", "convnext_small_b16", "densenet121_b16", "deit_small_b16", "swin_v2_t_b8", "gpt2_b4_s256"],
    ["efficientnet_b0_b32", "maxvit_t_b8", "vit_b_32_b16", "detr_resnet50_b2", "t5_encoder_b8_s128", "whisper_base_encoder_b4"],
]
SUITE = [n for g in SUITE_GROUPS for n in g]


def realistic(model):
    """Random weights that behave like trained ones where an initializer would make a layer vanish:
    - BatchNorm statistics (any module with running_mean/running_var: BatchNorm1d/2d, frozen BatchNorm)
      as if calibrated: var uniform(0.5, 1.5), mean uniform(-0.1, 0.1), so activations stay O(1) in fp16
      instead of passing through an identity that a trained model never has;
    - a Linear or convolution whose weight is all zeros (torchvision ViT's classifier head) gets
      normal(0, 0.02) weights: otherwise the output is all zeros and no error can be measured;
    - ConvNeXt's layer scales (1e-6 at init, which makes every block an identity) uniform(0.1, 1)."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(getattr(mod, "running_var", None), torch.Tensor) and isinstance(getattr(mod, "running_mean", None), torch.Tensor):
                mod.running_var.uniform_(0.5, 1.5)
                mod.running_mean.uniform_(-0.1, 0.1)
            if isinstance(mod, (nn.Linear, nn.Conv1d, nn.Conv2d)) and mod.weight.numel() > 0 and not mod.weight.any():
                mod.weight.normal_(0, 0.02)
        for name, p in model.named_parameters():
            if name.endswith("layer_scale") and p.abs().max() < 1e-4:
                p.uniform_(0.1, 1.0)
    return model


def library_versions():
    """torchvision's and transformers' versions, where they are installed."""
    found = {}
    for name in ("torchvision", "transformers"):
        try:
            found[name] = __import__(name).__version__
        except Exception:  # noqa: BLE001 - a missing library fails only the workloads that need it
            found[name] = None
    return found


LIBRARIES = {}

# ---- timing ----


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def timed(fn, warm=WARM, reps=REPS):
    """{latencyMs, throughputMs, eventMs} of fn (see the module's docstring)."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    events = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        events.append(a.elapsed_time(b))
    latency = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        latency.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    throughput = (time.perf_counter() - t0) * 1e3 / reps
    return {"latencyMs": median(latency), "throughputMs": throughput, "eventMs": median(events)}


def kernel_profile(fn, calls=5, top=30):
    """The device kernels of `calls` calls of fn (torch.profiler, CUDA activity: kernels inside CUDA graphs
    are traced too), by name: the TOP largest by device time, in ms per call, with launches per call.
    TORCH_PROFILE=1 turns it on; what a per-layer comparison with tensorrt-node's profile reads."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "device_time_total", None)
        if us is None:
            us = getattr(e, "cuda_time_total", 0)
        if us > 0:
            rows.append({"kernel": e.key[:160], "ms": round(us / calls / 1e3, 4), "count": e.count / calls})
    rows.sort(key=lambda r: -r["ms"])
    return {"totalMs": round(sum(r["ms"] for r in rows), 4), "top": rows[:top]}


def compiled_times(module, inputs, mode):
    """torch.compile(module, mode=mode): compile seconds (the first three calls: compilation, then the
    CUDA-graph warm-up and recording, synchronized), then its times. A CUDA-graph replay overwrites the
    previous call's outputs; the timing loops drop them at once."""
    torch._dynamo.reset()
    t0 = time.time()
    compiled = torch.compile(module, mode=mode)
    for _ in range(3):
        compiled(*inputs)
    torch.cuda.synchronize()
    compile_s = round(time.time() - t0, 1)
    times = timed(lambda: compiled(*inputs))
    times["compileS"] = compile_s
    if os.environ.get("TORCH_PROFILE"):
        times["kernels"] = kernel_profile(lambda: compiled(*inputs))
    del compiled
    torch._dynamo.reset()
    return times


# ---- export and run ----


def save_tensor(t, path):
    t = t.detach().cpu().contiguous()
    if t.is_complex():
        t = torch.view_as_real(t).contiguous()
    t.numpy().tofile(path)


DTYPES = {torch.float32: "float32", torch.int64: "int64", torch.complex64: "complex64"}


def finite(x):
    """x, or None for inf and NaN (which JSON cannot hold): an fp16 overflow shows as fp16Finite false."""
    return x if math.isfinite(x) else None


def short(e):
    return f"{type(e).__name__}: {e}"[:500]


def run(name, out, extra=None):
    w = WORKLOADS[name]
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    # Seeded per model, so that each model's weights and inputs are the same whatever runs before it.
    torch.manual_seed(SEED)
    model = realistic(w.make()).eval()
    inputs = w.inputs()
    result = {
        "name": name,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "seed": SEED,
        "cnn": w.cnn,
        "params": sum(p.numel() for p in model.parameters()),
        "inputs": [{"shape": list(x.shape), "dtype": DTYPES.get(x.dtype, str(x.dtype))} for x in inputs],
        "libraries": LIBRARIES,
        "cudnnBenchmark": torch.backends.cudnn.benchmark,
        **(extra or {}),
    }
    if getattr(model, "attn", None):
        result["attention"] = model.attn
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, tuple(inputs))
    torch.export.save(ep, os.path.join(d, "model.pt2"))
    del ep
    result["exportS"] = round(time.time() - t0, 1)
    gm = model.to(DEV)
    gin = [x.to(DEV) for x in inputs]
    times = {}
    result["times"] = times
    with torch.no_grad():
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        ref = gm(*gin)
        meta = {"name": name, "inputs": [], "outputs": []}
        for i, x in enumerate(inputs):
            save_tensor(x, os.path.join(d, f"input{i}.bin"))
            meta["inputs"].append({"file": f"input{i}.bin", "dtype": DTYPES[x.dtype], "shape": list(x.shape)})
        save_tensor(ref, os.path.join(d, "output0.bin"))
        meta["outputs"].append({"file": "output0.bin", "dtype": DTYPES[ref.dtype], "shape": list(ref.shape)})
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        times["eagerFp32"] = timed(lambda: gm(*gin))
        result["eagerFp32Ms"] = times["eagerFp32"]["eventMs"]

        # fp16: the model converted in place; complex inputs (RoPE tables) stay complex64, as in Llama's own code.
        gh = gm.half()
        half = [x.half() if x.is_floating_point() else x for x in gin]
        out16 = None
        if w.cnn:
            # Channels-last is PyTorch's fast layout for fp16 convolutions; a model that cannot take it
            # (a view over a permuted tensor, say) runs contiguous, and says so.
            try:
                gh = gh.to(memory_format=torch.channels_last)
                cl = [x.to(memory_format=torch.channels_last) if x.dim() == 4 else x for x in half]
                out16 = gh(*cl).float()
                half = cl
                result["channelsLast"] = True
            except Exception as e:  # noqa: BLE001
                result["channelsLast"] = False
                result["channelsLastError"] = short(e)
                gh = gh.to(memory_format=torch.contiguous_format)
        if out16 is None:
            out16 = gh(*half).float()
        # PyTorch's own fp16 output: what a reduced-precision engine is compared with (models.bench.js
        # PRECISION=fp16), and PyTorch's fp16 error against its fp32 run (max |fp16 - fp32| / max |fp32|).
        save_tensor(out16, os.path.join(d, "output0_fp16.bin"))
        meta["outputs_fp16"] = [{"file": "output0_fp16.bin", "dtype": "float32", "shape": list(out16.shape)}]
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        ref_max = ref.abs().max().item()
        result["outputMaxAbs"] = finite(ref_max)
        result["torchFp16Error"] = finite((out16 - ref).abs().max().item() / max(ref_max, 1e-30))
        result["fp16Finite"] = bool(torch.isfinite(out16).all().item())
        del ref, out16
        times["eagerFp16"] = timed(lambda: gh(*half))
        result["eagerFp16Ms"] = times["eagerFp16"]["eventMs"]

        # A configuration that fails is recorded as such; the others still count.
        if not os.environ.get("SKIP_TORCH_COMPILE"):
            try:
                times["reduceOverheadFp16"] = compiled_times(gh, half, "reduce-overhead")
                result["inductorGraphsFp16Ms"] = times["reduceOverheadFp16"]["eventMs"]
                result["inductorCompileS"] = times["reduceOverheadFp16"]["compileS"]
            except Exception as e:  # noqa: BLE001
                times["reduceOverheadFp16"] = {"error": short(e)}
                torch._dynamo.reset()
        if os.environ.get("MAX_AUTOTUNE"):
            # A compile cannot be interrupted safely: it runs to the end, and one over the budget is marked.
            try:
                t = compiled_times(gh, half, "max-autotune")
                t["budgetS"] = MAX_AUTOTUNE_S
                t["overBudget"] = t["compileS"] > MAX_AUTOTUNE_S
                times["maxAutotuneFp16"] = t
            except Exception as e:  # noqa: BLE001
                times["maxAutotuneFp16"] = {"error": short(e)}
                torch._dynamo.reset()

    # best: the fastest fp16 configuration by each figure (eventMs for `best`, as it always was).
    fp16 = {k: v for k, v in times.items() if k != "eagerFp32" and "error" not in v}
    for key, figure in (("best", "eventMs"), ("bestLatencyMs", "latencyMs"), ("bestThroughputMs", "throughputMs")):
        config = min(fp16, key=lambda k: fp16[k][figure])
        result[key] = fp16[config][figure]
        if key != "best":
            result[key.replace("Ms", "Config")] = config
    print(json.dumps(result), flush=True)
    return result


def free():
    """Between models: compiled code, CUDA-graph pools and cached blocks given back."""
    torch._dynamo.reset()
    try:
        from torch._inductor.cudagraph_trees import reset_cudagraph_trees

        reset_cudagraph_trees()
    except Exception:  # noqa: BLE001 - dynamo's reset frees them too where this is absent
        pass
    gc.collect()
    torch.cuda.empty_cache()


def names_of(args):
    if args.names:
        return args.names
    if args.group:
        if not 1 <= args.group <= len(SUITE_GROUPS):
            sys.exit(f"models.py: group must be 1 to {len(SUITE_GROUPS)}, got {args.group}")
        return SUITE_GROUPS[args.group - 1]
    return SUITE


def main():
    p = argparse.ArgumentParser(description="Export the GPU benchmark suite and time it in PyTorch.")
    p.add_argument("out", nargs="?", help="folder for the exports and torch.json")
    p.add_argument("names", nargs="*", help="workloads to run (default: the group, else the whole suite)")
    p.add_argument("--group", type=int, default=int(os.environ.get("GROUP") or 0), help=f"run group N of the suite (1 to {len(SUITE_GROUPS)}; or GROUP=N)")
    p.add_argument("--list", action="store_true", help="print the suite's workloads by group and exit")
    args = p.parse_args()
    if args.list:
        for i, g in enumerate(SUITE_GROUPS, 1):
            print(f"group {i}: {' '.join(g)}")
        print("fallbacks: " + " ".join(f"{w.fallback} (for {n})" for n, w in WORKLOADS.items() if w.fallback))
        return
    if not args.out:
        p.error("the output folder is required")
    names = names_of(args)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        sys.exit(f"models.py: unknown workload(s) {' '.join(unknown)}; known: {' '.join(WORKLOADS)}")
    if not torch.cuda.is_available():
        sys.exit("models.py: PyTorch sees no CUDA device")
    os.makedirs(args.out, exist_ok=True)
    LIBRARIES.update(library_versions())
    results = []

    def attempt(n, **extra):
        # The entry is made outside the except clause, so that the failed run's frames (and the GPU
        # memory their locals hold) are released before free().
        entry = None
        try:
            entry = run(n, args.out, extra)
        except Exception as e:  # one workload failing must not hide the others
            entry = {"name": n, **extra, "error": short(e)}
            print(json.dumps(entry), flush=True)
        results.append(entry)
        free()
        with open(os.path.join(args.out, "torch.json"), "w") as f:
            json.dump(results, f, indent=1)
        return "error" not in entry

    for n in names:
        fallback = WORKLOADS[n].fallback
        if not attempt(n) and fallback and fallback not in names:
            attempt(fallback, fallbackFor=n)


if __name__ == "__main__":
    main()
