"""Build hook for the optional compiled kernel (everything else is in pyproject.toml).

``truedeal._kernel`` is optional: without a C compiler (or without
``unsigned __int128``) the build skips it, the package still installs, and
:mod:`truedeal.kernel` falls back to the numpy path, saying so once.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "truedeal._kernel",
            sources=["shared/truedeal/_kernel.c"],
            optional=True,  # a failed compile is a warning, not an install failure
            extra_compile_args=["-O3"],
        )
    ]
)
