"""Writes the MinHashLSH files of minlsh before the store's metadata (0.1's
JSON beside the index): saved-0.1.mlsh (save), mapped-0.1.mlsh (save with
mapped=True) and its journal. Run with the binding of that code (main at
its commit 19b219e); bindings/python/tests/test_lsh.py loads them.
    python3 write.py tests/golden/bindings/minhashlsh
"""
import os
import sys

import minlsh

out = sys.argv[1]


def mh(tokens, seed=11):
    m = minlsh.MinHash(num_perm=64, seed=seed)
    for t in tokens:
        m.update(t.encode())
    return m


KEYS = ["text", 42, -7, 2 ** 70, 3.5, True, None, b"\x00bytes\xff", ("tuple", 1, (2.5, None)),
        (), "ünïcödé", ""]
lsh = minlsh.MinHashLSH(threshold=0.6, num_perm=64, weights=(0.4, 0.6), seed=11,
                        config_id=0x1234)
for i, key in enumerate(KEYS):
    lsh.insert(key, mh(["w%d" % (i // 2), "x%d" % i, "y", "z"]))
lsh.remove(-7)
lsh.save(os.path.join(out, "saved-0.1.mlsh"))
lsh.save(os.path.join(out, "mapped-0.1.mlsh"), mapped=True)
m = minlsh.MinHashLSH.map(os.path.join(out, "mapped-0.1.mlsh"))
with m.open_journal(os.path.join(out, "mapped-0.1.mlsh.journal")) as j:
    m.insert("journaled", mh(["w0", "x0", "y", "z", "extra"]))
    m.insert("gone", mh(["q"]))
    m.remove("gone")
    j.sync()
