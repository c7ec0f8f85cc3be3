"""The package list of the wheel, found rather than written by hand (the rest is in pyproject.toml).

Every package under polygraph_logic/ is found by setuptools (folders without __init__.py, such
as serve/static, included as namespace packages), and the resource folders that
``[tool.setuptools.package-dir]`` maps into the package from the top level of the repository
are added by their mapped names: setuptools' find cannot see a folder that lives elsewhere.
"""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent
MAPPED = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]

setup(packages=[*find_namespace_packages(where=str(HERE), include=["polygraph_logic", "polygraph_logic.*"],
                                         exclude=["*.__pycache__"]),
                *(name for name in MAPPED if name != "polygraph_logic")])
