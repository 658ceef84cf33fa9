"""LaTeX math made legible as plain text, for the terminal and text renderers.

``W_{\\mathrm{down}}`` -> ``W_down``, ``\\tfrac{1}{c}`` -> ``1/c``, ``\\frac{\\sqrt{2} z}{2}`` ->
``(√2 z)/2``, ``\\begin{bmatrix} I_d \\\\ 0 \\end{bmatrix}`` -> ``[I_d; 0]``. The text is read as
tokens and balanced brace groups, so nested arguments (SymPy's own LaTeX) come out whole; a
control word it does not know is shown by its name. Prose around the math passes through.
"""

from __future__ import annotations

import re

from ..model.spectext import spec_expr, tidy

__all__ = ["plain_expr", "plain_math", "prose", "tidy"]

_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\\$|[{}^_&$~]|[^\\{}^_&$~]+")

_SYMBOLS = {
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡",
    "odot": "⊙", "otimes": "⊗", "cdots": "⋯", "ldots": "…", "dots": "…", "vdots": "⋮", "cdot": "·",
    "times": "×", "top": "ᵀ", "to": "→", "mapsto": "↦", "infty": "∞", "pm": "±", "mp": "∓", "sum": "Σ",
    "prod": "Π", "in": "∈", "notin": "∉", "subseteq": "⊆", "subset": "⊂", "cup": "∪", "cap": "∩",
    "setminus": "∖", "Rightarrow": "⇒", "implies": "⇒", "iff": "⇔", "forall": "∀", "exists": "∃",
    "mid": "|", "|": "‖", "lvert": "|", "rvert": "|", "vert": "|", "lVert": "‖", "rVert": "‖", "Vert": "‖",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "quad": "  ", "qquad": "  ", ",": " ", ";": " ", ":": " ", ">": " ", "!": "", " ": " ",
    "partial": "∂", "nabla": "∇", "circ": "∘", "ast": "*", "star": "⋆", "perp": "⊥", "emptyset": "∅",
    "varnothing": "∅", "ell": "ℓ", "colon": ":", "lbrace": "{", "rbrace": "}", "surd": "√", "Leftrightarrow": "⇔",
    "supseteq": "⊇", "oplus": "⊕", "sim": "∼", "cong": "≅", "div": "÷", "varsigma": "ς", "wedge": "∧", "vee": "∨",
    "land": "∧", "lor": "∨", "neg": "¬", "lnot": "¬", "Leftarrow": "⇐", "Longrightarrow": "⟹", "Longleftarrow": "⟸",
    "Longleftrightarrow": "⟺", "leftrightarrow": "↔", "leftarrow": "←", "ll": "≪", "gg": "≫", "int": "∫",
    "parallel": "∥", "propto": "∝", "simeq": "≃", "ominus": "⊖", "blacksquare": "∎", "angle": "∡", "varrho": "ϱ",
    "varpi": "ϖ",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ",
    "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "Upsilon": "Υ",
}
_FONTS = {"mathrm", "operatorname", "text", "textrm", "textit", "textbf", "texttt", "mathbf", "mathit", "mathsf",
          "mathtt", "boldsymbol", "bm", "mathcal", "mathscr", "mathfrak", "emph", "hat", "bar", "tilde",
          "widehat", "widetilde", "overline", "vec", "dot"}
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ"}
_SIZES = {"left", "right", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "biggl", "biggr",
          "middle", "displaystyle", "textstyle", "limits", "nolimits"}
_FRACTIONS = {"frac", "tfrac", "dfrac", "cfrac"}
#: Control words after which material is not a juxtaposed operand (spacing, relations, operators).
_NOT_OPERANDS = _SIZES | {"quad", "qquad", "le", "leq", "ge", "geq", "ne", "neq", "approx", "equiv", "to",
                          "mapsto", "in", "notin", "subseteq", "subset", "cup", "cap", "setminus", "Rightarrow",
                          "implies", "iff", "pm", "mp", "times", "cdot", "odot", "otimes", "circ", "mid", "end",
                          "colon", "ldots", "cdots", "dots", "vdots"}

def _parse(tokens: list[str], i: int = 0, depth: int = 0) -> tuple[list[object], int]:
    """Tokens to nested lists (one list per brace group); an unbalanced ``}`` closes the group."""
    out: list[object] = []
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok == "{":
            group, i = _parse(tokens, i, depth + 1)
            out.append(group)
        elif tok == "}":
            if depth:
                return out, i
        else:
            out.append(tok)
    return out, i


def _closes_at_end(text: str, start: int) -> bool:
    """Whether the bracket at ``start`` is closed by the last character (``(a)+(b)`` is not)."""
    pairs = {"(": ")", "[": "]"}
    depth = 0
    for k in range(start, len(text)):
        if text[k] in pairs:
            depth += 1
        elif text[k] in pairs.values():
            depth -= 1
            if depth == 0:
                return k == len(text) - 1
    return False


def _atomic(text: str) -> bool:
    """Needs no brackets as an operand: a name, a number, a bracketed whole, a call ``erf(...)``."""
    if len(text) <= 1 or re.fullmatch(r"[\w.]+", text):
        return True
    call = re.match(r"[\w√]*(?=[(\[])", text)
    return call is not None and _closes_at_end(text, call.end())


def _wrap(text: str) -> str:
    text = text.strip()
    return text if _atomic(text) else f"({text})"


class _Renderer:
    def __init__(self, items: list[object]) -> None:
        self.items = items
        self.i = 0

    def _next(self) -> object | None:
        while self.i < len(self.items) and isinstance(self.items[self.i], str) and not str(self.items[self.i]).strip():
            self.i += 1
        if self.i >= len(self.items):
            return None
        item = self.items[self.i]
        self.i += 1
        return item

    def argument(self) -> str:
        """The next argument: a brace group, one control word or one character of a text run."""
        item = self._next()
        if item is None:
            return ""
        if isinstance(item, list):
            return _render(item)
        text = str(item)
        if text.startswith("\\"):
            return self.control(text[1:])
        rest = text.lstrip()[1:]
        if rest:  # `\tfrac12`: one character is the argument, the rest stays for later
            self.i -= 1
            self.items[self.i] = rest
        return text.lstrip()[:1]

    def root_index(self) -> str | None:
        """The ``[n]`` of ``\\sqrt[n]{x}``, taken off the items (None when there is none)."""
        m = self._take(r"\s*\[([^\]]*)\]")
        return None if m is None else m.group(1).strip()

    def bare_word(self) -> str | None:
        """A run of letters and digits right after ``_`` or ``^`` (no brace group, no space), taken whole."""
        m = self._take(r"[A-Za-z0-9]+")
        return None if m is None else m.group(0)

    def _take(self, pattern: str) -> re.Match[str] | None:
        """The match of ``pattern`` at the start of the current text item, taken off the items."""
        if self.i >= len(self.items) or not isinstance(self.items[self.i], str):
            return None
        m = re.match(pattern, str(self.items[self.i]))
        if m is None:
            return None
        rest = str(self.items[self.i])[m.end():]
        if rest:
            self.items[self.i] = rest
        else:
            self.i += 1
        return m

    def followed_by_operand(self, brackets: str = "([") -> bool:
        """Whether juxtaposed material follows (a product: ``\\tfrac12 x``, ``W_{up}x``)."""
        if self.i >= len(self.items):
            return False
        item = self.items[self.i]
        if isinstance(item, list):
            return True
        text = str(item)
        if text.startswith("\\"):
            name = text[1:]
            return name.isalpha() and name not in _NOT_OPERANDS
        return bool(text) and (text[0].isalnum() or text[0] in brackets)

    def control(self, name: str) -> str:
        if name in _FRACTIONS:
            top, bottom = self.argument(), self.argument()
            out = f"{_wrap(top)}/{_wrap(bottom)}"
            return f"({out})" if self.followed_by_operand() else out
        if name == "sqrt":
            index = self.root_index()
            radicand = _wrap(self.argument())
            if index is None or index == "2":
                return "√" + radicand
            return {"3": "∛", "4": "∜"}[index] + radicand if index in ("3", "4") else f"{radicand}^(1/{index})"
        if name == "operatorname":  # \operatorname{rank}A -> rank A
            word = self.argument()
            after = self.items[self.i] if self.i < len(self.items) else ""
            return word + " " if isinstance(after, str) and after[:1].isalnum() else word
        if name in _FONTS:
            return self.argument()
        if name == "mathbb":
            letter = self.argument()
            return _BLACKBOARD.get(letter, letter)
        if name in _SIZES:
            return ""
        if name == "begin":
            return self.environment()
        if name == "end":
            self.argument()
            return ""
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        if len(name) == 1 and not name.isalpha():
            return "; " if name == "\\" else name  # \{ \} \% \_ \& \# \$ and the line break
        return name  # \min, \log, \erf ... and anything unknown: its name

    def environment(self) -> str:
        name = self.argument()
        rows: list[list[str]] = [[""]]
        while self.i < len(self.items):
            item = self.items[self.i]
            self.i += 1
            if item == "\\end":
                self.argument()
                break
            if item == "\\\\":
                rows.append([""])
            elif item == "&":
                rows[-1].append("")
            else:
                self.i -= 1
                rows[-1][-1] += self.one()
        cells = [[c.strip() for c in row] for row in rows if any(c.strip() for c in row)]
        body = "; ".join(", ".join(row) for row in cells)
        # `matrix` takes its brackets from \left[ ... \right]; the others bring their own
        brackets = {"bmatrix": "[]", "pmatrix": "()", "vmatrix": "||", "Vmatrix": "‖‖", "Bmatrix": "{}",
                    "cases": "{}"}.get(name)
        return brackets[0] + body + brackets[1] if brackets else body

    def one(self) -> str:
        item = self.items[self.i]
        self.i += 1
        if isinstance(item, list):
            return _render(item)
        text = str(item)
        if text.startswith("\\"):
            return self.control(text[1:])
        if text in ("^", "_"):
            word = self.bare_word()
            if word is not None:  # plain text such as `W_down`, `x^2`: kept as written
                return text + word
            arg = self.argument()
            if text == "^":
                return arg if arg == "ᵀ" else "^" + _wrap(arg)
            arg = "_" + _wrap(arg)
            return arg + " " if self.followed_by_operand("(") else arg  # W_{up}x -> W_up x; W_{up}[S,:]
        if text in ("$", "&", "~"):
            return "" if text == "$" else " "
        return text

    def render(self) -> str:
        out = []
        while self.i < len(self.items):
            out.append(self.one())
        return "".join(out)


def _render(items: list[object]) -> str:
    return _Renderer(list(items)).render()


def plain_math(text: str) -> str:
    """``text`` with its LaTeX turned into readable plain text (see the module's docstring)."""
    items, _ = _parse(_TOKEN.findall(text))
    out = _render(items)
    out = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", re.sub(r"(?<=\S) {2,}(?=\S)", " ", out)))
    # SymPy writes a leading minus as `- \frac{7}{5}`: `z = -7/5`, `(-1, 2)`, not `z = - 7/5`
    return re.sub(r"(^|[=(\[,;{]\s*|[≤≥<>≠]\s*)- (?=[\w(√∛∜])", r"\1-", out)


def prose(text: str) -> str:
    """A fact step's plain text with SymPy's ``**`` written ``^`` (``σ(z) = z^2``), as the spec writes it."""
    return text.replace("**", "^")


#: a SymPy expression in the spec's own syntax (the model layer's printer, one for every layer)
plain_expr = spec_expr
