"""truedeal: exactly uniform constrained bridge dealing.

Data flow, one module or package per step:
constraints (spec, shapes, constraints) -> listing (the listing package)
-> sampling (sampling, fill, kernel) -> deal numbers (dealnumber)
-> formats (formats) -> CLI (cli).
"""

__version__ = "0.1.0"
