"""Builds the model zoo on the GPU machine (PyTorch, torchvision and transformers are there;
there is no network, so every model is built from a config with random weights, seeded).

For each model: a `torch.export` archive (dynamic batch, and sequence where the model has one;
with Dim.AUTO when named dims fail, static when both fail, which the manifest says), ONNX files from the dynamo
exporter and the TorchScript exporter where they work, and PyTorch's outputs at two or three input
sizes (fp32, on the CPU). Everything goes under the output folder, with manifest.json listing
files (sha256, bytes), input specs (min/opt/max per input), exporter results and errors.

The models are generated on demand rather than kept in the repository: full-size torchvision
CNNs are 5-100 MB each; the repository keeps this script, the manifest's checksums and the
table (docs/models.md) made by scripts/zoo/evaluate.js.

usage: python3 scripts/zoo/make_zoo.py OUT_DIR [model ...]
       ZOO_SHARD=i/n python3 scripts/zoo/make_zoo.py OUT_DIR; python3 scripts/zoo/make_zoo.py --merge OUT_DIR
"""
import hashlib
import json
import os
import sys
import time
import traceback

import numpy as np
import torch

torch.manual_seed(0)
SEED = 0


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class Single(torch.nn.Module):
    """Wraps a model so it returns one tensor (logits / last hidden state)."""

    def __init__(self, model, pick):
        super().__init__()
        self.model = model
        self.pick = pick

    def forward(self, x):
        # One named input: torch.export matches dynamic_shapes to this signature.
        return self.pick(self.model(x))


# --- torchvision -------------------------------------------------------------------------

def tv(name, **kw):
    import torchvision
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def tiny_vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128, num_classes=10)


def tiny_swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4], num_classes=10)


def tiny_convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(32, 64, 1), CNBlockConfig(64, None, 1)], num_classes=10)


def segmentation(name):
    """A torchvision segmentation model with its "out" map (the heads upsample to the input size)."""
    import torchvision
    model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None)
    return Single(model, lambda out: out["out"])


# --- transformers (tiny configs) ---------------------------------------------------------

def hf(config_cls, model_cls, pick, **cfg):
    def build():
        import transformers
        config = getattr(transformers, config_cls)(**cfg)
        model = getattr(transformers, model_cls)(config)
        return Single(model, pick)
    return build


logits = lambda out: out[0]  # noqa: E731 (logits or last_hidden_state, the first field)
DEC = dict(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128)

MODELS = {
    # name: (builder, input kind, extra: image size or vocabulary)
    "resnet18": (tv("resnet18"), "image", {}),
    "resnet50": (tv("resnet50"), "image", {}),
    "mobilenet_v2": (tv("mobilenet_v2"), "image", {}),
    "mobilenet_v3_small": (tv("mobilenet_v3_small"), "image", {}),
    "efficientnet_b0": (tv("efficientnet_b0"), "image", {}),
    "regnet_y_400mf": (tv("regnet_y_400mf"), "image", {}),
    "shufflenet_v2_x0_5": (tv("shufflenet_v2_x0_5"), "image", {}),
    "convnext_tiny_cfg": (tiny_convnext, "image", {}),
    "vit_tiny_cfg": (tiny_vit, "image", {"hw": 32}),
    "swin_tiny_cfg": (tiny_swin, "image", {}),
    "bert": (hf("BertConfig", "BertModel", logits, vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128), "text", {"vocab": 256}),
    "distilbert": (hf("DistilBertConfig", "DistilBertModel", logits, vocab_size=256, dim=64, hidden_dim=128, n_layers=2, n_heads=4, max_position_embeddings=128), "text", {"vocab": 256}),
    "roberta": (hf("RobertaConfig", "RobertaModel", logits, vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=130), "text", {"vocab": 256}),
    "gpt2": (hf("GPT2Config", "GPT2LMHeadModel", logits, vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128), "text", {"vocab": 256}),
    "llama": (hf("LlamaConfig", "LlamaForCausalLM", logits, num_key_value_heads=2, **DEC), "text", {"vocab": 256}),
    "mistral": (hf("MistralConfig", "MistralForCausalLM", logits, num_key_value_heads=2, sliding_window=None, **DEC), "text", {"vocab": 256}),
    "qwen2": (hf("Qwen2Config", "Qwen2ForCausalLM", logits, num_key_value_heads=2, **DEC), "text", {"vocab": 256}),
    "phi": (hf("PhiConfig", "PhiForCausalLM", logits, **DEC), "text", {"vocab": 256}),
    "t5_encoder": (hf("T5Config", "T5EncoderModel", logits, vocab_size=256, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4), "text", {"vocab": 256}),
    "clip_text": (hf("CLIPTextConfig", "CLIPTextModel", logits, vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=77), "text", {"vocab": 256}),
    "whisper_encoder": (None, "audio", {}),
    # More torchvision architectures: dense and grouped convolutions, Inception blocks, NAS
    # blocks, fused MBConv, segmentation heads with bilinear upsampling.
    "densenet121": (tv("densenet121"), "image", {}),
    "squeezenet1_1": (tv("squeezenet1_1"), "image", {}),
    "mnasnet0_5": (tv("mnasnet0_5"), "image", {}),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), "image", {}),
    "resnext50_32x4d": (tv("resnext50_32x4d"), "image", {}),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), "image", {}),
    "regnet_x_400mf": (tv("regnet_x_400mf"), "image", {}),
    "efficientnet_v2_s": (tv("efficientnet_v2_s"), "image", {}),
    "lraspp_mobilenet_v3": (lambda: segmentation("lraspp_mobilenet_v3_large"), "image", {}),
    "deeplabv3_mobilenet_v3": (lambda: segmentation("deeplabv3_mobilenet_v3_large"), "image", {}),
    # More transformers families (tiny configs): encoders with factorized or relative
    # embeddings, decoder-only LMs with ALiBi, partial rotary, multi-query, q/k norms, an
    # encoder-decoder, and vision transformers and CNNs.
    "albert": (hf("AlbertConfig", "AlbertModel", logits, vocab_size=256, embedding_size=32, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128), "text", {"vocab": 256}),
    "electra": (hf("ElectraConfig", "ElectraModel", logits, vocab_size=256, embedding_size=32, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128), "text", {"vocab": 256}),
    "deberta_v2": (hf("DebertaV2Config", "DebertaV2Model", logits, vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128, relative_attention=True, position_buckets=32, pos_att_type=["p2c", "c2p"]), "text", {"vocab": 256}),
    "mpnet": (hf("MPNetConfig", "MPNetModel", logits, vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=130), "text", {"vocab": 256}),
    "bart": (hf("BartConfig", "BartModel", logits, vocab_size=256, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128), "text", {"vocab": 256}),
    "opt": (hf("OPTConfig", "OPTForCausalLM", logits, vocab_size=256, hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128, word_embed_proj_dim=64), "text", {"vocab": 256}),
    "gpt_neox": (hf("GPTNeoXConfig", "GPTNeoXForCausalLM", logits, **DEC), "text", {"vocab": 256}),
    "falcon": (hf("FalconConfig", "FalconForCausalLM", logits, vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=128), "text", {"vocab": 256}),
    "bloom": (hf("BloomConfig", "BloomForCausalLM", logits, vocab_size=256, hidden_size=64, n_layer=2, n_head=4), "text", {"vocab": 256}),
    "gemma": (hf("GemmaConfig", "GemmaForCausalLM", logits, num_key_value_heads=1, head_dim=16, **DEC), "text", {"vocab": 256}),
    "qwen3": (hf("Qwen3Config", "Qwen3ForCausalLM", logits, num_key_value_heads=2, head_dim=16, **DEC), "text", {"vocab": 256}),
    "gpt_bigcode": (hf("GPTBigCodeConfig", "GPTBigCodeForCausalLM", logits, vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128), "text", {"vocab": 256}),
    "codegen": (hf("CodeGenConfig", "CodeGenForCausalLM", logits, vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128, n_ctx=128, rotary_dim=8), "text", {"vocab": 256}),
    "stablelm": (hf("StableLmConfig", "StableLmForCausalLM", logits, num_key_value_heads=4, **DEC), "text", {"vocab": 256}),
    "olmo": (hf("OlmoConfig", "OlmoForCausalLM", logits, **DEC), "text", {"vocab": 256}),
    "hf_vit": (hf("ViTConfig", "ViTModel", logits, image_size=32, patch_size=8, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4), "image", {"hw": 32}),
    "deit": (hf("DeiTConfig", "DeiTModel", logits, image_size=32, patch_size=8, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4), "image", {"hw": 32}),
    "beit": (hf("BeitConfig", "BeitModel", logits, image_size=32, patch_size=8, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, use_relative_position_bias=True), "image", {"hw": 32}),
    "dinov2": (hf("Dinov2Config", "Dinov2Model", logits, image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2), "image", {"hw": 32}),
    "hf_swin": (hf("SwinConfig", "SwinModel", logits, image_size=64, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=4), "image", {}),
    "hf_convnext": (hf("ConvNextConfig", "ConvNextModel", logits, hidden_sizes=[16, 32], depths=[1, 1], num_stages=2), "image", {}),
    "hf_resnet": (hf("ResNetConfig", "ResNetModel", logits, embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic"), "image", {}),
    "segformer": (hf("SegformerConfig", "SegformerModel", logits, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2]), "image", {}),
}


def whisper_encoder():
    import transformers
    config = transformers.WhisperConfig(vocab_size=256, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=0, d_model=64, encoder_layers=2, encoder_attention_heads=4, decoder_layers=2,
                                        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16,
                                        max_source_positions=16, max_target_positions=32)
    return Single(transformers.WhisperModel(config).get_encoder(), logits)


MODELS["whisper_encoder"] = (whisper_encoder, "audio", {})

# The sizes PyTorch's outputs are stored at (index 1 is also the export example); the ranges
# are the compile profile. Images at batch 1, 7 and 32: both ends of the dynamic-batch range.
# Text at three sizes: a .pt2 whose dims torch.export made dynamic itself (Dim.AUTO) starts
# its ranges at 2, so batch 1 is outside it and the other two test it at two shapes.
SIZES = {"image": [{"batch": 1}, {"batch": 7}, {"batch": 32}], "text": [{"batch": 1, "seq": 8}, {"batch": 2, "seq": 13}, {"batch": 3, "seq": 29}], "audio": [{"batch": 1}, {"batch": 3}]}


def make_inputs(kind, extra, size):
    g = torch.Generator().manual_seed(SEED + size["batch"] * 100 + size.get("seq", 0))
    if kind == "image":
        hw = extra.get("hw", 64)
        return (torch.randn(size["batch"], 3, hw, hw, generator=g),)
    if kind == "text":
        return (torch.randint(0, extra["vocab"], (size["batch"], size["seq"]), generator=g, dtype=torch.int64),)
    return (torch.randn(size["batch"], 16, 32, generator=g),)


def input_specs(kind, extra):
    if kind == "image":
        hw = extra.get("hw", 64)
        return [{"name": "x", "dtype": "float32", "min": [1, 3, hw, hw], "opt": [8, 3, hw, hw], "max": [32, 3, hw, hw]}]
    if kind == "text":
        return [{"name": "input_ids", "dtype": "int64", "min": [1, 2], "opt": [2, 16], "max": [4, 64]}]
    return [{"name": "input_features", "dtype": "float32", "min": [1, 16, 32], "opt": [2, 16, 32], "max": [4, 16, 32]}]


def dynamic_shapes(kind):
    from torch.export import Dim
    batch = Dim("batch", min=1, max=32 if kind == "image" else 4)
    if kind == "text":
        return ({0: batch, 1: Dim("seq", min=2, max=64)},)
    return ({0: batch},)


def auto_shapes(kind):
    """Dim.AUTO: torch.export keeps dynamic what the model's code allows and says what it
    specialized, where named dims with ranges fail on a constraint the code adds (Llama's mask)."""
    from torch.export import Dim
    if kind == "text":
        return ({0: Dim.AUTO, 1: Dim.AUTO},)
    return ({0: Dim.AUTO},)


def export_one(name, out_root):
    builder, kind, extra = MODELS[name]
    folder = os.path.join(out_root, name)
    os.makedirs(folder, exist_ok=True)
    entry = {"name": name, "kind": kind, "inputs": input_specs(kind, extra), "sizes": SIZES[kind], "files": {}, "exports": {}}
    torch.manual_seed(SEED)
    model = builder().eval()
    entry["parameters"] = sum(p.numel() for p in model.parameters())
    example = make_inputs(kind, extra, SIZES[kind][1])
    names = [s["name"] for s in entry["inputs"]]
    with torch.no_grad():
        for i, size in enumerate(SIZES[kind]):
            args = make_inputs(kind, extra, size)
            out = model(*args)
            for j, a in enumerate(args):
                np.save(os.path.join(folder, f"size{i}_input{j}.npy"), a.numpy())
            np.save(os.path.join(folder, f"size{i}_output0.npy"), out.float().numpy())
    attempts = [
        ("pt2", "model.pt2", lambda path: torch.export.save(torch.export.export(model, example, dynamic_shapes=dynamic_shapes(kind)), path)),
        ("pt2_auto", "model.auto.pt2", lambda path: torch.export.save(torch.export.export(model, example, dynamic_shapes=auto_shapes(kind)), path)),
        ("pt2_static", "model.static.pt2", lambda path: torch.export.save(torch.export.export(model, example), path)),
        ("onnx_dynamo", "model.dynamo.onnx", lambda path: torch.onnx.export(model, example, path, dynamo=True, input_names=names,
                                                                            dynamic_shapes=dynamic_shapes(kind), external_data=False)),
        ("onnx_torchscript", "model.torchscript.onnx", lambda path: torch.onnx.export(model, example, path, dynamo=False, input_names=names,
                                                                                      output_names=["output0"], opset_version=17,
                                                                                      dynamic_axes={n: ({0: "batch", 1: "seq"} if kind == "text" else {0: "batch"}) for n in names})),
    ]
    # ZOO_EXPORTS (comma-separated keys) narrows the attempts, e.g. to the .pt2 forms.
    wanted = [k for k in os.environ.get("ZOO_EXPORTS", "").split(",") if k]
    for key, file, run in attempts:
        if wanted and key not in wanted:
            continue
        dynamic_ok = entry["exports"].get("pt2", {}).get("ok")
        if key == "pt2_auto" and dynamic_ok:
            continue  # only when the export with named dims failed
        if key == "pt2_static" and (dynamic_ok or entry["exports"].get("pt2_auto", {}).get("ok")):
            continue  # only when both dynamic exports failed
        path = os.path.join(folder, file)
        t0 = time.time()
        try:
            with torch.no_grad():
                run(path)
            entry["exports"][key] = {"ok": True, "file": file, "seconds": round(time.time() - t0, 2)}
        except Exception as e:  # noqa: BLE001 (every exporter failure is recorded, not fatal)
            entry["exports"][key] = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
                                     "trace": traceback.format_exc()[-1500:]}
    for f in sorted(os.listdir(folder)):
        p = os.path.join(folder, f)
        entry["files"][f] = {"sha256": sha256(p), "bytes": os.path.getsize(p)}
    return entry


def merge(out_root):
    """Joins the shards' manifests (ZOO_SHARD runs) into manifest.json, in model-list order."""
    shards = sorted(f for f in os.listdir(out_root) if f.startswith("manifest.shard") and f.endswith(".json"))
    parts = [json.load(open(os.path.join(out_root, f))) for f in shards]
    if not parts:
        sys.exit(f"no manifest.shard*.json in {out_root}")
    manifest = {k: v for k, v in parts[0].items() if k != "models"}
    models = [m for p in parts for m in p["models"]]
    order = list(MODELS)
    manifest["models"] = sorted(models, key=lambda m: order.index(m["name"]) if m["name"] in order else len(order))
    with open(os.path.join(out_root, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"merged {len(shards)} shards: {len(models)} models")


def main():
    if sys.argv[1] == "--merge":
        return merge(sys.argv[2])
    out_root = sys.argv[1]
    # These models are made first, so a time limit cuts the others.
    first = ["resnet50", "llama", "gpt2", "bert", "mobilenet_v3_small", "vit_tiny_cfg", "qwen2", "resnet18"]
    names = sys.argv[2:] or os.environ.get("ZOO_MODELS", "").split() or first + [m for m in MODELS if m not in first]
    # ZOO_SHARD=i/n: this process makes every n-th model from the i-th, into manifest.shard<i>.json
    # (several processes share a many-core machine; `make_zoo.py --merge OUT_DIR` joins them).
    shard = os.environ.get("ZOO_SHARD")
    manifest_name = "manifest.json"
    if shard:
        i, n = (int(x) for x in shard.split("/"))
        names = names[i::n]
        manifest_name = f"manifest.shard{i}.json"
    os.makedirs(out_root, exist_ok=True)
    manifest = {"torch": torch.__version__, "models": []}
    try:
        import transformers
        import torchvision
        manifest["transformers"] = transformers.__version__
        manifest["torchvision"] = torchvision.__version__
    except ImportError as e:
        manifest["import_error"] = str(e)
    for name in names:
        t0 = time.time()
        try:
            entry = export_one(name, out_root)
        except Exception as e:  # noqa: BLE001
            entry = {"name": name, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-1500:]}
        entry["seconds"] = round(time.time() - t0, 1)
        manifest["models"].append(entry)
        ok = {k: v.get("ok") for k, v in entry.get("exports", {}).items()}
        print(f"{name}: {entry['seconds']} s {ok} {entry.get('error', '')}", flush=True)
        with open(os.path.join(out_root, manifest_name), "w") as f:
            json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
