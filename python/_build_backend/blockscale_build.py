# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PEP 517 build backend of blockscale (standard library only).

``pip install .`` and ``pip wheel .`` call this (pyproject.toml,
``backend-path``). It builds the CMake target ``blockscale_c`` and writes a
wheel with the Python package (python/blockscale/**) and the library as
``blockscale/_lib/libblockscale_c.so``; the library links MLIR, LLVM and the
C++ runtime statically, so the wheel needs no LLVM where it is installed.

Build directory: ``config_settings["build-dir"]`` (``pip ... -C
build-dir=PATH``), else ``$BLOCKSCALE_BUILD_DIR``, else ``build-wheel/`` in
the checkout. An existing configured directory (one with a CMakeCache.txt,
e.g. the ``build/`` of scripts/build.sh) is reused as it is; otherwise it is
configured like scripts/build.sh does (Release, Ninja when present,
``$MLIR_DIR`` or Debian's LLVM 22, ``$CUDA_HOME`` or /usr/local/cuda).

Metadata come from pyproject.toml's [project] table; the version from
``project(blockscale VERSION ...)`` in CMakeLists.txt (read by
python/blockscale/_version.py, which the package itself uses too), the git
commit from the build's generated Version.h.
"""
import base64
import hashlib
import importlib.util
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG_DIR = os.path.join(ROOT, "python", "blockscale")
LIB_NAME = "libblockscale_c.so"
DEFAULT_MLIR_DIR = "/usr/lib/llvm-22/lib/cmake/mlir"


# --------------------------------------------------------------------------
# Metadata
# --------------------------------------------------------------------------

def _load_version_module():
    spec = importlib.util.spec_from_file_location(
        "_blockscale_version", os.path.join(PKG_DIR, "_version.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def project_version():
    v = _load_version_module().version_from_cmake(os.path.join(ROOT, "CMakeLists.txt"))
    if not v:
        raise RuntimeError("blockscale build: no project(blockscale VERSION x.y.z) in "
                           + os.path.join(ROOT, "CMakeLists.txt"))
    return v


def pyproject():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        raise RuntimeError("building blockscale needs Python >= 3.11 (tomllib); the wheel "
                           "it builds runs on Python >= 3.9") from None
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def metadata_text():
    """The METADATA file (core metadata 2.1)."""
    p = pyproject()["project"]
    lines = ["Metadata-Version: 2.1",
             f"Name: {p['name']}",
             f"Version: {project_version()}",
             f"Summary: {p['description']}"]
    if "license" in p:
        lines.append(f"License: {p['license']}")
    lines.append(f"Requires-Python: {p['requires-python']}")
    for d in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {d}")
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for d in deps:
            lines.append(f'Requires-Dist: {d}; extra == "{extra}"')
    body = ""
    readme = p.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def platform_tag():
    if not sys.platform.startswith("linux"):
        raise RuntimeError("blockscale builds on Linux only (NVIDIA Hopper, CUDA 13)")
    return "linux_" + platform.machine().replace("-", "_").replace(".", "_")


def wheel_tag():
    return "py3-none-" + platform_tag()


def dist_info_name():
    return f"blockscale-{project_version()}.dist-info"


def wheel_text(tag):
    return ("Wheel-Version: 1.0\n"
            "Generator: blockscale_build (python/_build_backend)\n"
            "Root-Is-Purelib: false\n"
            f"Tag: {tag}\n")


# --------------------------------------------------------------------------
# CMake
# --------------------------------------------------------------------------

def build_dir(config_settings=None):
    d = ((config_settings or {}).get("build-dir") or os.environ.get("BLOCKSCALE_BUILD_DIR")
         or os.path.join(ROOT, "build-wheel"))
    return os.path.abspath(d)


def _run(cmd):
    # The build's output goes to stderr: stdout may be the frontend's channel.
    print("blockscale build: " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=sys.stderr, stderr=sys.stderr)


def configure_args(bdir):
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("blockscale build: cmake not found (scripts/setup.sh installs the "
                           "build dependencies)")
    args = [cmake, "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    mlir = os.environ.get("MLIR_DIR") or (DEFAULT_MLIR_DIR if os.path.isdir(DEFAULT_MLIR_DIR)
                                          else None)
    if mlir:
        args.append(f"-DMLIR_DIR={mlir}")
    cuda = os.environ.get("CUDA_HOME") or ("/usr/local/cuda" if os.path.isdir("/usr/local/cuda")
                                           else None)
    if cuda:
        args.append(f"-DCUDAToolkit_ROOT={cuda}")
    return args


def read_version_header(bdir):
    """(version, commit) from <build>/include/blockscale/Version.h."""
    path = os.path.join(bdir, "include", "blockscale", "Version.h")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    v = re.search(r'#define BLOCKSCALE_VERSION "([^"]*)"', text)
    c = re.search(r'#define BLOCKSCALE_GIT_COMMIT "([^"]*)"', text)
    return (v.group(1) if v else None), (c.group(1) if c else "unknown")


def build_library(config_settings=None):
    """Configures (when needed) and builds blockscale_c; returns (path of the
    library, git commit it was built from)."""
    bdir = build_dir(config_settings)
    if not os.path.exists(os.path.join(bdir, "CMakeCache.txt")):
        _run(configure_args(bdir))
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    _run([shutil.which("cmake"), "--build", bdir, "--target", "blockscale_c", "-j", jobs])
    lib = os.path.join(bdir, "lib", LIB_NAME)
    if not os.path.exists(lib):
        raise RuntimeError(f"blockscale build: {lib} was not built")
    version, commit = read_version_header(bdir)
    if version != project_version():
        raise RuntimeError(f"blockscale build: {bdir} was configured for version {version} but "
                           f"CMakeLists.txt says {project_version()}; reconfigure it")
    return lib, commit


# --------------------------------------------------------------------------
# Wheels
# --------------------------------------------------------------------------

def package_files():
    """(archive name, path) of the package's Python files, without caches
    and without a library left in python/blockscale/_lib by an editable
    install."""
    out = []
    for dirpath, dirnames, filenames in os.walk(PKG_DIR):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", "_lib"))
        for fn in sorted(filenames):
            if fn.endswith(".py") and fn != "_build_info.py":
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, os.path.dirname(PKG_DIR))
                out.append((rel.replace(os.sep, "/"), path))
    return out


def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class _WheelWriter:
    def __init__(self, path):
        self.zf = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records = []
        # Reproducible timestamps: SOURCE_DATE_EPOCH, else a fixed date.
        t = int(os.environ.get("SOURCE_DATE_EPOCH", "1704067200"))
        self.date = time.gmtime(max(t, 315532800))[:6]

    def add(self, arcname, data, mode=0o644):
        info = zipfile.ZipInfo(arcname, date_time=self.date)
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data)
        self.records.append(f"{arcname},{_record_hash(data)},{len(data)}")

    def close(self, record_name):
        self.records.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=self.date)
        info.external_attr = (0o100644) << 16
        self.zf.writestr(info, "\n".join(self.records) + "\n")
        self.zf.close()


def _write_dist_info(w, tag):
    di = dist_info_name()
    w.add(f"{di}/METADATA", metadata_text().encode())
    w.add(f"{di}/WHEEL", wheel_text(tag).encode())
    w.add(f"{di}/top_level.txt", b"blockscale\n")
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        w.add(f"{di}/LICENSE", f.read())
    return di


def _wheel_name(tag):
    return f"blockscale-{project_version()}-{tag}.whl"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    lib, commit = build_library(config_settings)
    tag = wheel_tag()
    name = _wheel_name(tag)
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, name)
    w = _WheelWriter(path)
    for arc, src in package_files():
        with open(src, "rb") as f:
            w.add(arc, f.read())
    w.add("blockscale/_build_info.py",
          (f'"""Written by the build backend: the wheel\'s version and the git commit of '
           f'_lib/{LIB_NAME}."""\nversion = "{project_version()}"\n'
           f'git_commit = "{commit}"\n').encode())
    with open(lib, "rb") as f:
        w.add(f"blockscale/_lib/{LIB_NAME}", f.read(), mode=0o755)
    di = _write_dist_info(w, tag)
    w.close(f"{di}/RECORD")
    return name


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: the library is built and copied into
    python/blockscale/_lib/ (ignored by git), and a .pth file puts python/
    on sys.path."""
    lib, _ = build_library(config_settings)
    os.makedirs(os.path.join(PKG_DIR, "_lib"), exist_ok=True)
    shutil.copy2(lib, os.path.join(PKG_DIR, "_lib", LIB_NAME))
    tag = wheel_tag()
    name = _wheel_name(tag)
    os.makedirs(wheel_directory, exist_ok=True)
    w = _WheelWriter(os.path.join(wheel_directory, name))
    w.add("blockscale_editable.pth", (os.path.join(ROOT, "python") + "\n").encode())
    di = _write_dist_info(w, tag)
    w.close(f"{di}/RECORD")
    return name


def _write_metadata(metadata_directory):
    di = dist_info_name()
    d = os.path.join(metadata_directory, di)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(metadata_text())
    with open(os.path.join(d, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(wheel_text(wheel_tag()))
    return di


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _write_metadata(metadata_directory)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, plus PKG-INFO (needs a git checkout)."""
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                               capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError("blockscale build_sdist: needs a git checkout (git ls-files)") from e
    base = f"blockscale-{project_version()}"
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel in sorted(f for f in files if f):
            p = os.path.join(ROOT, rel)
            if os.path.isfile(p):
                tf.add(p, arcname=f"{base}/{rel}", recursive=False)
        data = metadata_text().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(data)
        info.mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "1704067200"))
        tf.addfile(info, io.BytesIO(data))
    return name
