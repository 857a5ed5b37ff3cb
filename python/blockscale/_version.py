# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The package version, from one place: project(blockscale VERSION x.y.z) in
the top-level CMakeLists.txt. A wheel carries it in ``_build_info.py``
(written by the build backend, python/_build_backend, with the git commit
of the library it bundles); a source checkout reads CMakeLists.txt. No
imports beyond the standard library."""
import os
import re

_PROJECT_RE = re.compile(r"project\s*\(\s*blockscale\b[^)]*?\bVERSION\s+([0-9][0-9A-Za-z.+-]*)",
                         re.S | re.I)


def version_from_cmake(path):
    """The VERSION of project(blockscale ...) in the CMakeLists.txt at
    `path`, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            m = _PROJECT_RE.search(f.read())
    except OSError:
        return None
    return m.group(1) if m else None


def _source_version():
    here = os.path.dirname(os.path.abspath(__file__))
    return version_from_cmake(os.path.join(here, "..", "..", "CMakeLists.txt"))


try:
    from ._build_info import version as __version__, git_commit  # a wheel
except ImportError:  # a source checkout (PYTHONPATH=python)
    __version__ = _source_version() or "unknown"
    git_commit = None
