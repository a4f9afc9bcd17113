"""truedeal: exactly uniform constrained bridge dealing.

Data flow, one module per step:
constraints (spec, shapes) -> enumeration (listing) -> sampling (sampling, fill)
-> deal numbers (dealnumber) -> formats (formats) -> CLI (cli).
"""

__version__ = "0.1.0"
