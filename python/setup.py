# Bundles libflexjit.so into the package when FLEXJIT_LIBRARY names it at install time
# (`FLEXJIT_LIBRARY=build/libflexjit.so pip install ./python`), so the installed package finds
# its library without any environment. Without it, the package looks for the library at run time
# (FLEXJIT_LIBRARY, then the system's library path): see flexjit/_lib.py.
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        library = os.environ.get("FLEXJIT_LIBRARY")
        if library:
            if not os.path.isfile(library):
                raise SystemExit(f"FLEXJIT_LIBRARY={library} is not a file: build libflexjit.so first "
                                 "(ninja -C build flexjit_shared)")
            target = os.path.join(self.build_lib, "flexjit", "libflexjit.so")
            shutil.copyfile(os.path.realpath(library), target)


setup(cmdclass={"build_py": BuildWithLibrary})
