"""Packaging for Xamt (the fuzzer) and sandbox (the crash-safe executor).

All third-party versions of this environment are pinned here and nowhere else; they were
measured to install together on the project's machines (Python 3.11, CPU). MXNet, which needs
numpy < 2, has a venv of its own, whose pins are in the Makefile (its ``lib_venv`` line). ``torch==2.13.0`` must stay exact:
a looser pin makes pip fetch a multi-GB CUDA build instead of the CPU wheel on disk.
"""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent

RUNTIME = [
    "numpy==2.4.6",
    "scipy==1.17.1",
    "numba==0.68.1",
    "llvmlite==0.50.0",
    "torch==2.13.0",
    "tensorflow-cpu==2.21.0",
    "jax==0.10.2",
    "jaxlib==0.10.2",
    "keras==3.15.1",
    "ml_dtypes==0.6.0",
    "msgpack==1.2.4",
    "psutil==7.2.2",
    "cffi==2.1.1",
    "rapidfuzz==3.14.6",
    "rich==15.0.0",
    "jinja2==3.1.6",
    "matplotlib==3.11.2",
    # campaigns and registry builds across machines (--ray); installs beside the pins above
    "ray==2.60.0",
    # TF-IDF documentation similarity of the inferred relations (xamt/matching/inferred.py)
    "scikit-learn==1.9.1",
    # a library fuzzed (xamt/libraries/array_api_strict.py); tools/make_groundtruth.py also
    # reads the array API standard's function list from it
    "array-api-strict==2.6.1",
    # a library fuzzed (xamt/libraries/dask.py): dask.array; installs beside numpy 2.4.6
    "dask[array]==2026.8.0",
]
TEST = [
    "pytest==9.2.0",
    "pytest-timeout==2.4.0",
    "hypothesis==6.170.17",
    # tools/make_groundtruth.py: torch's OpInfo database imports expecttest
    "expecttest==0.3.0",
]

CFFI_MODULES = [
    str(p.relative_to(HERE)) + ":ffibuilder" for p in sorted((HERE / "csrc").glob("build_*.py"))
]

setup(
    name="xamt",
    version="0.1.0",
    description="Differential fuzzing of deep-learning and array libraries",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.11,<3.12",
    packages=find_packages(include=["xamt", "xamt.*", "sandbox", "sandbox.*"]),
    include_package_data=True,
    package_data={"xamt": ["data/*", "data/**/*", "report/templates/*", "report/templates/**/*",
                          "compare/*.json"]},
    setup_requires=["cffi==2.1.1"],
    cffi_modules=CFFI_MODULES,
    install_requires=RUNTIME,
    extras_require={"test": TEST},
    entry_points={"console_scripts": ["xamt=xamt.cli:main"]},
)
