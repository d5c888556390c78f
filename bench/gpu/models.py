"""The GPU benchmark workloads (ResNet-50 at batch 32 and 1, a Llama-style decoder, BERT-base),
exported and timed in PyTorch on this GPU (bench/gpu/gpu-models.sh).

For each workload: the model (random weights, seeded) exported with torch.export to
<out>/<name>/model.pt2 with static shapes, its inputs and fp32 outputs (computed on this GPU)
as raw little-endian files with a meta.json like test/fixtures', and PyTorch's own times:
eager fp32, eager fp16 (channels-last for CNNs), and torch.compile(mode="reduce-overhead")
(inductor + CUDA graphs) fp16 — the strongest configuration. CUDA-event timing, median of
100 runs after 20 warm-up runs. Prints one JSON line per workload; writes <out>/torch.json.
usage: python3 models.py OUT [name ...]
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
DEV = "cuda"


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


def resnet50():
    import torchvision

    m = torchvision.models.resnet50()
    for mod in m.modules():  # calibrated-looking BatchNorm: outputs O(1), not vanishing
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_var.uniform_(0.5, 1.5)
            mod.running_mean.uniform_(-0.1, 0.1)
    return m


class BertLast(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel

        self.m = BertModel(BertConfig(attn_implementation="sdpa"))

    def forward(self, ids):
        return self.m(input_ids=ids).last_hidden_state


WORKLOADS = {
    "resnet50_b32": (resnet50, lambda: [torch.randn(32, 3, 224, 224)], True),
    "resnet50_b1": (resnet50, lambda: [torch.randn(1, 3, 224, 224)], True),
    "llama4_d2048_s512": (Llama, lambda: [torch.randn(1, 512, 2048) * 0.5, freqs(512, 128)], False),
    "bert_base_b8_s128": (BertLast, lambda: [torch.randint(0, 30522, (8, 128))], False),
}


def cuda_ms(fn, warm=20, reps=100):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def save_tensor(t, path):
    t = t.detach().cpu().contiguous()
    if t.is_complex():
        t = torch.view_as_real(t).contiguous()
    t.numpy().tofile(path)


DTYPES = {torch.float32: "float32", torch.int64: "int64", torch.complex64: "complex64"}


def run(name, out):
    make, inputs_of, cnn = WORKLOADS[name]
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    model = make().eval()
    inputs = inputs_of()
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, tuple(inputs))
    torch.export.save(ep, os.path.join(d, "model.pt2"))
    export_s = time.time() - t0
    gm = model.to(DEV)
    gin = [x.to(DEV) for x in inputs]
    result = {"name": name, "exportS": round(export_s, 1), "torch": torch.__version__}
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
        result["eagerFp32Ms"] = cuda_ms(lambda: gm(*gin))
        half = [x.half() if x.is_floating_point() else x for x in gin]
        gh = gm.half()
        if cnn:
            gh = gh.to(memory_format=torch.channels_last)
            half = [x.to(memory_format=torch.channels_last) for x in half]
        if name.startswith("llama"):  # RoPE stays complex64 (as in Llama's own code)
            half = [half[0], gin[1]]
        # PyTorch's own fp16 output: what a reduced-precision engine is compared with (models.bench.js
        # PRECISION=fp16), and PyTorch's fp16 error against its fp32 run (max |fp16 - fp32| / max |fp32|).
        out16 = gh(*half).float()
        save_tensor(out16, os.path.join(d, "output0_fp16.bin"))
        meta["outputs_fp16"] = [{"file": "output0_fp16.bin", "dtype": "float32", "shape": list(out16.shape)}]
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        result["torchFp16Error"] = ((out16 - ref).abs().max() / ref.abs().max()).item()
        result["eagerFp16Ms"] = cuda_ms(lambda: gh(*half))
        if not os.environ.get("SKIP_TORCH_COMPILE"):
            t0 = time.time()
            compiled = torch.compile(gh, mode="reduce-overhead")
            result["inductorGraphsFp16Ms"] = cuda_ms(lambda: compiled(*half))
            result["inductorCompileS"] = round(time.time() - t0, 1)
    result["best"] = min(result["eagerFp16Ms"], result.get("inductorGraphsFp16Ms", float("inf")))
    print(json.dumps(result), flush=True)
    return result


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(WORKLOADS)
    results = []
    for n in names:
        try:
            results.append(run(n, out))
        except Exception as e:  # one workload failing must not hide the others
            results.append({"name": n, "error": f"{type(e).__name__}: {e}"[:500]})
            print(json.dumps(results[-1]), flush=True)
        with open(os.path.join(out, "torch.json"), "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
