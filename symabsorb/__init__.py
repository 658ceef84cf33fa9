"""symabsorb: can a residual block ``x -> Mx + MLP(x)`` be rewritten as a residual-free MLP?

The package is layered (each layer imports only earlier ones)::

    dsl -> model -> analysis -> theory -> weights -> report -> cli

Importing ``symabsorb`` itself stays cheap: SymPy is loaded only by the layers that need it.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
