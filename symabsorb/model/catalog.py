"""The built-in activations: exact definitions in the spec language, and where each is used.

Definitions are written in ``.absorb`` syntax and go through the same parser and whitelist as
user text, so the catalog cannot define anything a user could not. A user declaration with the
same name shadows the built-in one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOG", "CatalogEntry", "catalog_source"]


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    definition: str  # an `activation ...` or `gated ...` statement
    used_in: str
    torch: str | None = None  # the torch.nn.functional counterpart, for the cross-check
    gated: bool = False
    aliases: tuple[str, ...] = ()


def _act(name: str, params: str, body: str, used_in: str, torch: str | None = None,
         aliases: tuple[str, ...] = ()) -> CatalogEntry:
    head = f"{name}(z; {params})" if params else f"{name}(z)"
    return CatalogEntry(name, f"activation {head} = {body}", used_in, torch, False, aliases)


def _gated(name: str, gate: str, used_in: str) -> CatalogEntry:
    return CatalogEntry(name, f"gated {name} gate {gate}", used_in, None, True)


CATALOG: dict[str, CatalogEntry] = {
    e.name: e
    for e in (
        _act("identity", "", "z", "linear layers, bilinear units"),
        _act("relu", "", "max(0, z)", "original Transformer, ResNet", "relu"),
        _act("leaky_relu", "alpha = 1/100", "if z >= 0 then z else alpha*z", "GANs, YOLO", "leaky_relu"),
        _act("prelu", "a = 1/4", "if z >= 0 then z else a*z", "PReLU nets (He et al. 2015)", "prelu"),
        _act("relu6", "", "min(max(0, z), 6)", "MobileNet", "relu6"),
        _act("relu2", "", "max(0, z)^2", "Primer (ReLU squared)", None, ("relu_squared",)),
        _act("gelu", "", "z*Phi(z)", "BERT, GPT-2, ViT, ConvNeXt", "gelu"),
        _act("gelu_tanh", "", "z/2*(1 + tanh(sqrt(2/pi)*(z + 0.044715*z^3)))",
             "GPT-2 (tanh approximation of GELU)", "gelu_tanh"),
        _act("silu", "", "z*sigmoid(z)", "EfficientNet, LLaMA gate (as SwiGLU)", "silu"),
        _act("swish", "beta = 1", "z*sigmoid(beta*z)", "Swish (Ramachandran et al. 2017)"),
        _act("quickgelu", "", "z*sigmoid(1.702*z)", "CLIP"),
        _act("elu", "alpha = 1", "if z > 0 then z else alpha*(exp(z) - 1)", "ELU nets", "elu"),
        _act("selu", "", "1.0507009873554804934193349852946*(if z > 0 then z else "
             "1.6732632423543772848170429916717*(exp(z) - 1))", "self-normalizing nets", "selu"),
        _act("celu", "alpha = 1", "max(0, z) + min(0, alpha*(exp(z/alpha) - 1))", "CELU nets", "celu"),
        _act("softplus", "", "log(1 + exp(z))", "smooth ReLU, variance heads", "softplus"),
        _act("mish", "", "z*tanh(softplus(z))", "YOLOv4", "mish"),
        _act("hardswish", "", "z*min(max(z + 3, 0), 6)/6", "MobileNetV3", "hardswish"),
        _act("hardsigmoid", "", "min(max(z + 3, 0), 6)/6", "MobileNetV3", "hardsigmoid"),
        _act("hardtanh", "", "min(max(z, -1), 1)", "early RNNs, quantized nets", "hardtanh"),
        _act("tanh", "", "tanh(z)", "RNNs, LSTMs", "tanh"),
        _act("sigmoid", "", "sigmoid(z)", "gates, logistic units", "sigmoid"),
        _act("softsign", "", "z/(1 + abs(z))", "softsign nets", "softsign"),
        _act("tanhshrink", "", "z - tanh(z)", "sparse coding", "tanhshrink"),
        _act("softshrink", "lambda = 1/2", "if z > lambda then z - lambda else if z < -lambda "
             "then z + lambda else 0", "sparse coding (ISTA)", "softshrink"),
        _act("hardshrink", "lambda = 1/2", "if z > lambda then z else if z < -lambda then z else 0",
             "sparse coding", "hardshrink"),
        _act("logsigmoid", "", "-softplus(-z)", "log-likelihood heads", "logsigmoid"),
        _gated("swiglu", "silu", "LLaMA, DeepSeek, PaLM"),
        _gated("geglu", "gelu", "Gemma, T5 v1.1"),
        _gated("reglu", "relu", "Shazeer 2020 (GLU variants)"),
        _gated("glu", "sigmoid", "Dauphin et al. 2017"),
        _gated("bilinear", "identity", "bilinear layers (Shazeer 2020)"),
    )
}


def catalog_source() -> str:
    """The whole catalog as one ``.absorb`` text, in declaration order."""
    return "\n".join(e.definition for e in CATALOG.values()) + "\n"
