"""Build hooks: the optional C accelerator, and the C library bundled when
the package is built from the minlsh source tree.

Everything else is in pyproject.toml.

minlsh._speedups (minlsh/_speedups.c) is an optional extension: it needs
a C compiler and Python's headers (Debian: python3-dev), and when it cannot
be built, setuptools only warns and the package runs its ctypes paths, with
the same results (docs/ffi.md). It does not link libminlsh.

When build/libminlsh.so.0 of the source tree exists (after `make`), or
MINLSH_BUNDLE_LIBRARY names a library file, it is copied next to the
package as libminlsh.so.0, where the package looks first (docs/ffi.md);
MINLSH_BUNDLE_LIBRARY=0 turns the copy off, so the installed package finds
the system's library by its SONAME; a copy left in build/ by an earlier
build is removed then, so the switch holds on a reinstall too.
"""
import os
import shutil

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SONAME = "libminlsh.so.0"


def library_to_bundle():
    choice = os.environ.get("MINLSH_BUNDLE_LIBRARY", "")
    if choice == "0":
        return None
    if choice:
        if not os.path.isfile(choice):
            raise SystemExit("MINLSH_BUNDLE_LIBRARY=%s: no such file" % choice)
        return choice
    tree = os.path.join(HERE, "..", "..", "build", SONAME)
    return tree if os.path.isfile(tree) else None


class BuildPy(build_py):
    def run(self):
        super().run()
        lib = library_to_bundle()
        dst = os.path.join(self.build_lib, "minlsh", SONAME)
        if lib:
            shutil.copyfile(os.path.realpath(lib), dst)
            self.announce("minlsh: bundled %s" % lib, level=2)
        elif os.path.exists(dst):
            # build/ outlives a build: a copy bundled by an earlier one would
            # otherwise go into this package too.
            os.remove(dst)
            self.announce("minlsh: removed %s bundled by an earlier build" % dst, level=2)


SPEEDUPS = Extension("minlsh._speedups", ["minlsh/_speedups.c"], optional=True)

setup(cmdclass={"build_py": BuildPy}, ext_modules=[SPEEDUPS])
