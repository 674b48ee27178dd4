"""Export common model families with random weights for ``families.py`` (run with a torch Python).

    /work/venvs/torch/bin/python benchmarks/make_family_exports.py [--out DIR] [--only SUBSTR ...] [--timeout S]

Real architectures at tiny sizes where the family is large (a linter's cost depends on the graph's
structure, not on trained weights): torchvision resnet18, timm efficientnet_b0, transformers BERT
(sequence classification) and GPT-2 (LM head, no cache), and a Whisper encoder. Every model is
exported with the TorchScript exporter (``dynamo=False``, opset 17) and with the dynamo exporter
(``dynamo=True``, its own opset and its default external-data layout), with dynamic batch and, where
natural, dynamic sequence length or image height and width. Seeds are fixed. Files are written into
the cache folder (``benchmarks/.cache/families`` by default, git-ignored) and reused when present.
Beside each model a ``NAME.json`` describes its inputs (concrete example shapes, dtypes and value
ranges, for calibration) and its configuration (for ONNX Runtime's transformer optimizer). Each
export runs in its own process so that one exporter crash does not lose the others; a failed export
is printed with the exporter's own error text, never hidden. Prints one JSON line per model.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent / ".cache" / "families"
EXPORTERS = ("torchscript", "dynamo")
FAMILIES = ("resnet18", "efficientnet_b0", "bert", "gpt2", "whisper_encoder")
# Tiny but real transformer configurations: the layer structure of the full models, few layers and narrow.
TEXT = {"hidden_size": 128, "layers": 2, "heads": 4, "intermediate": 512}
BATCH, SEQUENCE, IMAGE = 2, 16, 128  # example sizes; batch 2, not 1, so that dynamo does not specialise it


def _versions() -> dict[str, str]:
    """The versions that made the exports, printed once so that a table can name them."""
    import onnx
    import onnxscript
    import timm
    import torch
    import torchvision
    import transformers

    return {m.__name__: m.__version__ for m in (torch, torchvision, timm, transformers, onnxscript, onnx)}


def _build(family: str) -> tuple[Any, dict[str, Any], dict[str, dict], dict[str, Any]]:
    """Return (module, example inputs by name, dynamic axes by input name, config for the optimizer)."""
    import torch

    torch.manual_seed(0)
    if family in ("resnet18", "efficientnet_b0"):
        if family == "resnet18":
            import torchvision

            model = torchvision.models.resnet18(weights=None)
        else:
            import timm

            model = timm.create_model("efficientnet_b0", pretrained=False)
        inputs = {"image": torch.rand(BATCH, 3, IMAGE, IMAGE)}
        axes = {"image": {0: "batch", 2: "height", 3: "width"}}
        return model.eval(), inputs, axes, {"kind": "vision", "optimizer": "bert", "opt_level": 1,
                                             "num_heads": 0, "hidden_size": 0}
    import transformers

    if family == "whisper_encoder":
        config = transformers.WhisperConfig(d_model=TEXT["hidden_size"], encoder_layers=TEXT["layers"],
                                            encoder_attention_heads=TEXT["heads"],
                                            encoder_ffn_dim=TEXT["intermediate"], decoder_layers=1,
                                            decoder_attention_heads=TEXT["heads"],
                                            decoder_ffn_dim=TEXT["intermediate"], num_mel_bins=80)
        whole = transformers.WhisperModel._from_config(config, attn_implementation="eager")
        encoder = whole.get_encoder().eval()

        class Encoder(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.encoder = encoder

            def forward(self, input_features: torch.Tensor) -> torch.Tensor:
                return self.encoder(input_features, return_dict=False)[0]

        # Whisper's encoder checks that the frames are exactly 2 x max_source_positions (3000): only batch varies.
        frames = 2 * config.max_source_positions
        inputs = {"input_features": torch.randn(BATCH, config.num_mel_bins, frames)}
        return Encoder().eval(), inputs, {"input_features": {0: "batch"}}, {
            "kind": "audio", "optimizer": "bart", "num_heads": TEXT["heads"], "hidden_size": TEXT["hidden_size"]}
    if family == "bert":
        config = transformers.BertConfig(hidden_size=TEXT["hidden_size"], num_hidden_layers=TEXT["layers"],
                                         num_attention_heads=TEXT["heads"], intermediate_size=TEXT["intermediate"],
                                         num_labels=2)
        net = transformers.BertForSequenceClassification._from_config(config, attn_implementation="eager").eval()

        class Bert(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.net = net

            def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                        token_type_ids: torch.Tensor) -> torch.Tensor:
                return self.net(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                return_dict=False)[0]

        module: torch.nn.Module = Bert()
        names = ("input_ids", "attention_mask", "token_type_ids")
        vocab, positions = config.vocab_size, config.max_position_embeddings
        optimizer = "bert"
    elif family == "gpt2":
        config = transformers.GPT2Config(n_embd=TEXT["hidden_size"], n_layer=TEXT["layers"], n_head=TEXT["heads"],
                                         n_inner=TEXT["intermediate"], use_cache=False)
        net = transformers.GPT2LMHeadModel._from_config(config, attn_implementation="eager").eval()

        class Gpt2(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.net = net

            def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
                return self.net(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                                return_dict=False)[0]

        module = Gpt2()
        names = ("input_ids", "attention_mask")
        vocab, positions = config.vocab_size, config.n_positions
        optimizer = "gpt2"
    else:
        raise ValueError(f"unknown family {family}")
    inputs = {"input_ids": torch.randint(0, vocab, (BATCH, SEQUENCE)),
              "attention_mask": torch.ones(BATCH, SEQUENCE, dtype=torch.int64),
              "token_type_ids": torch.zeros(BATCH, SEQUENCE, dtype=torch.int64)}
    inputs = {name: inputs[name] for name in names}
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    return module.eval(), inputs, axes, {"kind": "text", "optimizer": optimizer, "num_heads": TEXT["heads"],
                                         "hidden_size": TEXT["hidden_size"], "vocab_size": vocab,
                                         "max_positions": positions}


def _spec(inputs: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """What ``families.py`` needs to feed the model (calibration) and to optimize it, as plain JSON."""
    described = {}
    for name, tensor in inputs.items():
        dtype = str(tensor.dtype).removeprefix("torch.")
        entry: dict[str, Any] = {"shape": list(tensor.shape), "dtype": dtype}
        if name == "input_ids":
            entry["high"] = config["vocab_size"]
        elif name == "attention_mask":
            entry["fill"] = 1
        elif name == "token_type_ids":
            entry["fill"] = 0
        described[name] = entry
    return {"inputs": described, "config": config}


def _summary(error: BaseException) -> str:
    """The exporter's own words, one line: torch.onnx wraps the cause after boilerplate advice."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    if "## Exception summary" in text:
        text = text.split("## Exception summary", 1)[1]
    text = " ".join(text.split())
    return f"{type(error).__name__}: {text}"[:600]


def export_one(family: str, exporter: str, path: Path) -> None:
    """Build one model with random weights and export it (runs in a child process)."""
    import torch

    module, inputs, axes, config = _build(family)
    args = tuple(inputs.values())
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name.replace(".onnx", ".partial.onnx"))
    with torch.no_grad():
        if exporter == "dynamo":
            dims: dict[str, Any] = {}

            def dim(label: str) -> Any:
                if label not in dims:
                    top = config.get("max_positions", 4096) if label == "sequence" else 4096
                    dims[label] = torch.export.Dim(label, min=2, max=top)
                return dims[label]

            # Positional, like the arguments: a dict would have to use forward's own parameter names.
            shapes = tuple({axis: dim(label) for axis, label in axes[name].items()} for name in inputs)
            # The exporter's defaults otherwise: its opset, its optimizer, weights in NAME.partial.onnx.data.
            torch.onnx.export(module, args, str(tmp), input_names=list(inputs), output_names=["output"],
                              dynamic_shapes=shapes, dynamo=True)
        else:
            torch.onnx.export(module, args, str(tmp), input_names=list(inputs), output_names=["output"],
                              dynamic_axes=axes, opset_version=17, dynamo=False)
    data = tmp.with_name(tmp.name + ".data")
    if data.exists():  # the .onnx names its data file: rename both together, the reference rewritten
        import onnx

        model = onnx.load(str(tmp), load_external_data=False)
        final = path.name + ".data"
        for tensor in model.graph.initializer:
            for entry in tensor.external_data:
                if entry.key == "location":
                    entry.value = final
        data.replace(path.with_name(final))
        onnx.save(model, str(path))
        tmp.unlink()
    else:
        tmp.replace(path)
    path.with_suffix(".json").write_text(json.dumps({**_spec(inputs, config), "exporter": exporter,
                                                    "family": family, "versions": _versions()}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=CACHE)
    parser.add_argument("--only", nargs="*", default=None, help="export only the names containing one of these")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--versions", action="store_true", help="print the versions as one JSON line and stop")
    parser.add_argument("--child", nargs=3, metavar=("FAMILY", "EXPORTER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.versions:
        print(json.dumps(_versions()))
        return
    if args.child:
        try:
            export_one(args.child[0], args.child[1], Path(args.child[2]))
        except Exception as error:  # the whole text on stderr; the parent keeps its last lines
            traceback.print_exc()
            print(f"EXPORT-ERROR: {_summary(error)}", file=sys.stderr)
            sys.exit(1)
        return
    for family in FAMILIES:
        for exporter in EXPORTERS:
            name = f"{family}.{exporter}"
            if args.only and not any(part in name for part in args.only):
                continue
            path = args.out / f"{name}.onnx"
            start = time.perf_counter()
            record: dict[str, Any] = {"name": name, "exporter": exporter, "path": str(path)}
            if not (path.exists() and path.with_suffix(".json").exists()):
                try:
                    done = subprocess.run([sys.executable, __file__, "--child", family, exporter, str(path)],
                                          capture_output=True, text=True, timeout=args.timeout)
                    if done.returncode != 0:
                        lines = done.stderr.strip().splitlines() or [f"exit code {done.returncode}"]
                        marked = [line for line in lines if line.startswith("EXPORT-ERROR: ")]
                        record["error"] = (marked[-1].removeprefix("EXPORT-ERROR: ") if marked else lines[-1])[:600]
                except subprocess.TimeoutExpired:
                    record["error"] = f"export exceeded {args.timeout:.0f} s"
            else:
                record["reused"] = True
            record["seconds"] = round(time.perf_counter() - start, 1)
            if "error" in record:
                record.pop("path")
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
