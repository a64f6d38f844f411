"""The ctypes structs of minlsh/_ffi.py have the layout of minlsh.h: the size
and every field's offset, as a C compiler sees them. A struct that falls
behind the header makes the library read or write past it."""
import ctypes
import os
import shutil
import subprocess

import pytest

from minlsh import _ffi

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

STRUCTS = {
    "minlsh_shingler_options": _ffi.ShinglerOptions,
    "minlsh_plan_options": _ffi.PlanOptions,
    "minlsh_load_options": _ffi.LoadOptions,
    "minlsh_dedup_options": _ffi.DedupOptions,
    "minlsh_dedup_decision": _ffi.DedupDecision,
    "minlsh_dedup_stats": _ffi.DedupStats,
    "minlsh_dedup_edge": _ffi.DedupEdge,
    "minlsh_novel_options": _ffi.NovelOptions,
    "minlsh_novel_result": _ffi.NovelResult,
}


def _c_layout(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    lines = ["#define MINLSH_EXPERIMENTAL_API 1", "#include <minlsh.h>",
             "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    for cname, py in STRUCTS.items():
        lines.append('    printf("%s size %%zu\\n", sizeof(%s));' % (cname, cname))
        for field, _ in py._fields_:
            lines.append('    printf("%s %s %%zu\\n", offsetof(%s, %s));'
                         % (cname, field, cname, field))
    lines += ["    return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c99", "-I", os.path.join(REPO, "include"), str(src), "-o",
                    str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_structs_match_the_header(tmp_path):
    c = _c_layout(tmp_path)
    for cname, py in STRUCTS.items():
        assert ctypes.sizeof(py) == c[(cname, "size")], cname
        for field, _ in py._fields_:
            assert getattr(py, field).offset == c[(cname, field)], (cname, field)
