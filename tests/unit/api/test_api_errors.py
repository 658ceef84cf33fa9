"""API errors: every wrong argument is a SymabsorbError subclass (no stray TypeError/ValueError/
AttributeError from deep inside), named in ``name=value (type=...)`` style; an internal error exits 3."""

from __future__ import annotations

import pytest

import symabsorb
from symabsorb.errors import ArgumentError, InternalError, SymabsorbError
from tests.helpers import ROOT, run_cli

PAPER = str(ROOT / "examples" / "paper.absorb")

BAD_CALLS = [
    ("expr=123 (type=int)", lambda: symabsorb.classify(123)),  # type: ignore[arg-type]
    ("budget='x' (type=str)", lambda: symabsorb.classify("gelu", budget="x")),  # type: ignore[arg-type]
    ("budget=-1 (type=int)", lambda: symabsorb.classify("gelu", budget=-1)),
    ("budget=nan (type=float)", lambda: symabsorb.classify("gelu", budget=float("nan"))),
    ("budget=True (type=bool)", lambda: symabsorb.classify("gelu", budget=True)),
    ("gated='yes' (type=str)", lambda: symabsorb.classify("gelu", gated="yes")),  # type: ignore[arg-type]
    ("order='3' (type=str)", lambda: symabsorb.facts("gelu", order="3")),  # type: ignore[arg-type]
    ("order=0 (type=int)", lambda: symabsorb.facts("gelu", order=0)),
    ("spec=5 (type=int)", lambda: symabsorb.prove(5)),  # type: ignore[arg-type]
    ("progress=3 (type=int)", lambda: symabsorb.prove(PAPER, progress=3)),  # type: ignore[arg-type]
    ("theorems='dir' (type=str)", lambda: symabsorb.library("dir")),  # type: ignore[arg-type]
    ("theorems[0]=3 (type=int)", lambda: symabsorb.library([3])),  # type: ignore[list-item]
    ("theorems[0]='/nonexistent-dir'", lambda: symabsorb.library(["/nonexistent-dir"])),
    ("lib=3 (type=int)", lambda: symabsorb.classify("gelu", lib=3)),  # type: ignore[arg-type]
    ("source=None (type=NoneType)", lambda: symabsorb.load(None)),  # type: ignore[arg-type]
    ("name=5 (type=int)", lambda: symabsorb.absorb(PAPER, 5)),  # type: ignore[arg-type]
    ("activation=5 (type=int)", lambda: symabsorb.decide(5, [[1]], [[1]])),  # type: ignore[arg-type]
    ("w_up='ab' (type=str)", lambda: symabsorb.decide("relu", "ab", [[1.0]])),
    ("w_up: rows of lengths [1, 2]", lambda: symabsorb.decide("relu", [[1, 2], [3]], [[1]])),
    ("skip='residual' (type=str)", lambda: symabsorb.decide("relu", [[1]], [[1]], skip="residual")),
    ("transpose=1 (type=int)", lambda: symabsorb.decide("relu", file="x.npz", transpose=1)),  # type: ignore[arg-type]
    ("fmt=3 (type=int)", lambda: symabsorb.classify("relu").render(3)),  # type: ignore[arg-type]
    ("fmt='pdf' (type=str)", lambda: symabsorb.classify("relu").render("pdf")),
    ("width='wide' (type=str)", lambda: symabsorb.classify("relu").render("text", width="wide")),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("message", "call"), BAD_CALLS, ids=[m for m, _ in BAD_CALLS])
def test_wrong_arguments_are_symabsorb_errors(message: str, call: object) -> None:
    with pytest.raises(ArgumentError) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, SymabsorbError)
    assert isinstance(info.value, ValueError)  # callers that caught ValueError keep working
    assert message in str(info.value)


def test_no_witness_is_an_argument_error() -> None:
    with pytest.raises(ArgumentError, match="no witness"):
        symabsorb.classify("tanh").write_witness("w.npz")


def test_exit_codes_come_from_the_error_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user error exits 2, an internal error (a failed self-check) 3, both without a traceback."""
    assert SymabsorbError.exit_code == 2 and ArgumentError.exit_code == 2 and InternalError.exit_code == 3
    code, _, err, _ = run_cli("classify", "z +* 2", "--no-cache")
    assert code == 2 and "error" in err and "Traceback" not in err

    import symabsorb.api as api

    def broken(*args: object, **kwargs: object) -> object:
        raise InternalError("the witness failed its numeric check at 3 of 1000 points")

    monkeypatch.setattr(api, "classify", broken)
    code, out, err, _ = run_cli("classify", "relu", "--no-cache")
    assert code == 3, (code, out, err)
    assert "internal error: the witness failed its numeric check" in err and "Traceback" not in err
    assert "a bug in symabsorb" in err


def test_facts_order_has_the_bound_a_specs_series_query_has() -> None:
    """`facts --order` stopped at 40 while a spec's `series ... order N` allows 60 (a new user's report): one
    bound, the spec's."""
    import symabsorb
    from symabsorb.errors import ArgumentError
    from symabsorb.model.resolve import MAX_SERIES_ORDER

    assert symabsorb.facts("z^2", order=MAX_SERIES_ORDER).answer.order == MAX_SERIES_ORDER
    with pytest.raises(ArgumentError, match=f"from 1 to {MAX_SERIES_ORDER}"):
        symabsorb.facts("z^2", order=MAX_SERIES_ORDER + 1)
