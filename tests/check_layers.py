#!/usr/bin/env python3
"""check_layers.py - checks bgnn's include graph against its layering (docs/architecture.md).

Every C source and header of the product (and the grammar's .l/.y) belongs to the layer of
its folder; each quoted #include is resolved to a file of the tree and must belong to the
same layer or to one the including layer may use:

    base      <- loaders <- plan <- compiler, runtime   (beside each other: neither includes
                                                          the other)
    reference over compiler (the IR) and loaders
    api, cli  on top of every layer, and the public header include/bgnn/bgnn.h

An include that resolves to no file of the tree (other than the generated parser.h /
lexer.h) is an error too, so a relative path cannot hide an edge.  The object libraries of
CMakeLists.txt enforce the same rule at build time; this check also covers paths like
"../runtime/x.h".

    tests/check_layers.py [ROOT]     check the tree at ROOT (default: this file's repo)
    tests/check_layers.py --self-test  plant violations in a copy and expect them caught
Exit status 0 when the graph is clean, 1 with one line per offending include.
"""
import os
import re
import shutil
import sys
import tempfile

# folder -> layer
LAYER_DIRS = {
    "base": "base",
    "loaders": "loaders",
    "plan": "plan",
    "compiler": "compiler",
    "compiler/passes": "compiler",
    "compiler/codegen": "compiler",
    "grammar": "compiler",
    "reference": "reference",
    "runtime": "runtime",
    "api": "api",
    "cli": "cli",
    "include/bgnn": "public",
}
ALLOWED = {
    "base": {"base"},
    "loaders": {"base", "loaders"},
    "plan": {"base", "loaders", "plan"},
    "compiler": {"base", "loaders", "plan", "compiler"},
    "reference": {"base", "loaders", "compiler", "reference"},
    "runtime": {"base", "loaders", "plan", "runtime"},
    "api": {"base", "loaders", "plan", "compiler", "reference", "runtime", "api", "public"},
    "cli": {"base", "loaders", "plan", "compiler", "reference", "runtime", "api", "cli", "public"},
    "public": {"public"},
}
GENERATED = {"parser.h": "compiler", "lexer.h": "compiler"}  # bison / flex output
SOURCE_EXT = (".c", ".h", ".def", ".l", ".y")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_files(root):
    """{relative path: layer} for every product file."""
    files = {}
    for d, layer in LAYER_DIRS.items():
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            continue
        for name in sorted(os.listdir(full)):
            if name.endswith(SOURCE_EXT) and os.path.isfile(os.path.join(full, name)):
                files[os.path.join(d, name)] = layer
    return files


def resolve(root, files, src, inc):
    """The tree file an include of src names: next to src first, then any layer folder
    (the build's include path); None when it names no file of the tree."""
    here = os.path.normpath(os.path.join(os.path.dirname(src), inc))
    if here in files:
        return here
    if os.path.exists(os.path.join(root, here)):
        return here  # a file outside the layer folders (tests/, bench/): never allowed
    for d in list(LAYER_DIRS) + ["include"]:
        cand = os.path.normpath(os.path.join(d, inc))
        if cand in files:
            return cand
    return None


def check(root):
    files = layer_files(root)
    problems = []
    for src, layer in sorted(files.items()):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            target = resolve(root, files, src, inc)
            if target is None:
                if os.path.basename(inc) in GENERATED and inc == os.path.basename(inc):
                    tlayer = GENERATED[inc]
                else:
                    problems.append(f"{src}:{line}: #include \"{inc}\" names no file of the tree")
                    continue
            else:
                tlayer = files.get(target)
                if tlayer is None:
                    problems.append(f"{src}:{line}: #include \"{inc}\" reaches {target}, outside every layer")
                    continue
            if tlayer not in ALLOWED[layer]:
                problems.append(f"{src}:{line}: {layer} includes \"{inc}\" of layer {tlayer} "
                                f"(a {layer} file may include {', '.join(sorted(ALLOWED[layer]))})")
    return files, problems


def self_test(root):
    """Copies the layer folders, plants one violation of each kind and expects each caught."""
    plants = [
        ("compiler/ir.c", '#include "rt.h"\n', "compiler includes \"rt.h\" of layer runtime"),
        ("loaders/graph.c", '#include "bg.h"\n', "loaders includes \"bg.h\" of layer compiler"),
        ("runtime/exec.c", '#include "../compiler/bg.h"\n', "runtime includes \"../compiler/bg.h\" of layer compiler"),
        ("reference/interp.c", '#include "gpu.h"\n', "reference includes \"gpu.h\" of layer runtime"),
        ("plan/plan.c", '#include "no_such.h"\n', "names no file of the tree"),
    ]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for d in LAYER_DIRS:
            if os.path.isdir(os.path.join(root, d)):
                shutil.copytree(os.path.join(root, d), os.path.join(tmp, d), dirs_exist_ok=True)
        _, clean = check(tmp)
        if clean:
            print("self-test: the unmodified copy is not clean:", *clean, sep="\n  ")
            ok = False
        for path, line, expect in plants:
            full = os.path.join(tmp, path)
            with open(full, encoding="utf-8") as f:
                orig = f.read()
            with open(full, "w", encoding="utf-8") as f:
                f.write(line + orig)
            _, found = check(tmp)
            with open(full, "w", encoding="utf-8") as f:
                f.write(orig)
            if not any(expect in p for p in found):
                print(f"self-test: planting {line.strip()} in {path} was not caught ({found})")
                ok = False
    print("self-test: every planted violation was caught" if ok else "self-test: FAILED")
    return 0 if ok else 1


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test(argv[2] if len(argv) > 2 else here)
    root = argv[1] if len(argv) > 1 else here
    files, problems = check(root)
    for p in problems:
        print(p)
    counts = {}
    for layer in files.values():
        counts[layer] = counts.get(layer, 0) + 1
    print(f"{len(files)} files in {len(counts)} layers "
          f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}); "
          f"{len(problems)} includes break the layering")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
