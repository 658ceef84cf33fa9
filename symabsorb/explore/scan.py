"""``symabsorb scan DIR``: every MLP layer of every weight file under a directory, one task per layer,
each decided as the model uses it (biases, where the normalisation sits).

Layers are found by **layouts**: the tensor names of a family's MLP (BERT/RoBERTa/MiniLM, GPT-2,
GPT-NeoX/Pythia, OPT, ViT, T5 v1.0, T5 v1.1/Flan-T5, LLaMA/Mistral/Qwen, Gemma, symabsorb's own
``W_up``/``W_down``/``W_gate``), with their bias tensors, the normalisation's placement and its scale
tensor. Tensors no layout uses are ignored (never a reason to skip a file). A ``config.json`` beside
the weights is read as untrusted input for the architecture, the activation and the norm's epsilon;
without it (or where it says nothing) the layout's usual values are assumed and each layer says so.
Layer groups (``…layer.3.``, ``…h.3.``, ``…block.3.``) in which no layout finds an MLP are listed as
skipped. Each layer is written as a block of the spec language and decided by
``weights.concrete.decide_file``; the JSON output embeds that spec and the certificates, so
``symabsorb verify`` re-checks it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..budget import BudgetExhausted
from .budget import run_with_cpu_budget
from .classify import case_id

__all__ = ["LAYOUTS", "WEIGHT_SUFFIXES", "Layout", "ScanTask", "failed_layer", "find_layers", "group_hint",
           "read_config", "register_layout", "scan_task", "unregister_layout", "verify_view", "weight_files"]

WEIGHT_SUFFIXES = (".safetensors", ".npz", ".pt", ".pth", ".bin")
#: Largest config.json read (bytes).
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class Layout:
    """One family's MLP: tensor names relative to a layer prefix, and how the model uses them."""

    name: str
    family: str  # what the layout covers, in words
    up: str
    down: str
    gate: str | None = None
    up_bias: str | None = None
    down_bias: str | None = None
    transpose: bool = False  # stored in x out (GPT-2's Conv1D)
    activation: str = "gelu"  # the usual activation; config.json or --activation overrides it
    gated: bool = False
    norm: str = "none"  # where the family's normalisation sits
    norm_tensor: str | None = None  # the scale of a post-LN (read), or the marker of a pre-norm
    eps: str = "1e-5"
    marker: str | None = None  # a tensor that must exist beside the layer (tells BERT from ViT)
    model_types: tuple[str, ...] = ()
    #: the gate is optional: the layer is gated exactly when the ``gate`` tensor is beside it (``gated`` stays
    #: False: the gate is not required to match), and then ``gated_activation`` is the activation unless
    #: ``--activation`` names one
    optional_gate: bool = False
    gated_activation: str | None = None
    #: (model_type prefix, activation): a config.json whose ``model_type`` starts with the prefix and names no
    #: activation means this one (Gemma under the LLaMA names: tanh-GELU), unless ``--activation`` names one
    model_type_activations: tuple[tuple[str, str], ...] = ()
    #: (config.json key, value, placement): the normalisation sits at ``placement`` when config.json sets the
    #: key to the value (OPT's ``do_layer_norm_before: false`` is post-LN); the key is read from config.json
    norm_by_config: tuple[tuple[str, bool, str], ...] = ()


LAYOUTS: tuple[Layout, ...] = (
    Layout("bert", "BERT / RoBERTa / MiniLM (post-LN, biases, GELU)", "intermediate.dense.weight",
           "output.dense.weight", up_bias="intermediate.dense.bias", down_bias="output.dense.bias", norm="post-ln",
           norm_tensor="output.LayerNorm.weight", eps="1e-12", marker=None,
           model_types=("bert", "roberta", "xlm-roberta", "electra", "camembert", "mpnet")),
    Layout("vit", "ViT (Hugging Face; pre-LN, biases, GELU)", "intermediate.dense.weight", "output.dense.weight",
           up_bias="intermediate.dense.bias", down_bias="output.dense.bias", norm="pre-ln",
           norm_tensor="layernorm_after.weight", eps="1e-12", marker="layernorm_after.weight", model_types=("vit",)),
    Layout("vit-timm", "ViT (timm; pre-LN, biases, GELU)", "mlp.fc1.weight", "mlp.fc2.weight", up_bias="mlp.fc1.bias",
           down_bias="mlp.fc2.bias", norm="pre-ln", norm_tensor="norm2.weight", eps="1e-6", marker="norm2.weight"),
    Layout("gpt2", "GPT-2 (Conv1D stored in x out; pre-LN, biases, tanh-GELU)", "mlp.c_fc.weight", "mlp.c_proj.weight",
           up_bias="mlp.c_fc.bias", down_bias="mlp.c_proj.bias", transpose=True, activation="gelu_tanh", norm="pre-ln",
           norm_tensor="ln_2.weight", model_types=("gpt2",)),
    Layout("gpt-neox", "GPT-NeoX / Pythia (pre-LN, biases, GELU)", "mlp.dense_h_to_4h.weight",
           "mlp.dense_4h_to_h.weight", up_bias="mlp.dense_h_to_4h.bias", down_bias="mlp.dense_4h_to_h.bias",
           norm="pre-ln", norm_tensor="post_attention_layernorm.weight", model_types=("gpt_neox",)),
    Layout("opt", "OPT (pre-LN, biases, ReLU)", "fc1.weight", "fc2.weight", up_bias="fc1.bias", down_bias="fc2.bias",
           activation="relu", norm="pre-ln", norm_tensor="final_layer_norm.weight", model_types=("opt",),
           norm_by_config=(("do_layer_norm_before", False, "post-ln"),)),
    Layout("t5-gated", "T5 v1.1 / Flan-T5 (gated GeGLU wi_0/wi_1, pre-RMSNorm, no biases)",
           "DenseReluDense.wi_1.weight", "DenseReluDense.wo.weight", gate="DenseReluDense.wi_0.weight",
           activation="gelu_tanh", gated=True, norm="pre-rms", eps="1e-6", model_types=("t5", "mt5")),
    Layout("t5", "T5 v1.0 (ReLU, pre-RMSNorm, no biases)", "DenseReluDense.wi.weight", "DenseReluDense.wo.weight",
           activation="relu", norm="pre-rms", eps="1e-6", model_types=("t5", "mt5")),
    Layout("llama", "LLaMA / Mistral / Qwen (SwiGLU, pre-RMSNorm)", "mlp.up_proj.weight", "mlp.down_proj.weight",
           gate="mlp.gate_proj.weight", up_bias="mlp.up_proj.bias", down_bias="mlp.down_proj.bias",
           activation="silu", gated=True, norm="pre-rms", eps="1e-6",
           model_types=("llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text"),
           model_type_activations=(("gemma", "gelu_tanh"),)),
    Layout("phi3", "Phi-3 (fused gate_up_proj: the gate its first half, up its second; SwiGLU, pre-RMSNorm)",
           "mlp.gate_up_proj.weight.chunk(2)[1]", "mlp.down_proj.weight", gate="mlp.gate_up_proj.weight.chunk(2)[0]",
           activation="silu", gated=True, norm="pre-rms", eps="1e-5", model_types=("phi3",)),
    Layout("symabsorb", "symabsorb's own names (W_up, W_down, W_gate; a bare block)", "W_up", "W_down", gate="W_gate",
           activation="gelu", optional_gate=True, gated_activation="silu"),
)


def register_layout(layout: Layout, *, before: str | None = None) -> Layout:
    """Add ``layout`` to :data:`LAYOUTS` (a new family is one declaration). The first matching layout wins:
    ``before`` names the layout it is tried before (default: after every other). A name is registered once."""
    global LAYOUTS
    names = [lay.name for lay in LAYOUTS]
    if layout.name in names:
        raise ValueError(f"the scan layout `{layout.name}` is already registered")
    if before is not None and before not in names:
        raise ValueError(f"no scan layout `{before}` to register `{layout.name}` before (one of {', '.join(names)})")
    at = names.index(before) if before is not None else len(names)
    LAYOUTS = (*LAYOUTS[:at], layout, *LAYOUTS[at:])
    return layout


def unregister_layout(name: str) -> None:
    """Remove the layout ``name`` (for tests that add one)."""
    global LAYOUTS
    LAYOUTS = tuple(lay for lay in LAYOUTS if lay.name != name)

#: Activation names of config.json (Hugging Face ``hidden_act`` and friends) and the functions they are.
CONFIG_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_fast": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
                      "gelu_python": "gelu", "relu": "relu", "silu": "silu", "swish": "silu", "quick_gelu": "quickgelu",
                      "tanh": "tanh", "sigmoid": "sigmoid", "mish": "mish", "elu": "elu", "leaky_relu": "leaky_relu",
                      "relu2": "relu2", "gated-gelu": "gelu_tanh"}  # T5 v1.1: gated-gelu is gelu_new
_GROUP = re.compile(r"^(.*?(?:^|[._/])(?:layers?|h|blocks?|block)[._/]\d+[._/])")
#: A tensor named like an MLP up or down projection (the group is what precedes that last component).
_PROJECTION = re.compile(r"^(.*?)(?:(?<=[._/-])|^)(?:w_?)?(?:up|down)(?:_?proj)?(?:[._/-]weight)?\s*$",
                         re.IGNORECASE)
_STRING_OK = re.compile(r'^[^"\\\n]*$')


@dataclass(frozen=True)
class ScanTask:
    id: str
    file: str
    prefix: str
    pattern: str
    block_text: str  # the layer as a block of the spec language
    block_name: str
    spec_dir: str  # the scanned directory (weights named relative to it)
    activation: str
    norm: str
    assumptions: tuple[str, ...]
    budget: float | None
    kind: str = "scan"
    sha256: str = ""  # the bytes listed and hashed: the decision reads a file with this digest or none
    allow_outside: bool = False  # listed through --allow-outside (the file resolves outside the directory)
    norm_assumed: bool = False  # the placement is the layout's usual one: no config.json names the architecture
    alt_norm: str = ""  # the other placement, decided too when the placement is assumed
    alt_text: str = ""  # the layer as a block with the other placement
    #: the bare block of the paper's question (same file, tensors and activation; no biases, no
    #: normalisation), decided too when the layer as used is not bare ("" when it is)
    bare_text: str = ""
    theorems: tuple[str, ...] = ()  # the --theorems directories of the library in force (built-in only: none)

    @property
    def label(self) -> str:
        return f"{_shown_rel(self.file, self.spec_dir)}:{self.prefix or '(top level)'}"


def _shown_rel(file: str, directory: str) -> str:
    """The file as named under the scanned directory (``text_encoder/model.safetensors``), never
    the target of a link (a Hugging Face blob is reported under its snapshot name)."""
    try:
        return str(Path(file).relative_to(directory))
    except ValueError:
        return Path(file).name


def weight_files(directory: Path) -> list[Path]:
    """The weight files under ``directory`` by the names they are listed under (links not resolved:
    a link is confined and read by :func:`scan`, and reported under its own name). Anything but a
    directory is listed, so a FIFO, a device or a dangling link named ``*.safetensors`` is a skipped
    line with its reason, never silently passed over."""
    return sorted(p for p in directory.rglob("*") if p.suffix.lower() in WEIGHT_SUFFIXES and not p.is_dir())


def _confined(name: Path, root: Path) -> tuple[bool, str | None]:
    """Whether ``name`` (listed under ``root``) may be read: inside the directory after following
    links, or a Hugging Face snapshot's link into its own repository's blobs, or anywhere with
    ``--allow-outside``. Returns (read it through --allow-outside, the reason it may not be read)."""
    from ..budget import current
    from ..errors import SymabsorbError
    from ..paths import confine

    try:
        resolved = confine(name.parent, name.name, None, None, "file")
    except SymabsorbError as err:
        return False, str(err).splitlines()[0].removeprefix("error: ")
    try:
        confine(name.parent, name.name, root, None, "file")
    except SymabsorbError:
        if current().allow_outside:
            return True, None
        return False, (f"a link to `{resolved}`, outside the scanned directory: not read (pass --allow-outside "
                       "to read files that links lead to outside it)")
    return False, None


# ---- config.json (untrusted input) ---------------------------------------------------------------------


#: How a config.json that is not read at all (a link out, a loop) begins: listed as skipped too.
_CONFIG_REFUSED = "config.json beside the weights is refused: "


class _LongNumber(ValueError):
    pass


def _bounded_int(text: str) -> int:
    """JSON integers of config.json: at most 100 digits (Python refuses to convert more than 4,300
    at all; no configuration value needs more than a few)."""
    if len(text.lstrip("-")) > 100:
        raise _LongNumber(f"an integer of {len(text.lstrip('-'))} digits")
    return int(text)


def _bounded_float(text: str) -> float:
    if len(text) > 400:
        raise _LongNumber(f"a number of {len(text)} characters")
    return float(text)


def read_config(folder: Path, root: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """``config.json`` beside the weights as plain values (model type, activation, epsilon, pre/post
    norm), each checked for type; (values, a problem with the file or None). A missing file gives
    ``{}``; a bad one, a link out of ``root`` (without ``--allow-outside``) or a file that cannot be
    read is a problem stated per layer, never a crash. Numbers are bounded before they are built."""
    from ..errors import SymabsorbError
    from ..paths import read_input

    path = folder / "config.json"
    import os

    if not os.path.lexists(path):  # a FIFO, a device or a dangling link named config.json is a stated problem
        return {}, None
    if root is not None:
        _outside, refused = _confined(path, root)
        if refused is not None:
            return {}, f"{_CONFIG_REFUSED}{refused}; its values are not used"
    try:
        raw = read_input(path, None, "config.json", max_bytes=MAX_CONFIG_BYTES, expected="a JSON object")
        data = json.loads(raw.decode("utf-8"), parse_int=_bounded_int, parse_float=_bounded_float)
    except _LongNumber as err:
        return {}, f"config.json beside the weights holds {err}: its values are not used"
    except SymabsorbError as err:
        why = str(err).splitlines()[0].removeprefix("error: ")
        return {}, f"config.json beside the weights is not usable ({why[:160]}): its values are not used"
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        return {}, f"config.json beside the weights is not usable ({type(err).__name__}): its values are not used"
    if not isinstance(data, dict):
        return {}, "config.json beside the weights is not a JSON object: its values are not used"
    out: dict[str, Any] = {}
    for key in ("model_type", "hidden_act", "activation_function", "hidden_activation", "feed_forward_proj",
                "dense_act_fn"):
        if isinstance(data.get(key), str) and len(data[key]) <= 64:
            out[key] = data[key]
    for key in ("layer_norm_eps", "layer_norm_epsilon", "rms_norm_eps"):
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1:
            out["eps"] = value
            break
    for key in sorted({k for lay in LAYOUTS for k, _, _ in lay.norm_by_config}):  # what a layout's norm reads
        if isinstance(data.get(key), bool):
            out[key] = data[key]
    return out, None


def _config_activation(config: dict[str, Any], layout: Layout) -> str | None:
    for key in ("hidden_act", "activation_function", "hidden_activation", "dense_act_fn"):
        if key in config:
            return CONFIG_ACTIVATIONS.get(config[key])
    proj = config.get("feed_forward_proj")
    if isinstance(proj, str):
        return CONFIG_ACTIVATIONS.get(proj) or CONFIG_ACTIVATIONS.get(proj.removeprefix("gated-"))
    return None


# ---- layers ---------------------------------------------------------------------------------------------


def _block_name(path: Path, directory: Path, prefix: str, taken: set[str]) -> str:
    try:
        rel = str(path.relative_to(directory).with_suffix(""))
    except ValueError:
        rel = path.stem
    base = re.sub(r"[^A-Za-z0-9_]+", "_", f"{rel}_{prefix}").strip("_") or "layer"
    if not base[0].isalpha():
        base = "L_" + base
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _eps_text(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def find_layers(path: Path, names: Sequence[str], activation: str | None, budget: float | None,
                directory: Path | None = None, config: dict[str, Any] | None = None,
                config_problem: str | None = None, taken: set[str] | None = None,
                allow_outside: bool = False, unquotable: list[str] | None = None) -> tuple[list[ScanTask], list[str]]:
    """One task per MLP layer whose tensor names match a layout (the first matching layout wins), and
    the layer groups (prefixes such as ``encoder.layer.3.``) in which none was found. A layer found
    whose prefix (or file name) a spec cannot quote (a ``"``, a backslash, a line break) is not a
    task: its prefix is appended to ``unquotable`` (never dropped silently)."""
    from ..plugins import load

    load()  # an installed plug-in's layouts are matched too (symabsorb/plugins.py)
    unquotable = [] if unquotable is None else unquotable
    directory = directory or path.parent
    config = config or {}
    taken = set() if taken is None else taken
    keys = set(names)
    tasks: list[ScanTask] = []
    used: set[str] = set()
    content: list[str] = []

    def digest() -> str:
        """The file's SHA-256, hashed once and only when a layer is found: the case id is bound to
        the bytes, not to the size and mtime (which a file with other weights can copy)."""
        if not content:
            from ..weights.io import weights_digest

            content.append(weights_digest(path))  # the bytes listed (pinned by scan), when they are
        return content[0]

    model_type = config.get("model_type")
    from ..weights.io import chunk_of

    def stored(name: str) -> str:  # a part of a fused tensor (`….chunk(2)[1]`) is stored as the fused tensor
        chunk = chunk_of(name)
        return chunk.base if chunk is not None else name

    for layout in LAYOUTS:
        if model_type and layout.model_types and model_type not in layout.model_types:
            continue  # config.json names another architecture
        up = stored(layout.up)
        for key in sorted(keys):
            if not key.endswith(up) or key in used:
                continue
            prefix = key[: -len(up)]
            if prefix and not prefix.endswith((".", "_", "/")):
                continue  # `xfc1.weight` is not `fc1.weight`
            if prefix + layout.down not in keys:
                continue
            if layout.gate is not None and layout.gated and prefix + stored(layout.gate) not in keys:
                continue
            if layout.marker is not None and prefix.rsplit("intermediate.", 1)[0] + layout.marker not in keys \
                    and prefix + layout.marker not in keys:
                continue
            task = _task(path, directory, prefix, layout, keys, activation, budget, config, config_problem, taken,
                         digest, allow_outside)
            used.update({key, prefix + layout.down})
            if task is not None:
                tasks.append(task)
            else:
                unquotable.append(prefix)
    groups = {m.group(1) for k in keys if (m := _GROUP.match(k))}
    # a tensor no layout took whose name ends like an up or down projection is a layer group too, whatever the
    # rest of its name (`encoder.stage.3.mlp.up_proj.weight`, `blk-0-W_down`, `x.W_UP `): never dropped silently
    groups |= {m.group(1) for k in keys - used
               if (m := _PROJECTION.match(k)) and not any(k.startswith(g) for g in groups)}
    found = {t.prefix for t in tasks} | set(unquotable)
    missing = sorted(g for g in groups if not any(p.startswith(g) or g.startswith(p) for p in found if p))
    return tasks, missing


#: How to decide a layer no layout names: the spec language names any tensors.
_SPEC_HINT = ("decide it in a spec: `block b { activation: ... weights: \"FILE\" prefix: \"...\" up: \"...\" "
              "down: \"...\" }`")


def group_hint(group: str, keys: set[str] | Sequence[str]) -> str:
    """Why no layout took the layer group ``group`` (a prefix such as ``model.layers.3.``), from the
    layouts' own tensor names: a layout's down projection present without its up (or gate)
    projection names the tensors found beside it instead (a fused ``gate_up_proj``, a renamed one)."""
    members = sorted(k for k in keys if k.startswith(group))
    for layout in LAYOUTS:
        for key in members:
            if not key.endswith(layout.down):
                continue
            prefix = key[: -len(layout.down)]
            lacking = [t for t in (layout.up, layout.gate if layout.gated else None)
                       if t is not None and prefix + t not in members]
            if not lacking:
                continue
            folder = layout.down.rpartition(".")[0].rpartition(".")[0]  # `mlp.down_proj.weight` -> `mlp`
            beside = [k[len(prefix):] for k in members if k != key and k[len(prefix):].startswith(folder)]
            shown = ", ".join(f"`{b[:60]}`" for b in beside[:4]) or "no other tensor"
            return (f"`{layout.down}` is the {layout.name} layout's down projection, but "
                    + " and ".join(f"`{t}`" for t in lacking) + f" {'is' if len(lacking) == 1 else 'are'} not beside "
                    f"it ({shown} {'is' if len(beside) <= 1 else 'are'}); a fused or "
                    "renamed projection: store the layout's tensors, or " + _SPEC_HINT)
    return (f"no layout ({', '.join(lay.name for lay in LAYOUTS)}) names its MLP tensors; " + _SPEC_HINT)


def _task(path: Path, directory: Path, prefix: str, layout: Layout, keys: set[str], activation: str | None,
          budget: float | None, config: dict[str, Any], config_problem: str | None, taken: set[str],
          digest: Callable[[], str], allow_outside: bool = False) -> ScanTask | None:
    assumptions: list[str] = []
    if config_problem:
        assumptions.append(config_problem)
    act = activation
    from_config = _config_activation(config, layout) if activation is None else None
    if act is None:
        act = from_config or layout.activation
    from ..weights.io import chunk_of

    gate_chunk = chunk_of(layout.gate) if layout.gate is not None else None
    gated = (layout.gated or layout.optional_gate) and layout.gate is not None and \
        prefix + (gate_chunk.base if gate_chunk is not None else layout.gate) in keys
    if layout.optional_gate and gated and activation is None and layout.gated_activation is not None:
        act = layout.gated_activation
    for model_prefix, default in layout.model_type_activations:
        if str(config.get("model_type", "")).startswith(model_prefix) and activation is None:
            act = from_config or default
            break
    if activation is None and from_config is None:  # said after every default is applied: the one decided
        assumptions.append(f"activation {act} assumed (the {layout.family.split(' (')[0]} layout's usual one; "
                           "no activation in a config.json beside the weights)")
    norm = layout.norm
    for key, value, placement in layout.norm_by_config:
        if config.get(key) is value:
            norm = placement
            break
    # where the normalisation sits is known when config.json names this architecture; else it is assumed
    model_type = config.get("model_type")
    norm_assumed = norm != "none" and not (model_type and model_type in layout.model_types)
    eps = config.get("eps")
    eps_text = _eps_text(eps) if eps is not None else layout.eps
    if norm != "none" and eps is None:
        assumptions.append(f"normalisation epsilon {layout.eps} assumed (none in a config.json beside the weights)")
    scale = layout.norm_tensor

    def norm_lines(placement: str) -> list[str] | None:
        """The block's normalisation fields for ``placement`` (None: a post-norm without its scale tensor)."""
        if placement == "none":
            return []
        if placement.startswith("post-") and (scale is None or prefix + scale not in keys):
            return None
        out = [f"    norm: {placement}", f"    eps: {eps_text}"]
        if placement.startswith("post-") and scale is not None:
            out.append(f'    ln_gamma: "{scale}"')
        return out

    lines = [f"    activation: {act}", f'    weights: "{_rel(path, directory)}"', f'    prefix: "{prefix}"',
             f'    up: "{layout.up}"', f'    down: "{layout.down}"']
    if gated:
        lines.append(f'    gate: "{layout.gate}"')
    if layout.transpose:
        lines.append("    transpose: true")
    biases = [f'    {field}: "{tensor}"' for field, tensor in (("up_bias", layout.up_bias),
                                                               ("down_bias", layout.down_bias))
              if tensor is not None and prefix + tensor in keys]
    lines += biases
    main = norm_lines(norm)
    if main is None:
        assumptions.append(f"no `{scale}` beside the layer: decided as the bare residual block (no LayerNorm)")
        norm, main, norm_assumed = "none", [], False
    alt_norm, alt = "", None
    if norm_assumed:
        alt_norm = _OTHER_PLACEMENT[norm]
        alt = norm_lines(alt_norm)
        family = layout.family.split(" (")[0]
        assumptions.append(f"normalisation placement {norm} assumed (the {family} layout's usual one; no config.json "
                           "beside the weights names the architecture); "
                           + (f"decided as {alt_norm} too" if alt is not None else
                              f"{alt_norm} not decided (no `{scale}` beside the layer)"))
        if alt is None:
            alt_norm = ""
    if any(not _STRING_OK.match(x) for x in (prefix, _rel(path, directory))):
        return None  # a name the spec language cannot quote: find_layers lists it as unquotable
    name = _block_name(path, directory, prefix, taken)

    def block_text(norm_fields: list[str], fields: list[str] = lines, called: str = name) -> str:
        text = f"block {called} {{\n" + "\n".join(fields + norm_fields) + "\n}\n"
        if gated:  # a gated unit g(W_gate x) ⊙ (W_up x) with the gate g = act
            text = f"gated {called}_unit gate {act}\n" + text.replace(f"    activation: {act}\n",
                                                                       f"    activation: {called}_unit\n", 1)
        return text

    text = block_text(main)
    alt_text = block_text(alt) if alt is not None else ""
    # the paper's question for the same tensors: no biases, no normalisation (only when the layer is not bare)
    bare_text = block_text([], lines[:len(lines) - len(biases)], f"{name}_bare") if biases or main else ""
    root = directory.resolve()
    listed = root / _rel(path, directory)  # the name it is listed under, links not resolved
    sha = digest()
    tid = case_id("scan", str(listed), sha, prefix, layout.name, text + alt_text + bare_text, budget)
    return ScanTask(tid, str(listed), prefix, layout.name, text, name, str(root),
                    act if not gated else f"{act} (gated)", norm, tuple(assumptions), budget, sha256=sha,
                    allow_outside=allow_outside, norm_assumed=norm_assumed, alt_norm=alt_norm, alt_text=alt_text,
                    bare_text=bare_text)


_OTHER_PLACEMENT = {"pre-ln": "post-ln", "post-ln": "pre-ln", "pre-rms": "post-rms", "post-rms": "pre-rms"}


def _escaped(text: str, n: int = 80) -> str:
    """``text`` shown safely on a terminal and in JSON: quotes, backslashes, line breaks, control
    and non-ASCII characters escaped (JSON style), at most ``n`` characters of the name."""
    import json

    return json.dumps(text[:n], ensure_ascii=True)[1:-1]


def _rel(path: Path, directory: Path) -> str:
    """``path`` relative to ``directory`` by name (a link stays the link: a subfolder's
    ``unet/model.safetensors`` is that file, a snapshot's link is named as in the snapshot)."""
    import os

    try:
        return str(path.relative_to(directory))
    except ValueError:
        pass
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(directory))
    return rel if not rel.startswith("..") else path.name


def _decide(task: ScanTask, partial: dict[str, Any] | None = None) -> dict[str, Any]:
    """The layer decided on the bytes that were listed: the file is opened and read once, the SHA-256
    of that buffer must be the one listed, and every read of the decision is served from that same
    buffer (never the name nor the file again: a link swapped, or the file rewritten in place,
    meanwhile changes nothing). ``partial`` receives the layer as used once it is decided, before
    its bare block is (a budget spent on the bare block keeps the layer's own verdict)."""
    import contextlib
    import hashlib
    from dataclasses import replace

    from ..budget import current
    from ..context import changed
    from ..errors import SymabsorbError
    from ..paths import confine_descriptor, open_regular, read_whole
    from ..weights.io import MAX_FILE_BYTES, pinned_weights

    name = Path(task.file)
    shown = _shown_rel(task.file, task.spec_dir)
    outside = changed(budget=replace(current(), allow_outside=True)) if task.allow_outside else contextlib.nullcontext()
    with outside:
        data = _BUFFERS.get(task.file, task.sha256)  # this scan's buffer of the file, listed and hashed
        if data is None:
            with open_regular(name, None, "weights file", max_bytes=MAX_FILE_BYTES) as (fh, _size):
                data = read_whole(fh, name, None, "weights file", MAX_FILE_BYTES)
                digest = hashlib.sha256(data).hexdigest()
                if task.sha256 and digest != task.sha256:
                    raise SymabsorbError(f"`{shown}` changed after it was listed (SHA-256 differs): not decided; "
                                         "scan again")
                if not task.allow_outside:  # the file read, not just the name, lies in the scanned directory
                    confine_descriptor(fh.fileno(), Path(task.spec_dir), shown, "weights file")
            _BUFFERS.keep(task.file, digest, data)
        else:
            digest = task.sha256
        with pinned_weights(name, data, digest):  # every read and hash of the decision: these bytes
            return _decide_pinned(task, {} if partial is None else partial)


class _FileBuffer:
    """The bytes of one weights file, read once and hashed once for all its layers while a scan runs
    in this process (MiniLM's six layers share one 90 MB file: its decisions read it once, not six
    times, and hash it once, not thirty: each layer's read, and twice each for the layer and its
    bare block, when they were loaded).
    At most one file is held (the layers of a file are decided one after another), only between
    :meth:`open` and :meth:`close` (a scan's own), and only under the name and the SHA-256 the first
    decision read and hashed it with, which was the listed one (a file changed after the listing is
    still refused: the listing's own read is not reused). A Dask worker in another process reads for
    itself."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._active = 0
        self._entry: tuple[str, str, bytes] | None = None

    def open(self) -> None:
        with self._lock:
            self._active += 1

    def close(self) -> None:
        with self._lock:
            self._active -= 1
            if not self._active:
                self._entry = None

    def keep(self, file: str, digest: str, data: bytes) -> None:
        with self._lock:
            if self._active:
                self._entry = (file, digest, data)

    def get(self, file: str, digest: str) -> bytes | None:
        """The bytes held for ``file`` with ``digest``; else None, and whatever was held is dropped
        first (a sharded checkpoint's next file is read with the previous one no longer held)."""
        with self._lock:
            entry = self._entry
            if entry is None or not digest or entry[0] != file or entry[1] != digest:
                self._entry = None
                return None
        return entry[2]

    @property
    def held(self) -> str | None:
        """The file held (for tests), or None."""
        entry = self._entry
        return entry[0] if entry is not None else None


_BUFFERS = _FileBuffer()


def _decide_block(text: str, spec_dir: str, theorems: tuple[str, ...] = ()) -> Any:
    from ..answer import Session
    from ..model import resolve_text
    from ..theory.library import library_with

    spec = resolve_text(text, str(Path(spec_dir) / "scan.absorb"))
    return Session(library_with(theorems)).decide_file(spec.blocks[0], spec_dir)


def _decision_fields(decision: Any, theorems: tuple[str, ...] = ()) -> dict[str, Any]:
    """What a record keeps of one decided block: verdict, result, scope, condition, the float search's
    distances and the certificate (re-checked by ``symabsorb verify``); a result of the user's
    (``--theorems``) with the label and source ``prove`` shows, which the built-in library cannot give."""
    from ..theory.library import library_with, shown_source
    from ..weights.certify import certificate_to_dict

    d = decision.derivation
    out: dict[str, Any] = {"verdict": d.verdict.value, "decided_by": d.decided_by, "scope": d.scope,
                           "condition": d.condition_plain}
    if theorems and d.decided_by:
        result = library_with(theorems).results.get(d.decided_by)  # the library that decided (cached per dirs)
        if result is not None and shown_source(result) == "user":
            out["decided_by_label"], out["decided_by_source"] = result.label, shown_source(result)
    search = decision.search
    if search is not None:
        for name in ("distance", "relative_distance"):
            value = getattr(search, name, None)
            if isinstance(value, (int, float)):
                out[name] = float(f"{float(value):.6g}")
    certificate = getattr(decision, "certificate", None)
    if certificate is not None:
        out["certificate"] = certificate_to_dict(certificate)
    return out


def _decide_bare(task: ScanTask) -> dict[str, Any]:
    """The bare block of the paper's question for the layer's tensors (no biases, no normalisation):
    its verdict, result, certificate and CPU seconds; a block that cannot be decided is ``open`` with
    the reason (the layer as used keeps its own verdict)."""
    import time

    start = time.thread_time()
    name = task.block_name + "_bare"
    try:
        out: dict[str, Any] = {**_decision_fields(_decide_block(task.bare_text, task.spec_dir, task.theorems),
                                                  task.theorems),
                               "status": "done"}
    except BudgetExhausted:
        raise  # the command's budget ends the scan, never one bare block
    except Exception as err:  # the bare block failing is said on the row, never fails the layer
        out = {"verdict": "open", "decided_by": None, "status": "error", "error": _layer_error(err)[:300]}
    return {**out, "block": task.bare_text, "block_name": name, "cpu_s": round(time.thread_time() - start, 3)}


def _decide_pinned(task: ScanTask, partial: dict[str, Any]) -> dict[str, Any]:
    decision = _decide_block(task.block_text, task.spec_dir, task.theorems)
    d = decision.derivation
    w = decision.weights
    out: dict[str, Any] = {**_decision_fields(decision, task.theorems),
                           "d": int(w.w_up.shape[1]), "m": int(w.w_up.shape[0]), "gated": w.w_gate is not None,
                           "nondegenerate": bool(getattr(decision.nondegeneracy, "holds", False)),
                           "question": list(d.assumptions[:1]), "assumptions": list(task.assumptions),
                           "block": task.block_text, "block_name": task.block_name, "spec_dir": task.spec_dir,
                           "norm": task.norm}
    if task.norm_assumed:
        out["norm_assumed"] = True
        note = f"normalisation {task.norm} assumed (no config.json names the architecture)"
        if task.alt_text:
            other = _decide_block(task.alt_text, task.spec_dir, task.theorems).derivation
            out["placements"] = {task.norm: d.verdict.value, task.alt_norm: other.verdict.value}
            if other.verdict != d.verdict:  # the two placements answer differently: both are shown
                out["alternative"] = {"norm": task.alt_norm, "verdict": other.verdict.value,
                                      "decided_by": other.decided_by, "condition": other.condition_plain}
                note += f"; as {task.alt_norm}: {other.verdict.value} ({other.decided_by or 'no result'})"
            else:
                note += f"; {task.alt_norm} gives the same verdict"
        out["norm_note"] = note
    partial.update(out)
    if task.bare_text:
        out["bare"] = _decide_bare(task)
    return out


def _layer_error(err: Exception) -> str:
    """Why one layer failed, citing only what exists: the layer's block is spec text generated in
    memory (its errors are positioned in a ``scan.absorb`` no one wrote), so a spec error says what was
    wrong with its expected value and hint, never that position; the record names the weights file
    and the layer."""
    from ..errors import SpecError

    if isinstance(err, SpecError):
        parts = [err.summary, *([f"expected {err.expected}"] if err.expected else []),
                 *([f"hint: {err.hint}"] if err.hint else [])]
        return "; ".join(p.splitlines()[0] for p in parts if p)
    message = str(err).splitlines()[0] if str(err) else type(err).__name__
    return re.sub(r"\S*scan\.absorb(?::\d+){0,2}:? ?", "", message) or type(err).__name__


def scan_task(task: ScanTask) -> dict[str, Any]:
    head = {"id": task.id, "kind": "scan", "label": task.label, "file": task.file, "layer": task.prefix,
            "pattern": task.pattern, "activation": task.activation, "norm": task.norm}
    partial: dict[str, Any] = {}
    try:
        outcome = run_with_cpu_budget(lambda: _decide(task, partial), task.budget)
    except BudgetExhausted:
        raise  # the command's budget (with --in-process) ends the scan, never one layer
    except Exception as err:  # a bad file is one failed layer, not a failed scan
        return {**head, "status": "error", "verdict": "open", "error": _layer_error(err)[:300], "cpu_s": 0.0}
    if outcome.exceeded and partial:  # the layer as used was decided; its bare block ran out of budget
        bare = {"verdict": "open", "decided_by": None, "status": "budget", "block": task.bare_text,
                "block_name": task.block_name + "_bare",
                "error": f"CPU budget of {task.budget:g} s exhausted (the layer as used was decided within it)"}
        return {**head, "status": "done", **partial, "bare": bare, "cpu_s": round(outcome.cpu_seconds, 3)}
    if outcome.exceeded or outcome.value is None:
        return {**head, "status": "budget", "verdict": "open", "error": f"CPU budget of {task.budget:g} s exhausted",
                "cpu_s": round(outcome.cpu_seconds, 3)}
    return {**head, "status": "done", **outcome.value, "cpu_s": round(outcome.cpu_seconds, 3)}


def scan(directory: Path, store: Any, executor: Any, activation: str | None = None, budget: float | None = 300.0,
         progress: Any = None, theorems: tuple[str, ...] = ()) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Decide every layer found under ``directory``; returns the layer records (sorted) and what was
    skipped, with the reason: files that could not be read or held no MLP layer, layer groups in which
    no layout found an MLP, layers that failed or ran out of budget. ``theorems``: the result
    directories of the library in force besides the built-in one (``--theorems``)."""
    from ..dsl.errors import SymabsorbError
    from ..paths import confine_descriptor, open_regular, pinned, read_whole
    from ..weights.io import MAX_FILE_BYTES, read_tensors

    tasks: list[ScanTask] = []
    skipped: list[tuple[str, str]] = []
    taken: set[str] = set()
    configs: dict[Path, tuple[dict[str, Any], str | None]] = {}
    root = directory.resolve()
    listed_any = False
    for path in weight_files(directory):
        listed_any = True
        name = root / _rel(path, directory)  # reported under this name (a snapshot's, not its blob's)
        allow_outside, refused = _confined(name, root)
        if refused is not None:
            skipped.append((str(name), refused))
            continue
        if name.parent not in configs:
            configs[name.parent] = read_config(name.parent, root)
            problem = configs[name.parent][1]
            if problem is not None and problem.startswith(_CONFIG_REFUSED):
                skipped.append((str(name.parent / "config.json"), problem))
        config, problem = configs[name.parent]
        unquotable: list[str] = []
        try:
            # read once: the names are listed, and the file hashed, from this one buffer; the file
            # opened (not just the name checked before) lies in DIR
            with open_regular(name, None, "weights file", max_bytes=MAX_FILE_BYTES) as (fh, _size):
                if not allow_outside:
                    confine_descriptor(fh.fileno(), root, str(name), "weights file")
                data = read_whole(fh, name, None, "weights file", MAX_FILE_BYTES)
            with pinned({name: data}):
                names = list(read_tensors(name, keys=[]))  # the names only: no tensor is inflated here
                found, missing = find_layers(name, names, activation, budget, directory, config, problem, taken,
                                             allow_outside, unquotable)
            data = b""  # listed and hashed: not held while the next file is read, nor while layers are decided
        except BudgetExhausted:
            raise  # the command's budget ends the command, never one file
        except SymabsorbError as err:
            skipped.append((str(name), str(err).splitlines()[0]))
            continue
        for prefix in sorted(set(unquotable)):  # found, but a spec cannot name it: skipped, with why
            skipped.append((str(name), f"layer `{_escaped(prefix)}` not decided: its tensor names or the file's name "
                            "hold a quote, a backslash or a line break, which a spec cannot name; hint: rename the "
                            "tensors (or the file) and scan again"))
        if not found and not missing and not unquotable:
            skipped.append((str(name), "no tensor names matched an MLP layer layout; hint: " + group_hint("", names)))
        for group in missing:  # one line per layer group, with why no layout took it
            skipped.append((str(name), f"tensor group `{_escaped(group)}` matches no MLP layout; hint: "
                            + group_hint(group, names)))
        tasks.extend(found)
    data = b""  # a file whose listing failed after its read is not held either
    if not listed_any:
        skipped.append((str(directory), "no weight files (" + ", ".join(WEIGHT_SUFFIXES) + ") under it"))
    if theorems:  # a user's results decide too: their own cache entries, keyed by the files' bytes
        from ..theory.library import results_digest

        digest = results_digest(theorems)
        tasks = [replace(t, theorems=theorems, id=case_id(t.id, digest)) for t in tasks]
    pending = [(scan_task, t) for t in tasks if t.id not in store]
    done = len(tasks) - len(pending)
    if progress is not None:
        progress("scan", done, len(tasks))

    def record(r: dict[str, Any]) -> None:
        nonlocal done
        store.add(r)
        done += 1
        if progress is not None:
            progress("scan", done, len(tasks))

    import contextlib

    from ..weights.floatsearch import progress_to  # a big layer's long stages, within the scan's progress

    _BUFFERS.open()  # each file read and hashed once by the decisions, for all its layers
    try:
        with progress_to(progress) if progress is not None else contextlib.nullcontext():
            executor.run(pending, record)
    finally:
        _BUFFERS.close()
    ids = {t.id for t in tasks}
    records = sorted((r for r in store.records.values() if r.get("id") in ids), key=lambda r: (r["file"], r["layer"]))
    skipped += [line for r in records if (line := failed_layer(r)) is not None]
    return records, skipped


#: What to do about a layer whose CPU budget ran out.
_BUDGET_HINT = "hint: give each layer more CPU time (--case-budget SECONDS; the API's case_budget)"


def failed_layer(record: dict[str, Any]) -> tuple[str, str] | None:
    """The ``skipped`` line of a layer that was not decided (an error, or its budget spent): the file,
    and the layer with the reason and a hint; None for a decided layer. The reason is said there
    only (the table's row for the layer points to it)."""
    if record.get("status") == "done":
        return None
    why = str(record.get("error") or record.get("status"))
    if record.get("status") == "budget" and "hint:" not in why:
        why += f"; {_BUDGET_HINT}"
    return str(record.get("file")), f"layer `{str(record.get('layer'))[:80]}`: {why}"


def verify_view(records: Sequence[dict[str, Any]], beside: Path | None = None) -> dict[str, Any] | None:
    """The scan as a report ``symabsorb verify`` reads: the layers' blocks as one spec, one query per
    layer with its verdict and certificate (None when no layer was decided). ``verify`` resolves the
    spec beside the report, so the weights are named relative to ``beside`` (the report's directory):
    a report outside the scanned tree names them by absolute path (``verify --allow-outside``)."""
    import os

    done = [r for r in records if r.get("status") == "done" and isinstance(r.get("block"), str)]
    if not done:
        return None
    spec_dir = str(done[0].get("spec_dir"))
    same = [r for r in done if r.get("spec_dir") == spec_dir]
    where = Path(beside).resolve() if beside is not None else Path(spec_dir)

    inside = where == Path(spec_dir) or Path(spec_dir).is_relative_to(where)
    blocks, queries = [], []

    def add(r: dict[str, Any]) -> None:
        block, cert = str(r["block"]), r.get("certificate")
        m = re.search(r'weights: "([^"\\\n]*)"', block)
        if m is not None:
            target = Path(spec_dir) / m.group(1)
            shown = os.path.relpath(target, where) if inside else str(target)
            if _STRING_OK.match(shown):
                block = block.replace(m.group(0), f'weights: "{shown}"')
                if isinstance(cert, dict) and isinstance(cert.get("weights"), dict):
                    cert = {**cert, "weights": {**cert["weights"], "file": shown}}
        blocks.append(block)
        queries.append({"query": f"absorb {r['block_name']}",
                        "derivation": {"verdict": r["verdict"], "decided_by": r.get("decided_by"),
                                       "certificate": cert, "witness": None}})

    for r in same:
        add(r)
        bare = r.get("bare")
        if isinstance(bare, dict) and bare.get("status") == "done" and isinstance(bare.get("block"), str):
            add(bare)  # the bare block of the paper's question, re-checked too
    text = "".join(blocks)
    return {"spec": {"path": str(where / "scan.absorb"), "text": text}, "queries": queries}


def _provide_layouts() -> None:
    """A session's snapshot of the registries names the scan layouts in force (answer/registries.py)."""
    from ..plugins import provide

    provide("layouts", lambda: tuple(lay.name for lay in LAYOUTS))


_provide_layouts()
