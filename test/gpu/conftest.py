# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("GPU tests need a CUDA device", allow_module_level=True)
