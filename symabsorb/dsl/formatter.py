"""The canonical text of a spec: ``symabsorb fmt``.

Parsing the formatted text gives back an equal :class:`~symabsorb.dsl.syntax.Module`.
Comments are kept: each comment is printed before the statement it precedes or sits in.
"""

from __future__ import annotations

from functools import singledispatch

from . import syntax as s

__all__ = ["format_act_ref", "format_expr", "format_module", "format_statement"]

# Binding strength of each expression form (higher binds tighter).
_IF, _SUM, _PRODUCT, _UNARY, _POWER, _ATOM = range(6)
_PREC = {"+": _SUM, "-": _SUM, "*": _PRODUCT, "/": _PRODUCT, "^": _POWER}


def _wrap(text: str, prec: int, needed: int) -> str:
    return f"({text})" if prec < needed else text


@singledispatch
def _expr(node: object) -> tuple[str, int]:
    raise TypeError(f"not an expression node: {type(node).__name__}")


@_expr.register
def _(node: s.Number) -> tuple[str, int]:
    return node.text, _ATOM


@_expr.register
def _(node: s.Name) -> tuple[str, int]:
    return node.id, _ATOM


@_expr.register
def _(node: s.Call) -> tuple[str, int]:
    args = ", ".join(format_expr(a) for a in node.args)
    if node.kwargs:
        args += "; " + _kwargs(node.kwargs)
    return f"{node.func}({args})", _ATOM


# Chains (`- - - z`, `a + b + ... + z`, `c and d and ...`) are walked in loops, not recursion: the
# parser bounds nesting depth, but a chain of 1,000 terms is flat text and must not overflow.

@_expr.register
def _(node: s.Unary) -> tuple[str, int]:
    ops = []
    current: s.Expr = node
    while isinstance(current, s.Unary):
        ops.append(current.op)
        current = current.operand
    text, prec = _expr(current)
    return "".join(ops) + _wrap(text, prec, _UNARY), _UNARY


@_expr.register
def _(node: s.Binary) -> tuple[str, int]:
    prec = _PREC[node.op]
    if node.op == "^":
        left, lp = _expr(node.left)
        right, rp = _expr(node.right)
        return f"{_wrap(left, lp, _ATOM)}^{_wrap(right, rp, _UNARY)}", _POWER
    spine = []
    current: s.Expr = node
    while isinstance(current, s.Binary) and current.op != "^" and _PREC[current.op] == prec:
        spine.append(current)
        current = current.left
    first, fp = _expr(current)
    out = [_wrap(first, fp, prec)]
    for b in reversed(spine):
        right, rp = _expr(b.right)
        sep = f" {b.op} " if prec == _SUM else b.op
        out.append(sep + _wrap(right, rp, prec + 1))
    return "".join(out), prec


@_expr.register
def _(node: s.IfExpr) -> tuple[str, int]:
    then, prec = _expr(node.then)
    return f"if {_cond(node.cond)} then {_wrap(then, prec, _SUM)} else {format_expr(node.orelse)}", _IF


def _cond(node: s.Compare | s.BoolOp) -> str:
    if isinstance(node, s.Compare):
        left, lp = _expr(node.left)
        right, rp = _expr(node.right)
        return f"{_wrap(left, lp, _SUM)} {node.op} {_wrap(right, rp, _SUM)}"
    spine = []
    current: s.Compare | s.BoolOp = node
    while isinstance(current, s.BoolOp):
        spine.append(current)
        current = current.left
    out = [_cond(current)]
    for b in reversed(spine):
        out.append(f" {b.op} {_cond(b.right)}")
    return "".join(out)


def format_expr(node: s.Expr) -> str:
    """An expression in canonical form, with only the parentheses it needs."""
    return _expr(node)[0]


def _kwargs(kwargs: tuple[s.KwArg, ...]) -> str:
    return ", ".join(f"{k.name} = {format_expr(k.value)}" for k in kwargs)


def format_act_ref(ref: s.ActRef) -> str:
    return f"{ref.name}({_kwargs(ref.kwargs)})" if ref.kwargs else ref.name


def _matrix(m: s.Matrix) -> str:
    return "[" + ", ".join("[" + ", ".join(format_expr(x) for x in row) + "]" for row in m.rows) + "]"


def _skip(skip: s.Skip) -> str:
    if isinstance(skip, s.IdentitySkip):
        return "identity"
    if isinstance(skip, s.NoSkip):
        return "none"
    if isinstance(skip, s.MatrixSkip):
        return _matrix(skip.matrix)
    if isinstance(skip, s.ScaledSkip):
        return f"scaled({format_expr(skip.factor)})"
    structured = ", structured: true" if skip.structured else ""
    return f"hyper(n: {format_expr(skip.n)}, mix: {_matrix(skip.mix)}{structured})"


def _quote(text: str) -> str:
    return f'"{text}"'


@singledispatch
def _stmt(node: object) -> str:
    raise TypeError(f"not a statement: {type(node).__name__}")


@_stmt.register
def _(node: s.Import) -> str:
    return f"import {_quote(node.path)}"


@_stmt.register
def _(node: s.ActivationDef) -> str:
    params = ""
    if node.params:
        parts = []
        for p in node.params:
            text = p.name
            if p.default is not None:
                text += f" = {format_expr(p.default)}"
            for c in p.constraints:
                if c.bound_first:
                    text = f"{format_expr(c.bound)} {c.op} {text}"
                else:
                    text += f" {c.op} {format_expr(c.bound)}"
            parts.append(text)
        params = "; " + ", ".join(parts)
    return f"activation {node.name}({node.var}{params}) = {format_expr(node.body)}"


@_stmt.register
def _(node: s.GatedDef) -> str:
    if isinstance(node.gate, s.InlineGate):
        return f"gated {node.name} gate ({node.gate.var}) = {format_expr(node.gate.body)}"
    return f"gated {node.name} gate {format_act_ref(node.gate)}"


def _block_fields(node: s.BlockDef) -> list[tuple[str, str]]:
    """The field lines of a block in canonical order, each with the key of its ``field_spans`` entry."""
    lines: list[tuple[str, str]] = []
    if node.activation is not None:
        lines.append(("activation", f"activation: {format_act_ref(node.activation)}"))
    if node.dim is not None:
        lines.append(("dim", f"dim: {format_expr(node.dim)}"))
    if node.width is not None:
        lines.append(("width", f"width: {format_expr(node.width)}"))
    if node.skip is not None:
        lines.append(("skip", f"skip: {_skip(node.skip)}"))
    for label, matrix in (("W_up", node.w_up), ("W_down", node.w_down), ("W_gate", node.w_gate)):
        if matrix is not None:
            lines.append((label, f"{label}: {_matrix(matrix)}"))
    w = node.weights
    if w is not None:
        lines.append(("weights", f"weights: {_quote(w.file)}"))
        for label, value in (("prefix", w.prefix), ("up", w.up_key), ("down", w.down_key), ("gate", w.gate_key)):
            if value is not None:
                lines.append((label, f"{label}: {_quote(value)}"))
        if w.transpose:
            lines.append(("transpose", "transpose: true"))
        for label, value in (("up_bias", w.up_bias_key), ("down_bias", w.down_bias_key),
                             ("gate_bias", w.gate_bias_key), ("ln_gamma", w.gamma_key)):
            if value is not None:
                lines.append((label, f"{label}: {_quote(value)}"))
    if node.bias is not None:
        lines.append(("bias", f"bias: {'true' if node.bias else 'false'}"))
    for label, vector in (("b_up", node.b_up), ("b_down", node.b_down), ("b_gate", node.b_gate),
                          ("ln_gamma", node.ln_gamma)):
        if vector is not None:
            lines.append((label, f"{label}: [{', '.join(format_expr(e) for e in vector)}]"))
    if node.absorber_bias is not None:
        lines.append(("absorber_bias", f"absorber_bias: {'true' if node.absorber_bias else 'false'}"))
    if node.norm is not None:
        lines.append(("norm", f"norm: {node.norm}"))
    if node.eps is not None:
        lines.append(("eps", f"eps: {format_expr(node.eps)}"))
    return lines


@_stmt.register
def _(node: s.BlockDef) -> str:
    return "\n".join([f"block {node.name} {{", *(f"    {line}" for _, line in _block_fields(node)), "}"])


@_stmt.register
def _(node: s.StackDef) -> str:
    if node.depth is not None:
        return f"stack {node.name} = {node.blocks[0]} ^ {format_expr(node.depth)}"
    return f"stack {node.name} = [{', '.join(node.blocks)}]"


def _space_fields(node: s.SpaceDef) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    if node.primitives:
        lines.append(("primitives", f"primitives: [{', '.join(node.primitives)}]"))
    if node.constants:
        lines.append(("constants", f"constants: [{', '.join(format_expr(c) for c in node.constants)}]"))
    if node.operators is not None:
        lines.append(("operators", f"operators: [{', '.join(node.operators)}]"))
    if node.size is not None:
        lines.append(("size", f"size: {node.size}"))
    if node.family is not None:
        lines.append(("family", f"family: {format_expr(node.family)}"))
    for r in node.ranges:
        lines.append((f"range {r.name}", f"range {r.name}: [{format_expr(r.low)}, {format_expr(r.high)}]"))
    if node.grid is not None:
        lines.append(("grid", f"grid: {node.grid}"))
    return lines


@_stmt.register
def _(node: s.SpaceDef) -> str:
    return "\n".join([f"space {node.name} = {{", *(f"    {line}" for _, line in _space_fields(node)), "}"])


@_stmt.register
def _(node: s.Query) -> str:
    target = node.target if isinstance(node.target, str) else format_act_ref(node.target)
    if node.kind == "series":
        return f"series {target} order {node.order}"
    return f"{node.kind} {target}"


def format_statement(stmt: s.Statement) -> str:
    """One statement in canonical form (a block spans several lines)."""
    return _stmt(stmt)


def _comments(text: str) -> list[tuple[tuple[int, int], str]]:
    """((line, column), comment) for every ``#`` comment outside a string literal."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        in_string = False
        for i, ch in enumerate(line):
            if ch == '"':
                in_string = not in_string
            elif ch == "#" and not in_string:
                found.append(((number, i + 1), line[i:].rstrip()))
                break
    return found


Comment = tuple[tuple[int, int], str]


def _with_inner_comments(stmt: s.BlockDef | s.SpaceDef, inner: list[Comment], trailing: str | None) -> list[str]:
    """A block or space with the comments written inside it kept in place: a comment at the end of a
    field's line stays at the end of that field's line (of its last line, for a matrix over several),
    one on the opening or closing line stays there, and one on a line of its own stays inside, above
    the field that follows it."""
    fields = _block_fields(stmt) if isinstance(stmt, s.BlockDef) else _space_fields(stmt)
    spans = [(key, span) for key, span in stmt.field_spans if span is not None]
    assert stmt.span is not None
    after: dict[str, list[str]] = {}
    before: dict[str, list[str]] = {}
    header: list[str] = []
    footer: list[str] = [trailing] if trailing else []
    for (line, column), text in inner:
        # the last field that starts on or before the comment's line and reaches it
        owner = None
        for key, span in spans:
            if span.line <= line <= span.end_line and (span.line, span.column) < (line, column):
                owner = key
        if owner is not None:
            after.setdefault(owner, []).append(text)
            continue
        if line == stmt.span.line:
            header.append(text)
        elif line == stmt.span.end_line:
            footer.insert(0, text)
        else:
            later = [key for key, span in spans if (span.line, span.column) > (line, column)]
            first = dict(spans)
            target = min(later, key=lambda k: (first[k].line, first[k].column)) if later else None
            if target is not None:
                before.setdefault(target, []).append(text)
            else:
                after.setdefault("}", []).append(text)
    keyword = "block" if isinstance(stmt, s.BlockDef) else "space"
    out = [f"{keyword} {stmt.name} {'{' if keyword == 'block' else '= {'}" + "".join(f"  {c}" for c in header)]
    for key, field_text in fields:
        out.extend(f"    {c}" for c in before.get(key, ()))
        out.append(f"    {field_text}" + "".join(f"  {c}" for c in after.get(key, ())))
    out.extend(f"    {c}" for c in after.get("}", ()))
    out.append("}" + "".join(f"  {c}" for c in footer))
    return out


def format_module(module: s.Module) -> str:
    """The canonical text of one file, ending with one newline. Comments are kept: those on a line of
    their own above the statement they precede, an end-of-line comment at the end of its line (a
    block's field keeps its own, see :func:`_with_inner_comments`)."""
    comments = _comments(module.text)
    out: list[str] = []
    previous: type | None = None
    statements = list(module.statements)
    for index, stmt in enumerate(statements):
        start = (stmt.span.line, stmt.span.column) if stmt.span else (0, 0)
        end = (stmt.span.end_line, stmt.span.end_column) if stmt.span else (0, 0)
        leading = [c for pos, c in comments if pos < start]
        inner = [(pos, c) for pos, c in comments if start <= pos < end]
        comments = [(pos, c) for pos, c in comments if not pos < end]
        # a comment after the statement on its last line, before any next statement, stays on that line
        following = statements[index + 1].span if index + 1 < len(statements) else None
        trailing = None
        if comments and comments[0][0][0] == end[0] and (
                following is None or (following.line, following.column) > comments[0][0]):
            trailing = comments.pop(0)[1]
        kind = type(stmt)
        one_line = not isinstance(stmt, (s.BlockDef, s.SpaceDef))
        # comments printed above the statement (its own, or those written inside a one-line statement)
        # get the blank line they get when read back as leading comments: formatting is idempotent
        if out and (kind is not previous or not one_line or leading or (one_line and inner)):
            out.append("")
        out.extend(leading)
        if isinstance(stmt, (s.BlockDef, s.SpaceDef)):
            out.extend(_with_inner_comments(stmt, inner, trailing))
        else:
            # a statement printed on one line: the comments written inside it go above it
            out.extend(c for _, c in inner)
            out.append(_stmt(stmt) + (f"  {trailing}" if trailing else ""))
        previous = kind
    if comments:
        if out:
            out.append("")
        out.extend(c for _, c in comments)
    return "\n".join(out) + "\n" if out else ""
