#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# torchao's blockwise FP8 training prototype, for the benches only (issue 32):
# never part of the project, never committed (.torchao/ is ignored).
#
#   scripts/fetch-torchao.sh SOURCE [--ref REF] [--out DIR]
#
# SOURCE is a git directory of pytorch/ao (a bare mirror or a checkout) or,
# where there is a network, its git URL. Extracts from commit REF (default
# HEAD) the Python files that `import torchao.prototype.blockwise_fp8_training.
# linear` and `.kernels` load at import time (followed through their torchao
# imports), each package's __init__.py replaced by a stub, and torchao's
# LICENSE, into DIR/src (default .torchao/src); packs them as
# DIR/torchao.tar.xz for the device tool's carry (carry [".torchao"]:
# scripts/gpu-check.sh unpacks it and sets BLOCKSCALE_TORCHAO). The commit is
# in DIR/src/SOURCE.txt and torchao.__commit__. No torchao code is copied
# anywhere else; the benches find it through bench/torchao_anchor.py.
set -euo pipefail
cd "$(dirname "$0")/.."
src="" ref=HEAD out=.torchao
while [ $# -gt 0 ]; do
  case $1 in
    --ref) ref=${2:?--ref needs a git ref}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fetch-torchao: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$src" ] || { echo "fetch-torchao: one SOURCE" >&2; exit 2; }; src=$1; shift ;;
  esac
done
[ -n "$src" ] || { sed -n '2,17p' "$0" >&2; exit 2; }
if [ "$out" = .torchao ] && ! git check-ignore -q .torchao/src/x; then
  echo "fetch-torchao: .torchao/ is not ignored by git (add /.torchao/ to .gitignore)" >&2; exit 2
fi

tmp=$(mktemp -d /tmp/fetch-torchao.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -d "$src" ]; then
  gitdir=$(git -C "$src" rev-parse --absolute-git-dir)
else
  git clone -q --bare --filter=blob:none "$src" "$tmp/ao.git"
  gitdir=$tmp/ao.git
fi
sha=$(git --git-dir="$gitdir" rev-parse --verify "$ref^{commit}")

rm -rf "$out/src" "$out/torchao.tar.xz"
mkdir -p "$out/src"
python3 - "$gitdir" "$sha" "$out/src" "$src" <<'EOF'
import ast, subprocess, sys, os
gitdir, sha, dest, origin = sys.argv[1:]
ROOTS = ["torchao.prototype.blockwise_fp8_training.linear",
         "torchao.prototype.blockwise_fp8_training.kernels"]
git = lambda *a: subprocess.run(["git", "--git-dir", gitdir, *a], check=True,
                                capture_output=True, text=True).stdout
files = set(git("ls-tree", "-r", "--name-only", sha, "torchao").split("\n")) - {""}

def path_of(mod):
    p = mod.replace(".", "/")
    return next((f for f in (p + ".py", p + "/__init__.py") if f in files), None)

def imports(tree, mod, is_pkg):
    """(module, guarded) of each torchao import run at import time: module
    level, class bodies, if/try/with blocks; not inside functions (lazy)."""
    out = []
    def visit(nodes, guarded):
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(n, ast.Import):
                out.extend((a.name, guarded) for a in n.names)
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    pkg = mod.split(".")[: len(mod.split(".")) - n.level + (1 if is_pkg else 0)]
                    base = ".".join(pkg + ([n.module] if n.module else []))
                for a in n.names:  # `from pkg import sub` may name a submodule
                    sub = f"{base}.{a.name}"
                    out.append((sub if path_of(sub) else base, guarded))
            visit(list(ast.iter_child_nodes(n)), guarded or isinstance(n, ast.Try))
    visit(tree.body, False)
    return [(m, g) for m, g in out if m == "torchao" or m.startswith("torchao.")]

need, todo, errors = {}, list(ROOTS), []
while todo:
    mod = todo.pop()
    if mod in need:
        continue
    path = path_of(mod)
    if path is None:
        errors.append(f"{mod}: no such module at {sha}")
        continue
    if path.endswith("__init__.py"):
        errors.append(f"{mod}: a package's __init__ is needed (its names), which the subset "
                      f"replaces with a stub; extract it by hand")
        continue
    need[mod] = path
    text = git("show", f"{sha}:{path}")
    for m, guarded in imports(ast.parse(text, path), mod, False):
        if m != "torchao" and not (guarded and path_of(m) is None):
            todo.append(m)
if errors:
    sys.exit("fetch-torchao: " + "\n  ".join(errors))

for mod, path in sorted(need.items()):
    os.makedirs(os.path.join(dest, os.path.dirname(path)), exist_ok=True)
    with open(os.path.join(dest, path), "w") as f:
        f.write(git("show", f"{sha}:{path}"))
pkgs = {p.rsplit("/", 1)[0] for p in need.values()}
pkgs |= {"/".join(p.split("/")[:i]) for p in pkgs for i in range(1, p.count("/") + 1)}
for pkg in sorted(pkgs):
    with open(os.path.join(dest, pkg, "__init__.py"), "w") as f:
        f.write("# Stub written by blockscale's scripts/fetch-torchao.sh: the package's own "
                "__init__ is not extracted.\n")
        if pkg == "torchao":
            f.write(f'__commit__ = "{sha}"\n__version__ = "git-{sha[:12]}"\n')
if "LICENSE" in git("ls-tree", "--name-only", sha, "LICENSE"):
    with open(os.path.join(dest, "LICENSE"), "w") as f:
        f.write(git("show", f"{sha}:LICENSE"))
date = git("show", "-s", "--format=%cI", sha).strip()
with open(os.path.join(dest, "SOURCE.txt"), "w") as f:
    f.write(f"repository pytorch/ao ({origin})\ncommit {sha}\ndate {date}\n"
            f"modules {' '.join(ROOTS)}\nfiles {' '.join(sorted(need.values()))}\n")
print(f"fetch-torchao: {len(need)} files of {sha[:12]} ({date}): "
      + ", ".join(sorted(need.values())))
EOF
tar -C "$out/src" -cf - . | xz -T0 -6 > "$out/torchao.tar.xz.tmp"
mv "$out/torchao.tar.xz.tmp" "$out/torchao.tar.xz"
du -sh "$out/src" "$out/torchao.tar.xz"
