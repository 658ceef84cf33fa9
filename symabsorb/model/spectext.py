"""SymPy expressions written in the spec language's own syntax (``max(0, z)^2``, ``abs(z)``, ``e``,
``if z >= 0 then z else alpha*z``), never SymPy's spellings (``Max``, ``Abs``, ``E``, ``Piecewise``,
``**``). The one printer for them: the model layer has it so that every layer above (the theory's
reasons, explore's records, the reports) says an expression as a spec would.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

__all__ = ["spec_expr", "tidy"]


def _spec_printer() -> object:
    from sympy.printing.precedence import PRECEDENCE, precedence
    from sympy.printing.str import StrPrinter

    class SpecPrinter(StrPrinter):
        """``max(0, z)^2``, ``if z >= 0 then z else alpha*z``, ``sqrt(z^2 + 4)``, ``e``: what a spec would say."""

        def _print_Pow(self, expr: Any, rational: bool = False) -> str:
            base, exp = expr.base, expr.exp
            if exp == sp.S.Half:
                return f"sqrt({self._print(base)})"
            if exp == -sp.S.Half:
                return f"1/sqrt({self._print(base)})"
            if exp == -1:
                return "1/" + self.parenthesize(base, PRECEDENCE["Pow"], strict=True)
            if base == sp.E:
                return f"exp({self._print(exp)})"
            b = self.parenthesize(base, PRECEDENCE["Pow"], strict=True)
            e = self.parenthesize(exp, PRECEDENCE["Pow"], strict=False)
            if exp.is_Number and exp < 0:
                e = f"({self._print(exp)})"
            return f"{b}^{e}"

        def _print_Equality(self, expr: Any) -> str:
            return f"{self._print(expr.lhs)} = {self._print(expr.rhs)}"

        def _print_Unequality(self, expr: Any) -> str:
            return f"{self._print(expr.lhs)} ≠ {self._print(expr.rhs)}"

        def _print_Exp1(self, expr: Any) -> str:
            return "e"

        def _print_Max(self, expr: Any) -> str:
            return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

        def _print_Min(self, expr: Any) -> str:
            return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"

        def _print_Abs(self, expr: Any) -> str:
            return f"abs({self._print(expr.args[0])})"

        def _print_And(self, expr: Any) -> str:
            return " and ".join(self.parenthesize(a, precedence(expr)) for a in expr.args)

        def _print_Or(self, expr: Any) -> str:
            return " or ".join(self.parenthesize(a, precedence(expr)) for a in expr.args)

        def _print_BooleanTrue(self, expr: Any) -> str:
            return "true"

        def _print_BooleanFalse(self, expr: Any) -> str:
            return "false"

        def _print_Piecewise(self, expr: Any) -> str:
            pieces = list(expr.args)
            out = ""
            for value, cond in pieces[:-1]:
                out += f"if {self._print(cond)} then {self._print(value)} else "
            value, cond = pieces[-1]
            if cond == sp.true:
                out += self._print(value)
            else:  # undefined outside the last condition
                out += f"if {self._print(cond)} then {self._print(value)} else undefined"
            return "(" + out + ")"

        def _print_FiniteSet(self, expr: Any) -> str:
            return "{" + ", ".join(self._print(a) for a in sorted(expr.args, key=sp.default_sort_key)) + "}"

    return SpecPrinter({"order": None})


_PRINTER: Any = None


def tidy(expr: Any) -> Any:
    """``expr`` with the products ``|x|·sign(x)`` written ``x`` (equal for every real ``x``): the
    odd part of ReLU is ``z/2``, not ``|z| sign(z)/2``."""
    if not isinstance(expr, sp.Basic):
        return expr

    def pair(node: Any) -> bool:
        if not node.is_Mul:
            return False
        abs_args = {a.args[0] for a in node.args if isinstance(a, sp.Abs)}
        return any(isinstance(a, sp.sign) and a.args[0] in abs_args for a in node.args)

    def merge(node: Any) -> Any:
        factors = list(node.args)
        for s in [a for a in factors if isinstance(a, sp.sign)]:
            if sp.Abs(s.args[0]) in factors and s in factors:
                factors.remove(s)
                factors.remove(sp.Abs(s.args[0]))
                factors.append(s.args[0])
        return sp.Mul(*factors)

    try:
        return expr.replace(pair, merge)
    except (TypeError, ValueError, AttributeError):  # pragma: no cover - SymPy corner cases
        return expr


def spec_expr(expr: Any) -> str:
    """A SymPy expression in the spec's own syntax: ``max(0, z)^2``, ``if z >= 0 then z else alpha*z``,
    ``sqrt(z^2 + 4)/2``, never SymPy's ``Max``, ``Piecewise`` or ``**``."""
    global _PRINTER
    if _PRINTER is None:
        _PRINTER = _spec_printer()
    out = _PRINTER.doprint(tidy(expr))  # type: ignore[attr-defined]
    if isinstance(expr, sp.Piecewise) and out.startswith("(") and out.endswith(")"):
        out = out[1:-1]
    return out
