# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Running a function right after a module is imported, without importing
it (standard library only): how blockscale registers with torchtitan
whichever of the two is imported first."""
import importlib.abc
import importlib.util
import logging
import sys

log = logging.getLogger("blockscale")


class _AfterImport(importlib.abc.MetaPathFinder):
    """One-shot finder: lets the normal finders locate `name`, then wraps
    its loader's exec_module to call `callback(module)` after it ran."""

    def __init__(self, name, callback):
        self.name, self.callback = name, callback

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)  # the other finders (self removed)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run, callback = loader.exec_module, self.callback

        def exec_module(module):
            run(module)
            try:
                callback(module)
            except Exception as e:  # never break the import itself
                log.warning("blockscale: after importing %s: %s", name, e)

        loader.exec_module = exec_module
        return spec


def call_after_import(name, callback):
    """Calls callback(module) now if module `name` is imported, else right
    after it is (once). Returns "now", "later", or "never" when its top-level
    package is not installed."""
    mod = sys.modules.get(name)
    if mod is not None:
        callback(mod)
        return "now"
    top = name.split(".")[0]
    if top not in sys.modules and importlib.util.find_spec(top) is None:
        return "never"
    if not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, callback))
    return "later"
