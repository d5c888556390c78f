"""Causal LMs with a KV cache for the generation benchmark (bench/gpu/generate.bench.js;
docs/generate.md): each model built from transformers' own code with seeded random weights,
exported to ONNX in the Optimum "with past" layout (input_ids, attention_mask, position_ids,
past_key_values.N.key/value -> logits, present.N.key/value), PyTorch's greedy tokens for fixed
prompts (transformers' generate(), fp32, on this GPU), and PyTorch's generation times.

For each model, <out>/<name>/:
  model.onnx (+ model.onnx.data)   the export (torch.onnx.export, TorchScript tracing, opset 17;
                                   checked with onnxruntime against PyTorch's logits at two past
                                   lengths, so a size baked in at tracing would show)
  meta.json                        sizes, prompts, PyTorch's tokens and times, the export check
PyTorch's times (fp16, batch 1 and 8, greedy, NEW_TOKENS new tokens, min_new_tokens so every
row runs to the end): "dynamic" is generate() with its default dynamic cache, eager; "static
compiled" is generate(cache_implementation="static") with torch.compile(mode="reduce-overhead")
on the forward (transformers' recommended fast path), timed after a warm-up generation. Time to
first token: one generate() of max_new_tokens=1 on a PROMPT_LEN-token prompt.

usage: python3 generate_models.py OUT [name ...]     names: the keys of MODELS (default: the small ones)
"""
import json
import os
import sys
import time

import torch

DEV = "cuda"
NEW_TOKENS = int(os.environ.get("NEW_TOKENS") or 64)
PROMPT_LEN = int(os.environ.get("PROMPT_LEN") or 512)
BATCHES = [int(b) for b in (os.environ.get("BATCHES") or "1,8").split(",")]
SKIP_COMPILE = bool(os.environ.get("SKIP_TORCH_COMPILE"))


# name: (family, transformers config class, model class, config arguments)
SMALL_DECODER = dict(vocab_size=1000, hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=2048, tie_word_embeddings=False)
MODELS = {
    # Correctness at sizes that export and run in seconds; grouped-query attention (4 heads, 2 KV heads).
    "llama_small": ("llama", "LlamaConfig", "LlamaForCausalLM", SMALL_DECODER),
    "qwen2_small": ("qwen2", "Qwen2Config", "Qwen2ForCausalLM", SMALL_DECODER),
    "mistral_small": ("mistral", "MistralConfig", "MistralForCausalLM", dict(SMALL_DECODER, sliding_window=None)),
    "phi3_small": ("phi3", "Phi3Config", "Phi3ForCausalLM", dict(SMALL_DECODER, pad_token_id=0, bos_token_id=1, eos_token_id=2)),
    "gpt2_small": ("gpt2", "GPT2Config", "GPT2LMHeadModel", dict(vocab_size=1000, n_embd=256, n_layer=4, n_head=4, n_positions=1024)),
    # 1B-class (TinyLlama's shape: 22 layers, 2048 wide, 32 heads, 4 KV heads, SwiGLU 5632, vocab 32000).
    "llama_1b": ("llama", "LlamaConfig", "LlamaForCausalLM", dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                                                                 num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
                                                                 max_position_embeddings=2048, tie_word_embeddings=False)),
}


def build(name):
    import transformers

    family, config_class, model_class, args = MODELS[name]
    cfg = getattr(transformers, config_class)(**args)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, model_class)(cfg).eval()
    # Random init gives nearly flat logits (std ~0.3), where greedy choices of two correct
    # implementations part at near-ties; a sharper head keeps every step's choice clear.
    with torch.no_grad():
        model.lm_head.weight.mul_(10.0)
    return family, cfg, model


def layer_count(cfg):
    return cfg.num_hidden_layers


def kv_shape(cfg, batch, past):
    heads = getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads
    return (batch, heads, past, cfg.hidden_size // cfg.num_attention_heads)


def cache_tensors(cache, layers):
    """(key, value) per layer of a transformers cache, whichever API this version has."""
    out = []
    for i in range(layers):
        if hasattr(cache, "layers"):
            out.append((cache.layers[i].keys, cache.layers[i].values))
        elif hasattr(cache, "key_cache"):
            out.append((cache.key_cache[i], cache.value_cache[i]))
        else:
            out.append(tuple(cache[i]))
    return out


class WithPast(torch.nn.Module):
    """The model with its cache as flat tensors: the Optimum layout's inputs and outputs."""

    def __init__(self, model, layers):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        from transformers import DynamicCache

        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=cache, use_cache=True)
        flat = [out.logits]
        for k, v in cache_tensors(out.past_key_values, self.layers):
            flat += [k, v]
        return tuple(flat)


def feeds(cfg, batch, past, seq, gen):
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), generator=gen)
    mask = torch.ones(batch, past + seq, dtype=torch.int64)
    pos = torch.arange(past, past + seq).unsqueeze(0).expand(batch, seq).contiguous()
    kv = []
    for _ in range(layer_count(cfg)):
        kv += [torch.randn(*kv_shape(cfg, batch, past), generator=gen), torch.randn(*kv_shape(cfg, batch, past), generator=gen)]
    return [ids, mask, pos, *kv]


def export(name, model, cfg, out_dir):
    layers = layer_count(cfg)
    wrapper = WithPast(model, layers).eval()
    gen = torch.Generator().manual_seed(1)
    sample = feeds(cfg, 2, 3, 4, gen)
    names_in = ["input_ids", "attention_mask", "position_ids"] + [f"past_key_values.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    names_out = ["logits"] + [f"present.{i}.{kind}" for i in range(layers) for kind in ("key", "value")]
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"}, "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
           "position_ids": {0: "batch_size", 1: "sequence_length"}, "logits": {0: "batch_size", 1: "sequence_length"}}
    for n in names_in[3:]:
        dyn[n] = {0: "batch_size", 2: "past_sequence_length"}
    for n in names_out[1:]:
        dyn[n] = {0: "batch_size", 2: "past_sequence_length + 1"}
    path = os.path.join(out_dir, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, tuple(sample), path, input_names=names_in, output_names=names_out, dynamic_axes=dyn,
                          opset_version=17, dynamo=False, external_data=True)
    return path, names_in


def check_export(path, model, cfg, names_in):
    """onnxruntime against PyTorch at two past lengths and batch sizes the trace did not see."""
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    wrapper = WithPast(model, layer_count(cfg)).eval()
    worst = 0.0
    gen = torch.Generator().manual_seed(2)
    for batch, past, seq in [(1, 0, 5), (3, 7, 1)]:
        f = feeds(cfg, batch, past, seq, gen)
        with torch.no_grad():
            want = wrapper(*f)
        got = sess.run(None, {n: t.numpy() for n, t in zip(names_in, f)})
        for w, g in zip(want, got):
            err = (w - torch.from_numpy(g)).abs().max().item() / max(w.abs().max().item(), 1e-6)
            worst = max(worst, err)
    return {"maxRelError": worst, "ok": worst < 1e-3}


def prompts(cfg, batch, length, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, cfg.vocab_size, (batch, length), generator=gen)


def greedy(model, ids, new_tokens, **kw):
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                             min_new_tokens=new_tokens, do_sample=False, pad_token_id=0, **kw)
    return out[:, ids.shape[1]:]


def timed(fn, reps=3):
    fn()  # warm-up (compiles, captures)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def torch_times(model, mode):
    half = model.to(DEV, torch.float16)
    cfg = half.config
    result = {}
    kw = {}
    if mode == "static compiled":
        # transformers compiles the decode forward itself when the cache is static (its
        # CompileConfig: fullgraph, CUDA graphs); wrapping forward in torch.compile as well
        # crashed the process (transformers 5.17, torch 2.11).
        kw = {"cache_implementation": "static"}
        try:
            from transformers import CompileConfig
            kw["compile_config"] = CompileConfig(fullgraph=True, mode="reduce-overhead")
        except ImportError:
            pass
    for batch in BATCHES:
        ids = prompts(cfg, batch, 16, 5).to(DEV)
        try:
            s = timed(lambda: greedy(half, ids, NEW_TOKENS, **kw))
            s1 = timed(lambda: greedy(half, ids, 1, **kw))
            # Decode rate: the tokens after the first, over the time after the first step.
            result[f"{mode} b{batch}"] = {"tokensPerS": batch * (NEW_TOKENS - 1) / max(s - s1, 1e-9), "totalS": s}
        except Exception as e:  # noqa: BLE001 - reported, the run goes on
            result[f"{mode} b{batch}"] = {"error": f"{type(e).__name__}: {e}"[:400]}
    long_ids = prompts(cfg, 1, PROMPT_LEN, 6).to(DEV)
    try:
        result[f"{mode} ttft p{PROMPT_LEN}"] = {"ms": 1000 * timed(lambda: greedy(half, long_ids, 1, **kw))}
    except Exception as e:  # noqa: BLE001
        result[f"{mode} ttft p{PROMPT_LEN}"] = {"error": f"{type(e).__name__}: {e}"[:400]}
    return result


def static_compiled_child(name):
    """The static-cache, compiled timings in a process of their own (a crash there is reported, not fatal)."""
    _, _, model = build(name)
    print(json.dumps(torch_times(model.to(DEV), "static compiled")), flush=True)


def static_compiled(name, limit):
    import subprocess

    try:
        done = subprocess.run([sys.executable, __file__, "--static-compiled", name], capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"static compiled": {"error": f"not done within {limit} s"}}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"static compiled": {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] if done.stderr.strip() else ''}"}}
    return json.loads(lines[-1])


def main():
    if sys.argv[1] == "--static-compiled":
        return static_compiled_child(sys.argv[2])
    out = sys.argv[1]
    names = sys.argv[2:] or [n for n in MODELS if n.endswith("_small")]
    for name in names:
        t0 = time.time()
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        meta = {"name": name}
        model = None
        try:
            family, cfg, model = build(name)
            path, names_in = export(name, model, cfg, d)
            meta["exportS"] = time.time() - t0
            meta["exportCheck"] = check_export(path, model, cfg, names_in)
            model = model.to(DEV)
            # Prompts: two rows of different lengths, generated alone (the library pads a batch).
            meta["prompts"] = [prompts(cfg, 1, n, 10 + n)[0].tolist() for n in (7, 13)]
            meta["torchTokens"] = [greedy(model, torch.tensor([p], device=DEV), NEW_TOKENS)[0].tolist() for p in meta["prompts"]]
            meta.update(family=family, layers=layer_count(cfg), vocab=cfg.vocab_size, newTokens=NEW_TOKENS, promptLength=PROMPT_LEN)
            meta["torch"] = torch_times(model, "dynamic")
            # Written now, so that the library's side can run even if the compiled timings cannot.
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(meta, f)
            if not SKIP_COMPILE:
                meta["torch"].update(static_compiled(name, int(os.environ.get("STATIC_COMPILED_S") or 300)))
        except Exception as e:  # noqa: BLE001 - one model's failure is reported, the others run
            meta["error"] = f"{type(e).__name__}: {e}"[:2000]
        meta["seconds"] = time.time() - t0
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f)
        print(json.dumps({k: v for k, v in meta.items() if k not in ("prompts", "torchTokens")}), flush=True)
        del model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
