"""Text to typed syntax: the Lark LALR parser, its transformer, and friendly syntax errors."""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..budget import Limits, current
from . import syntax as s
from .errors import Span, SpecError, SpecLimitError, SpecSyntaxError, did_you_mean

__all__ = ["FIELD_NAMES", "KEYWORDS", "get_parser", "grammar_text", "parse_expression", "parse_text"]

FIELD_NAMES = ("activation", "dim", "width", "skip", "W_up", "W_down", "W_gate", "weights",
               "prefix", "up", "down", "gate", "transpose")
STATEMENT_KEYWORDS = ("import", "activation", "gated", "block", "stack", "absorb", "classify",
                      "series", "parity", "facts", "space")
SPACE_FIELDS = ("primitives", "constants", "operators", "size", "family", "range", "grid")
KEYWORDS = (*STATEMENT_KEYWORDS, "gate", "order", "if", "then", "else", "and", "or")

# What each terminal means to a person (never show `__ANON_3` or `RBRACE`).
_TERMINAL_WORDS = {
    "NAME": "a name", "INT": "an integer", "DECIMAL": "a number", "STRING": 'a quoted "string"',
    "BOOL": "`true` or `false`", "CMPOP": "a comparison (`<`, `<=`, `>`, `>=`)", "CARET": "`^`",
    "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`", "LBRACE": "`{`", "RBRACE": "`}`",
    "COMMA": "`,`", "SEMI": "`;`", "COLON": "`:`", "EQUAL": "`=`", "PLUS": "`+`", "MINUS": "`-`",
    "STAR": "`*`", "SLASH": "`/`", "$END": "the end of the file",
}
_EXPR_START = {"NAME", "INT", "DECIMAL", "LPAR", "MINUS", "PLUS", "IF"}


def grammar_text() -> str:
    """The grammar, read from the installed package."""
    return resources.files("symabsorb.grammar").joinpath("absorb.lark").read_text(encoding="utf-8")


_PARSER_OPTIONS: dict[str, Any] = {"parser": "lalr", "lexer": "contextual", "propagate_positions": False,
                                   "maybe_placeholders": True, "start": ["start", "expr", "act_ref"]}


@functools.cache
def grammar_parser() -> Lark:
    """A parser built from the grammar text, never from the cache: it keeps the grammar object
    (``.grammar``, rules and terminals) that tools such as ``hypothesis.extra.lark`` read; a parser
    loaded from saved tables has only what parsing needs."""
    return Lark(grammar_text(), **_PARSER_OPTIONS)


@functools.cache
def get_parser() -> Lark:
    """The LALR parser; its tables are kept in the user's cache directory (keyed by the grammar,
    the options and Lark's version), which saves most of the build on later runs."""
    import hashlib
    import io

    import lark

    from ..userdirs import cache_dir, cache_enabled, write_atomically

    text = grammar_text()
    if not cache_enabled():
        return Lark(text, **_PARSER_OPTIONS)
    key = hashlib.sha256(f"{lark.__version__}|{sorted(_PARSER_OPTIONS.items())}|{text}".encode()).hexdigest()[:24]
    path = cache_dir() / f"parser-{key}.lark"
    try:
        with path.open("rb") as fh:
            return Lark.load(fh)
    except Exception:  # missing, damaged or from another Lark: rebuild
        pass
    parser = Lark(text, **_PARSER_OPTIONS)
    buffer = io.BytesIO()
    parser.save(buffer)
    write_atomically(path, buffer.getvalue())
    return parser


def _describe(terminal: str) -> str:
    if terminal in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[terminal]
    return f"`{terminal.lower()}`" if terminal.isupper() else f"`{terminal}`"


def _describe_expected(expected: set[str]) -> str:
    expected = {t for t in expected if not t.startswith("__")} or set(expected)
    words: list[str] = []
    if _EXPR_START & expected and "NAME" in expected and "INT" in expected:
        words.append("an expression")
        expected = expected - _EXPR_START
    if set(t.lower() for t in expected) >= set(STATEMENT_KEYWORDS) - {"import"}:
        words.append("a statement (`activation`, `gated`, `block`, `stack`, `import` or a query)")
        expected = {t for t in expected if t.lower() not in STATEMENT_KEYWORDS and t != "WIDTH"}  # `width NAME`
    field_terms = {f.upper() for f in FIELD_NAMES}
    if len(field_terms & expected) >= 6:
        words.append("a block field (`activation:`, `dim:`, `width:`, `skip:`, `W_up:`, ...)")
        expected = expected - field_terms
    words.extend(sorted(_describe(t) for t in expected))
    if len(words) > 10:
        words = [*words[:10], "..."]
    return ", ".join(words[:-1]) + (" or " if len(words) > 1 else "") + words[-1] if words else "nothing"


def _acceptable(err: UnexpectedToken) -> set[str]:
    """The terminals the parser would really accept here. LALR state merging makes
    ``err.expected`` too broad (it lists every follower of an expression), so ask the
    interactive parser, which tries each terminal."""
    parser = getattr(err, "interactive_parser", None)
    if parser is not None:
        try:
            return {str(t) for t in parser.accepts()}
        except Exception:
            pass
    return {str(t) for t in err.expected}


def _token_words(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    return f"`{tok.value}`"


def _syntax_error(err: UnexpectedInput, text: str, file: str) -> SpecSyntaxError:
    lines = text.splitlines() or [""]
    hint: str | None = None
    if isinstance(err, UnexpectedCharacters):
        line, col = err.line, err.column
        pos = err.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        span = Span(file, line, col, line, col + 1)
        found = f"`{ch}`"
        expected = "a name, a number, an operator (`+ - * / ^`), a bracket or a keyword"
        if ch == '"':
            hint = "strings are written on one line between double quotes"
        elif ch in "%&|!=@$~'":
            hint = "operators are `+ - * / ^`; comparisons `< <= > >=` and `and`, `or` inside `if`"
        return SpecSyntaxError(f"unexpected character {found}", span, found, expected, hint)
    if isinstance(err, UnexpectedEOF):
        line = len(lines)
        col = len(lines[-1]) + 1
        span = Span(file, line, col, line, col)
        exp = {str(t) for t in err.expected}
        if "RBRACE" in exp:
            hint = "a block ends with `}`"
        elif "RPAR" in exp:
            hint = "a parenthesis was opened and not closed"
        elif "RSQB" in exp:
            hint = "a matrix literal ends with `]`"
        return SpecSyntaxError("unexpected end of file", span, "the end of the file",
                               _describe_expected(exp), hint)
    assert isinstance(err, UnexpectedToken)
    tok = err.token
    exp = _acceptable(err)
    if tok.type == "$END":
        line = len(lines)
        col = len(lines[-1]) + 1
        span = Span(file, line, col, line, col)
    else:
        end_line = tok.end_line or tok.line or 1
        end_col = tok.end_column or (tok.column or 1) + 1
        span = Span(file, tok.line or 1, tok.column or 1, end_line, end_col)
    found = _token_words(tok)
    value = str(tok.value)
    if tok.type == "$END":
        if "RBRACE" in exp:
            hint = "a block ends with `}`"
        elif "RPAR" in exp:
            hint = "a parenthesis was opened and not closed"
        elif "RSQB" in exp:
            hint = "a matrix literal ends with `]`"
    elif "RBRACE" in exp and len(exp & {f.upper() for f in FIELD_NAMES}) >= 6:
        hint = did_you_mean(value, FIELD_NAMES) or (
            "block fields are " + ", ".join(f"`{f}:`" for f in FIELD_NAMES[:8]) + ", ...")
        if tok.type in ("STATEMENT", "BLOCK", "STACK", "ABSORB") or value in STATEMENT_KEYWORDS:
            hint = "the block above is missing its closing `}`"
    elif tok.type == "NAME" and {"ACTIVATION", "BLOCK"} <= exp:
        hint = did_you_mean(value, STATEMENT_KEYWORDS) or "statements start with a keyword such as `activation` or `block`"
    elif tok.type == "EQUAL" and "CMPOP" in exp:
        hint = "comparisons are `<`, `<=`, `>`, `>=`"
    elif "RPAR" in exp and tok.type in ("NAME", "INT", "DECIMAL"):
        hint = "arguments are separated by `,`"
    elif "COLON" in exp:
        hint = "a block field is written `name: value`"
    elif "THEN" in exp:
        hint = "write `if CONDITION then A else B`"
    elif "ELSE" in exp:
        hint = "every `if ... then A` needs an `else B`"
    elif "EQUAL" in exp and tok.type == "CARET":
        hint = "write `stack NAME = BLOCK ^ L`"
    return SpecSyntaxError(f"unexpected {found}", span, found, _describe_expected(exp), hint)


def _edge(file: str, children: Any, end: int) -> Span | None:
    """The span of the first (``end=0``) or last (``end=-1``) positioned item among ``children``."""
    items = list(children) if end == 0 else list(reversed(list(children)))
    for item in items:
        if isinstance(item, Token):
            if item.line is not None:
                return _tspan(file, item)
        elif isinstance(item, (tuple, list)):
            found = _edge(file, item, end)
            if found is not None:
                return found
        elif getattr(item, "span", None) is not None:
            return item.span  # type: ignore[no-any-return]
    return None


def _join(file: str, first: Any, last: Any) -> Span | None:
    """The span from the start of ``first`` to the end of ``last`` (tokens or syntax nodes)."""
    a = _tspan(file, first) if isinstance(first, Token) else first.span
    b = _tspan(file, last) if isinstance(last, Token) else last.span
    if a is None or b is None:
        return a or b
    return Span(file, a.line, a.column, b.end_line, b.end_column)


def _tspan(file: str, tok: Token) -> Span:
    line = tok.line or 1
    col = tok.column or 1
    return Span(file, line, col, tok.end_line or line, tok.end_column or col + len(tok))


def _string(tok: Token) -> str:
    return str(tok)[1:-1]


# ---- limits checked before work -------------------------------------------------------------------

_TOKEN = re.compile(r"#[^\n]*|\"[^\"\n]*\"|[A-Za-z_0-9.]+|\S")


def _position(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _check_size(text: str, file: str, limits: Limits) -> None:
    """Bytes, tokens and control characters, by regular-expression scans (linear, in C) before Lark
    runs. A control character (ESC starts terminal escape sequences; bidirectional overrides hide
    text) has no place in a spec, even in a string or a comment, and would reach terminals and reports."""
    bad = _CONTROL.search(text)
    if bad is not None:
        line, col = _position(text, bad.start())
        code = f"U+{ord(bad.group()):04X}"
        raise SpecSyntaxError(f"control character {code} in the text", Span(file, line, col, line, col + 1), code,
                              "printable characters, spaces, tabs and newlines",
                              "remove it (it could change what a terminal or a report shows)")
    size = len(text.encode("utf-8", "surrogatepass")) if len(text) * 4 > limits.input_bytes else 0
    if size > limits.input_bytes:
        raise SpecLimitError(f"the input is too large ({size} bytes)", Span(file, 1, 1, 1, 1), f"{size} bytes",
                             f"at most {limits.input_bytes} bytes", limits.hint("input_bytes"))
    if len(text) <= limits.tokens:
        return  # fewer characters than the limit: fewer tokens too
    for count, m in enumerate(_TOKEN.finditer(text), start=1):
        if count > limits.tokens:
            line, col = _position(text, m.start())
            raise SpecLimitError(f"too many tokens (more than {limits.tokens})", Span(file, line, col, line, col + 1),
                                 f"token number {count}", f"at most {limits.tokens} names, numbers and operators",
                                 limits.hint("tokens"))


def _first_token(tree: Tree[Token]) -> Token | None:
    stack: list[Tree[Token] | Token] = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, Token):
            if item.line is not None:
                return item
        elif isinstance(item, Tree):
            stack.extend(reversed(item.children))
    return None


def _check_depth(tree: Tree[Token], file: str, limits: Limits) -> None:
    """Nesting depth of the parse tree, walked without recursion: the transformer (and SymPy, and
    every printer after it) recurse once per level, so a deep tree is refused before them."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.depth + 1:  # the statement and expression roots do not count
            tok = _first_token(node)
            span = _tspan(file, tok) if tok is not None else None
            raise SpecLimitError(f"the expression is nested too deeply (more than {limits.depth} levels)", span,
                                 f"more than {limits.depth} nested brackets, calls, `if`s or powers",
                                 f"at most {limits.depth} levels", limits.hint("depth"))
        for child in node.children:
            if isinstance(child, Tree):
                stack.append((child, depth + 1))


def _check_digits(tok: Token, file: str) -> None:
    """A literal's size before it is converted: Python refuses int strings over 4,300 digits, and
    ``1e999999999`` would build a billion-digit integer."""
    limits = current().limits
    text = str(tok)
    mantissa, _, exponent = text.lower().partition("e")
    # every written digit counts (leading zeros too: Python's int() refuses 4,300 characters)
    digits = len(mantissa.replace(".", "")) or 1
    if exponent:
        exp_text = exponent.lstrip("+-").lstrip("0") or "0"
        if len(exp_text) > 9:
            digits = limits.digits + 1
        else:
            digits = max(digits, abs(digits + int(exponent)))
    if digits > limits.digits:
        shown = text if len(text) <= 40 else f"{text[:20]}…{text[-10:]} ({len(text)} characters)"
        raise SpecLimitError(f"the number `{shown}` is too large", _tspan(file, tok), f"about {digits} digits",
                             f"at most {limits.digits} digits", limits.hint("digits"))


class _ToSyntax(Transformer[Token, Any]):
    """Parse tree to :mod:`symabsorb.dsl.syntax`. Method names are the grammar's aliases."""

    def __init__(self, file: str) -> None:
        super().__init__(visit_tokens=False)
        self.file = file

    def sp(self, children: list[Any]) -> Span | None:
        """The span from the first to the last child (tokens carry positions; nodes carry spans).

        Computed here rather than with Lark's ``propagate_positions``, which doubled parse time."""
        first = _edge(self.file, children, 0)
        last = _edge(self.file, children, -1)
        if first is None or last is None:
            return first or last
        return Span(self.file, first.line, first.column, last.end_line, last.end_column)

    # -- expressions
    def number(self, c: list[Token]) -> s.Number:
        _check_digits(c[0], self.file)
        text = str(c[0])
        return s.Number(Fraction(text), text, _tspan(self.file, c[0]))

    def name(self, c: list[Token]) -> s.Name:
        return s.Name(str(c[0]), _tspan(self.file, c[0]))

    def call(self, c: list[Any]) -> s.Call:
        args, kwargs = c[2]
        return s.Call(str(c[0]), args, kwargs, self.sp(c))

    def call_args(self, c: list[Any]) -> tuple[tuple[Any, ...], tuple[s.KwArg, ...]]:
        exprs = tuple(x for x in c if x is not None and not isinstance(x, (Token, tuple)))
        kwargs = next((x for x in c if isinstance(x, tuple)), ())
        return exprs, kwargs

    def kwarg_list(self, c: list[Any]) -> tuple[s.KwArg, ...]:
        return tuple(x for x in c if isinstance(x, s.KwArg))

    def kwarg(self, c: list[Any]) -> s.KwArg:
        return s.KwArg(str(c[0]), c[2], self.sp(c))

    def atom(self, c: list[Any]) -> Any:  # "( expr )"
        return c[1]

    def _fold(self, c: list[Any], make: Any) -> Any:
        """``x op y op z`` as a left-leaning tree; a chain of one element is that element."""
        result = c[0]
        for i in range(1, len(c), 2):
            right = c[i + 1]
            span = _join(self.file, result, right)
            result = make(str(c[i]), result, right, span)
        return result

    def sum(self, c: list[Any]) -> Any:
        return self._fold(c, s.Binary)

    def product(self, c: list[Any]) -> Any:
        return self._fold(c, s.Binary)

    def cond(self, c: list[Any]) -> Any:
        return self._fold(c, s.BoolOp)

    def conj(self, c: list[Any]) -> Any:
        return self._fold(c, s.BoolOp)

    def signed(self, c: list[Any]) -> Any:
        result = c[-1]
        for tok in reversed(c[:-1]):
            result = s.Unary(str(tok), result, _join(self.file, tok, result))
        return result

    def power(self, c: list[Any]) -> s.Binary:
        return s.Binary("^", c[0], c[2], self.sp(c))

    def compare(self, c: list[Any]) -> s.Compare:
        return s.Compare(str(c[1]), c[0], c[2], self.sp(c))

    def if_expr(self, c: list[Any]) -> s.IfExpr:
        return s.IfExpr(c[1], c[3], c[5], self.sp(c))

    # -- activations
    def param(self, c: list[Any]) -> s.Param:
        name, default, op, bound = c[0], c[2], c[3], c[4]
        return s.Param(str(name), default, str(op) if op is not None else None, bound, self.sp(c))

    def param_list(self, c: list[Any]) -> tuple[s.Param, ...]:
        return tuple(x for x in c if isinstance(x, s.Param))

    def activation_def(self, c: list[Any]) -> s.ActivationDef:
        params = c[5] or ()
        return s.ActivationDef(str(c[1]), str(c[3]), params, c[8], self.sp(c))

    def act_ref(self, c: list[Any]) -> s.ActRef:
        return s.ActRef(str(c[0]), c[2] or (), self.sp(c))

    def inline_gate(self, c: list[Any]) -> s.InlineGate:
        return s.InlineGate(str(c[1]), c[4], self.sp(c))

    def gated_def(self, c: list[Any]) -> s.GatedDef:
        return s.GatedDef(str(c[1]), c[3], self.sp(c))

    # -- blocks
    def row(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(x for x in c if not isinstance(x, Token))

    def matrix(self, c: list[Any]) -> s.Matrix:
        rows = tuple(x for x in c if isinstance(x, tuple))
        return s.Matrix(rows, self.sp(c))

    def skip_identity(self, c: list[Any]) -> s.IdentitySkip:
        return s.IdentitySkip(self.sp(c))

    def skip_none(self, c: list[Any]) -> s.NoSkip:
        return s.NoSkip(self.sp(c))

    def skip_matrix(self, c: list[Any]) -> s.MatrixSkip:
        return s.MatrixSkip(c[0], self.sp(c))

    def skip_scaled(self, c: list[Any]) -> s.ScaledSkip:
        return s.ScaledSkip(c[2], self.sp(c))

    def skip_hyper(self, c: list[Any]) -> s.HyperSkip:
        return s.HyperSkip(c[4], c[8], self.sp(c))

    def _field(self, key: str, c: list[Any], value: Any) -> tuple[str, Any, Span | None]:
        return (key, value, self.sp(c))

    def field_activation(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("activation", c, c[2])

    def field_dim(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("dim", c, c[2])

    def field_width(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("width", c, c[2])

    def field_skip(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("skip", c, c[2])

    def field_w_up(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("W_up", c, c[2])

    def field_w_down(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("W_down", c, c[2])

    def field_w_gate(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("W_gate", c, c[2])

    def field_weights(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("weights", c, _string(c[2]))

    def field_prefix(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("prefix", c, _string(c[2]))

    def field_up_key(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("up", c, _string(c[2]))

    def field_down_key(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("down", c, _string(c[2]))

    def field_gate_key(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("gate", c, _string(c[2]))

    def field_transpose(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return self._field("transpose", c, str(c[2]) == "true")

    def block_def(self, c: list[Any]) -> s.BlockDef:
        name = str(c[1])
        fields = [x for x in c[3:] if isinstance(x, tuple)]
        seen: dict[str, Span | None] = {}
        for key, _, span in fields:
            if key in seen:
                first = seen[key]
                raise SpecError(
                    f"field `{key}` appears twice in block `{name}`", span, f"a second `{key}:`",
                    "each field at most once per block",
                    f"the first `{key}:` is at line {first.line}" if first else None)
            seen[key] = span
        values = {key: value for key, value, _ in fields}
        spans = tuple((key, span) for key, _, span in fields)
        weight_keys = ("weights", "prefix", "up", "down", "gate", "transpose")
        weights = None
        if any(k in values for k in weight_keys):
            if "weights" not in values:
                key = next(k for k in weight_keys if k in values)
                raise SpecError(
                    f"`{key}:` without `weights:` in block `{name}`", seen[key], f"`{key}:`",
                    'a `weights: "FILE"` field that it qualifies',
                    'add `weights: "model.safetensors"`, or remove the field')
            weights = s.WeightsDecl(values["weights"], values.get("prefix"), values.get("up"),
                                    values.get("down"), values.get("gate"),
                                    bool(values.get("transpose", False)), seen["weights"])
        return s.BlockDef(name, values.get("activation"), values.get("dim"), values.get("width"),
                          values.get("skip"), values.get("W_up"), values.get("W_down"),
                          values.get("W_gate"), weights, self.sp(c), spans)

    def stack_power(self, c: list[Any]) -> s.StackDef:
        return s.StackDef(str(c[1]), (str(c[3]),), c[5], (_tspan(self.file, c[3]),), self.sp(c))

    def stack_list(self, c: list[Any]) -> s.StackDef:
        names = [t for t in c[4:] if isinstance(t, Token) and t.type == "NAME"]
        return s.StackDef(str(c[1]), tuple(str(t) for t in names), None,
                          tuple(_tspan(self.file, t) for t in names), self.sp(c))

    # -- exploration spaces
    def space_primitives(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return ("primitives", tuple(str(x) for x in c[3:] if isinstance(x, Token) and x.type == "NAME"), self.sp(c))

    def space_constants(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return ("constants", tuple(x for x in c[3:] if not isinstance(x, Token)), self.sp(c))

    def space_operators(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return ("operators", tuple(x for x in c[3:] if isinstance(x, str) and not isinstance(x, Token)), self.sp(c))

    def space_op(self, c: list[Any]) -> str:
        return str(c[0])

    def space_size(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return ("size", int(str(c[2])), self.sp(c))

    def space_family(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return ("family", c[2], self.sp(c))

    def space_range(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        span = self.sp(c)
        return (f"range {c[1]}", s.SpaceRange(str(c[1]), c[4], c[6], span), span)

    def space_grid(self, c: list[Any]) -> tuple[str, Any, Span | None]:
        return ("grid", int(str(c[2])), self.sp(c))

    def space_def(self, c: list[Any]) -> s.SpaceDef:
        name = str(c[1])
        fields = [x for x in c[4:] if isinstance(x, tuple)]
        seen: dict[str, Span | None] = {}
        for key, _, span in fields:
            if key in seen:
                first = seen[key]
                raise SpecError(
                    f"field `{key}` appears twice in space `{name}`", span, f"a second `{key}:`",
                    "each field at most once per space",
                    f"the first `{key}:` is at line {first.line}" if first else None)
            seen[key] = span
        values = {key: value for key, value, _ in fields}
        ranges = tuple(value for key, value, _ in fields if key.startswith("range "))
        return s.SpaceDef(name, values.get("primitives", ()), values.get("constants", ()), values.get("operators"),
                          values.get("size"), values.get("family"), ranges, values.get("grid"), self.sp(c),
                          tuple((key, span) for key, _, span in fields))

    # -- queries and imports
    def q_absorb(self, c: list[Any]) -> s.Query:
        return s.Query("absorb", str(c[1]), None, self.sp(c))

    def q_width(self, c: list[Any]) -> s.Query:
        return s.Query("width", str(c[1]), None, self.sp(c))

    def q_classify(self, c: list[Any]) -> s.Query:
        return s.Query("classify", c[1], None, self.sp(c))

    def q_series(self, c: list[Any]) -> s.Query:
        _check_digits(c[3], self.file)
        return s.Query("series", c[1], int(str(c[3])), self.sp(c))

    def q_parity(self, c: list[Any]) -> s.Query:
        return s.Query("parity", c[1], None, self.sp(c))

    def q_facts(self, c: list[Any]) -> s.Query:
        return s.Query("facts", c[1], None, self.sp(c))

    def import_stmt(self, c: list[Any]) -> s.Import:
        return s.Import(_string(c[1]), self.sp(c))

    def start(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(c)


def _run(text: str, file: str, start: str) -> Any:
    limits = current().limits
    try:
        _check_size(text, file, limits)
        try:
            tree = get_parser().parse(text, start=start)
        except UnexpectedInput as err:
            raise _syntax_error(err, text, file) from None
        _check_depth(tree, file, limits)
    except SpecError as err:
        raise err.with_source(text) from None
    try:
        return _ToSyntax(file).transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, SpecError):
            raise err.orig_exc.with_source(text) from None
        raise


def parse_text(text: str, file: str = "<string>") -> s.Module:
    """Parse one file's text (imports are not followed here; see :func:`load_module`)."""
    return s.Module(file, _run(text, file, "start"), text)


def parse_act_ref(text: str, file: str = "<expression>") -> s.ActRef:
    """Parse an activation reference with parameters, ``leaky_relu(alpha = 1/5)``."""
    result: s.ActRef = _run(text, file, "act_ref")
    return result


def parse_expression(text: str, file: str = "<expression>") -> s.Expr:
    """Parse a lone expression, as given to ``symabsorb classify`` or ``facts``."""
    result: s.Expr = _run(text, file, "expr")
    return result
