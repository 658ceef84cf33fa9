"""Escaping: one function per output format for every string that comes from the user.

Names, file names, tensor keys, reasons and step texts can carry anything a spec, a weights file
or a ``--theorems`` directory puts in them. Every renderer passes them through these functions:

* LaTeX: :func:`latex_text` (every special character, ``^`` included, so TeX's ``^^5c`` cannot make
  a backslash), :func:`latex_math` (math is kept only when every control sequence is on a list of
  harmless math macros, braces balance and no ``^^`` occurs; otherwise it is shown as text);
* HTML: :func:`html_text` (``& < > " '``);
* Markdown with HTML disabled: :func:`markdown_text`, :func:`markdown_code`, :func:`markdown_math`,
  :func:`markdown_fence` (no raw HTML can pass: ``<`` never reaches the output outside a code span);
* terminals: :func:`terminal_text` (control characters, hence ANSI escape sequences, C1 controls
  such as U+009B and bidirectional overrides, removed);
* graphs: :func:`dot_string` (the inside of a DOT ``"..."`` string: a quote can never close the
  attribute, so no ``image=`` or ``URL=`` can follow) and :func:`mermaid_text` (a Mermaid
  ``["..."]`` label: quotes, ``<``, ``>``, ``&``, ``#`` and backticks as Mermaid entity codes).
"""

from __future__ import annotations

import html
import re

__all__ = [
    "SAFE_MATH_MACROS",
    "dot_string",
    "html_math",
    "html_text",
    "is_safe_math",
    "json_safe",
    "latex_math",
    "latex_text",
    "markdown_code",
    "markdown_fence",
    "markdown_math",
    "markdown_text",
    "mermaid_text",
    "terminal_text",
]

# ---- LaTeX -----------------------------------------------------------------------------------------

_UNICODE = {
    "σ": r"$\sigma$", "≥": r"$\ge$", "≤": r"$\le$", "≠": r"$\ne$", "⊗": r"$\otimes$", "⊙": r"$\odot$",
    "∞": r"$\infty$", "−": "-", "—": "---", "–": "--", "…": r"\dots{}", "·": r"$\cdot$", "→": r"$\to$",
    "±": r"$\pm$", "⋯": r"$\cdots$", "ᵀ": r"$^\top$", "≡": r"$\equiv$", "∈": r"$\in$", "‖": r"$\|$",
    "²": r"$^2$", "×": r"$\times$", "’": "'", "“": "``", "”": "''", "é": r"\'e", "ä": r'\"a', "ö": r'\"o',
    "ü": r'\"u', "π": r"$\pi$", "Φ": r"$\Phi$", "≈": r"$\approx$",
}
_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%", "&": r"\&",
            "_": r"\_", "^": r"\^{}", "~": r"\~{}", "<": r"$<$", ">": r"$>$", "|": r"$|$", "\n": " ",
            "\r": " ", "\t": " "}


def latex_text(text: str) -> str:
    """Plain text for LaTeX: special characters escaped, Unicode turned into macros, anything else
    outside printable ASCII replaced by ``?`` (no control character reaches TeX)."""
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


#: Control words math may use: what SymPy's LaTeX printer and symabsorb's own steps write. Anything
#: else (``\input``, ``\write``, ``\catcode``, ``\def``, ``\csname``, ``\openin``...) makes the piece text.
SAFE_MATH_MACROS = frozenset("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho
varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi
Omega infty partial nabla ell hbar imath jmath
frac dfrac tfrac sqrt left right middle big Big bigg Bigg bigl bigr Bigl Bigr cdot cdots ldots dots vdots ddots
times div pm mp circ bullet otimes oplus odot ast star
le leq ge geq ne neq lt gt approx equiv sim simeq cong propto to mapsto rightarrow leftarrow Rightarrow
Leftarrow leftrightarrow Leftrightarrow iff implies in notin ni subset subseteq supset supseteq cup cap
setminus emptyset varnothing forall exists neg lnot land lor wedge vee mid nmid parallel perp top bot
langle rangle lfloor rfloor lceil rceil lvert rvert lVert rVert vert Vert
sum prod int oint lim limsup liminf sup inf max min arg det dim ker deg gcd exp log ln sin cos tan cot sec csc
sinh cosh tanh coth sech csch arcsin arccos arctan operatorname mathrm mathbf mathit mathsf mathtt mathcal
mathbb mathfrak boldsymbol text textrm textit textbf textnormal mbox hat bar tilde vec dot ddot overline
underline widehat widetilde overbrace underbrace prime begin end quad qquad displaystyle textstyle
scriptstyle limits nolimits substack atop binom tbinom dbinom choose pmod bmod
""".split())
_SAFE_ENVIRONMENTS = frozenset({"cases", "matrix", "pmatrix", "bmatrix", "vmatrix", "Bmatrix", "smallmatrix",
                                "array", "aligned"})
_CONTROL = re.compile(r"\\([A-Za-z]+|.)", re.S)
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{([^{}]*)\}")


def is_safe_math(latex: str) -> bool:
    """Whether ``latex`` is math that can do nothing but typeset: every control word on
    :data:`SAFE_MATH_MACROS`, environments among matrices and cases, braces balanced, no ``^^``
    (TeX's character-code notation), no ``$``, ``%``, ``#`` (but the escaped characters ``\\#`` and
    ``\\%``, which only typeset them) or control characters."""
    bare = _CONTROL.sub(lambda m: "" if m.group(1) in ("#", "%") else m.group(0), latex)
    if "^^" in latex or any(c in bare for c in "$%#") or any(ord(c) < 32 and c not in "\n\t" for c in latex):
        return False
    depth = 0
    for ch in latex.replace("\\{", "").replace("\\}", ""):
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    if depth:
        return False
    for m in _CONTROL.finditer(latex):
        word = m.group(1)
        if word.isalpha():
            if word not in SAFE_MATH_MACROS:
                return False
        elif word not in ",;:! {}|\\&_^-#%":
            return False
    environments = _ENVIRONMENT.findall(latex)
    if latex.count("\\begin") + latex.count("\\end") != len(environments):
        return False  # a \begin or \end whose argument is not a plain {name}
    return all(env.strip() in _SAFE_ENVIRONMENTS for env in environments)


def latex_math(latex: str) -> str:
    """``$latex$`` when it is safe math (:func:`is_safe_math`), else the source shown as typewriter text."""
    if is_safe_math(latex):
        return f"${latex}$"
    return f"\\texttt{{{latex_text(latex)}}}"


# ---- HTML -----------------------------------------------------------------------------------------


def html_text(text: str) -> str:
    """Text and attribute values for HTML: ``& < > " '`` escaped, control characters dropped."""
    return html.escape(_printable(text), quote=True)


_MATHML_TAGS = frozenset("""math semantics annotation mrow mi mo mn ms mtext mspace msup msub msubsup mfrac msqrt
mroot mtable mtr mtd mstyle mover munder munderover menclose mpadded mphantom mfenced merror""".split())
_MATHML_TOKEN = re.compile(r'<(/?)([A-Za-z]+)((?:\s+[A-Za-z:-]+="[^"<>&]*")*)\s*(/?)>'
                           r"|&(?:#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z]+);|[^<>&]+")


def _is_clean_mathml(markup: str) -> bool:
    """Whether ``markup`` is only MathML elements, quoted attributes and entity-escaped text."""
    pos = 0
    for m in _MATHML_TOKEN.finditer(markup):
        if m.start() != pos:
            return False
        if m.group(2) is not None and m.group(2).lower() not in _MATHML_TAGS:
            return False
        pos = m.end()
    return pos == len(markup)


_NUMERIC_REF = re.compile(r"&#x([0-9A-Fa-f]{1,6});")
#: ``\mathrm{down}`` comes out of latex2mathml one ``<mi>`` per letter: one ``<mi>`` for the word.
_UPRIGHT_RUN = re.compile(r'(?:<mi mathvariant="normal">[A-Za-z]</mi>){2,}')
_UPRIGHT_LETTER = re.compile(r'<mi mathvariant="normal">([A-Za-z])</mi>')


def _plain_char(m: re.Match[str]) -> str:
    """A numeric character reference as the character itself (MathML is a third shorter), except
    the characters HTML gives a meaning to and anything not printable."""
    code = int(m.group(1), 16)
    ch = chr(code) if code <= 0x10FFFF else ""
    if not ch or ch in "<>&\"'" or _CONTROL_CHARS.match(ch) or not ch.isprintable():
        return m.group()
    return ch


def html_math(latex: str) -> str:
    """Math for HTML: MathML from ``latex2mathml`` when ``latex`` is safe math and the result is
    clean MathML (the converter passes ``\\text{<img ...>}`` through raw), else escaped source."""
    if is_safe_math(latex):
        try:
            from latex2mathml.converter import convert

            markup = str(convert(latex))
        except Exception:  # not installed, or its own error on unusual input: show the source instead
            markup = ""
        if markup and _is_clean_mathml(markup):
            markup = _NUMERIC_REF.sub(_plain_char, markup).replace(' display="inline"', "")
            return _UPRIGHT_RUN.sub(lambda m: '<mi mathvariant="normal">' + "".join(_UPRIGHT_LETTER.findall(m.group()))
                                    + "</mi>", markup)
    return f'<code class="tex">{html_text(latex)}</code>'


# ---- Markdown (HTML disabled) ---------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|$#!])")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
_MD_AUTOLINK = re.compile(r"://|(?i:www)\.|@")
_MD_AUTOLINK_REF = {"://": "&#58;//", "@": "&#64;"}


def markdown_text(text: str) -> str:
    """Running text for Markdown: no HTML (``<``, ``&`` as entities), no emphasis, link, code, math
    or table syntax from the user (backslash-escaped), no autolink (``://``, ``www.``, ``@`` as
    character references), one line."""
    one_line = _printable(text).replace("\n", " ").replace("\r", " ")
    escaped = _MD_SPECIAL.sub(lambda m: _MD_ENTITIES.get(m.group(1), "\\" + m.group(1)), one_line)
    # GFM's autolink extension links bare `scheme://`, `www.` and e-mail addresses while it parses the
    # source: written as character references, they read the same and never trigger it
    return _MD_AUTOLINK.sub(lambda m: _MD_AUTOLINK_REF.get(m.group(), m.group()[:3] + "&#46;"), escaped)


def markdown_code(text: str) -> str:
    """An inline code span holding ``text`` verbatim (a backtick fence longer than any run inside),
    where Markdown interprets neither HTML nor emphasis."""
    one_line = _printable(text).replace("\n", " ").replace("\r", " ").replace("|", "¦")
    longest = max((len(run) for run in re.findall(r"`+", one_line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") or not one_line.strip() else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


#: What makes the inside of ``$...$`` a link or an image for a Markdown renderer without math
#: support (CommonMark reads ``$`` as a plain character): ``](`` or ``][`` (inline or reference
#: links and images), ``![``, and what GFM's autolink extension links (``://``, ``www.``, ``@``).
_MD_LINKISH = re.compile(r"\]\s*[(\[]|!\s*\[|://|www\.|@|\\\s*$")


def markdown_math(latex: str) -> str:
    """``$latex$`` for safe math (``<`` and ``>`` written ``\\lt`` and ``\\gt``) that no Markdown
    renderer can read as a link, an image or an autolink; else a code span (inert everywhere)."""
    if is_safe_math(latex) and "`" not in latex and "\n" not in latex and not _MD_LINKISH.search(latex):
        return "$" + latex.replace("<", "\\lt ").replace(">", "\\gt ") + "$"
    return markdown_code(latex)


def markdown_fence(text: str, info: str = "") -> list[str]:
    """A fenced code block holding ``text`` verbatim: the fence is longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, _printable(text, keep_newlines=True).rstrip("\n"), fence]


# ---- terminals ------------------------------------------------------------------------------------


def terminal_text(text: str) -> str:
    """Text for a terminal: control characters (ESC and so ANSI sequences, BEL, backspace) removed."""
    return _printable(text, keep_newlines=True)


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _printable(text: str, keep_newlines: bool = False) -> str:
    out = _CONTROL_CHARS.sub("", text)
    return out if keep_newlines else out.replace("\t", " ")


def json_safe(text: str) -> str:
    """JSON text with the characters a terminal or an editor acts on (DEL, C1 controls such as U+009B,
    bidi overrides, line separators) written as ``\\uXXXX`` escapes: the same JSON value, but one that
    ``cat`` cannot turn into a terminal command or a reordered line. ``json.dumps`` escapes only
    U+0000-U+001F when ``ensure_ascii=False``."""
    return _CONTROL_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# ---- graphs -----------------------------------------------------------------------------------------


def dot_string(text: str) -> str:
    """The inside of a DOT double-quoted string: backslashes and quotes escaped (so the string
    cannot end early and no attribute can follow), one line, no control characters."""
    one_line = _printable(text).replace("\n", " ").replace("\r", " ")
    return one_line.replace("\\", "\\\\").replace('"', '\\"')


_MERMAID_ENTITIES = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "#": "#35;", "`": "#96;",
                     "[": "#91;", "]": "#93;", "|": "#124;", "{": "#123;", "}": "#125;"}


def mermaid_text(text: str) -> str:
    """A Mermaid node label (inside ``["..."]``): every character that could end the label, start
    markup or an entity written as a Mermaid entity code; one line, no control characters."""
    one_line = _printable(text).replace("\n", " ").replace("\r", " ")
    return "".join(_MERMAID_ENTITIES.get(ch, ch) for ch in one_line)
