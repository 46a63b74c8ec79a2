"""Builds the optional C inner loop of the partial solver (solver/_native.c).

Everything else is in pyproject.toml. ``optional=True``: where no C compiler is found the
install goes on without it and the solver runs its pure-Python path (same results).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "solver._native",
            ["solver/_native.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
