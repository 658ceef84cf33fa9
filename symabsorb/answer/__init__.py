"""The answer layer: every question to the prover and the concrete-weights layer goes through here.

:class:`~.session.Session` holds what an answer depends on besides the question (the library in
force and the run); :mod:`.types` holds the answers as data (:class:`~.types.QueryAnswer`,
:class:`~.types.Report`), which :mod:`symabsorb.report` renders.
"""

from . import procedures as _procedures  # noqa: F401  (attaches verify's re-checks to the built-in procedures)
from .registries import Registries, provide
from .session import Session, in_force
from .types import QueryAnswer, Report

__all__ = ["QueryAnswer", "Registries", "Report", "Session", "in_force", "provide"]
