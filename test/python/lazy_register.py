# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""blockscale._lazy.call_after_import with a fake torchtitan package: the
callback runs when the module is imported after the call, at once when it
was imported before, never when the package is absent (no torch needed)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from blockscale import _lazy  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    pkg = os.path.join(tmp, "faketitan", "protocols")
    os.makedirs(pkg)
    for d in (os.path.join(tmp, "faketitan"), pkg):
        open(os.path.join(d, "__init__.py"), "w").close()
    with open(os.path.join(pkg, "model_converter.py"), "w") as f:
        f.write("registry = {}\n"
                "def register_model_converter(cls, name):\n"
                "    assert name not in registry, name\n"
                "    registry[name] = cls\n")
    sys.path.insert(0, tmp)

    def register(module):
        from faketitan.protocols.model_converter import register_model_converter
        register_model_converter(object, "blockscale")

    print("absent:", _lazy.call_after_import("nosuchpkg.protocols.model_converter", register))
    print("before import:", _lazy.call_after_import("faketitan.protocols.model_converter",
                                                    register))
    print("again (one hook):", _lazy.call_after_import("faketitan.protocols.model_converter",
                                                       register),
          sum(isinstance(f, _lazy._AfterImport) for f in sys.meta_path))
    import faketitan.protocols.model_converter as mc
    print("registered on import:", sorted(mc.registry))
    print("hook removed:", not any(isinstance(f, _lazy._AfterImport) for f in sys.meta_path))
    mc.registry.clear()
    print("after import:", _lazy.call_after_import("faketitan.protocols.model_converter", register),
          sorted(mc.registry))
