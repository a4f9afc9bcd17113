"""Build hook for the optional compiled kernel (everything else is in pyproject.toml).

``truedeal._kernel``, ``truedeal._sampler``, ``truedeal._paired`` and ``truedeal._shake`` are optional: without a C
compiler (or without ``unsigned __int128``) the build skips them, the package
still installs, and
:mod:`truedeal.kernel` falls back to the numpy path, saying so once.
"""

import os

from setuptools import Extension, setup

setup(
    # the four modules compiled side by side, one per core (8.7 s -> 5.0 s of every install on 2 cores)
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    ext_modules=[
        Extension(
            "truedeal._kernel",
            sources=["shared/truedeal/_kernel.c"],
            optional=True,  # a failed compile is a warning, not an install failure
            extra_compile_args=["-O3"],
        ),
        Extension(
            "truedeal._sampler",  # the sampler's draws and fill (truedeal.kernel.sampler())
            sources=["shared/truedeal/_sampler.c"],
            depends=["shared/truedeal/_draws.h"],
            optional=True,
            extra_compile_args=["-O3"],
        ),
        Extension(
            "truedeal._paired",  # the paired listing's draws (truedeal.paired_sampling)
            sources=["shared/truedeal/_paired.c"],
            depends=["shared/truedeal/_draws.h"],
            optional=True,
            extra_compile_args=["-O3"],
        ),
        Extension(
            "truedeal._shake",  # SHAKE-256 blocks in parallel on AVX-512 or AVX2 (truedeal.randomness)
            sources=["shared/truedeal/_shake.c"],
            optional=True,
            extra_compile_args=["-O3"],
        ),
    ]
)
