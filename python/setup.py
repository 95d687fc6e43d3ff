# setup.py -- builds libnumrpc from the repository's C sources (../common, ../client) into the
# package (numrpc/_libs/libnumrpc.so) during `pip install ./python`; pyproject.toml holds the metadata.
"""The one compiled part of the numrpc package: libnumrpc, bundled.

pip calls this through setuptools' PEP 517 backend. The library is compiled
straight from the C sources with the compiler (no configure: the autotools
build also wants flex, bison, libtool, a C++ compiler, libseccomp... that the
client library does not use). Which files make the library is read from
client/Makefile.am and common/Makefile.am, the autotools build's own lists,
so the two builds cannot drift apart. Everything setuptools writes (build/,
*.egg-info, the objects) goes to a temporary directory: the source tree is
left as it was.
"""
import atexit
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel package: `pip install` from a wheel cannot happen anyway
        bdist_wheel = None

HERE = Path(__file__).resolve().parent
TOP = HERE.parent  # the numrpc repository
LIBRARY = "libnumrpc.so"

# setuptools' scratch (build/, the egg-info, the objects) in one temporary
# directory, removed when this process ends.
SCRATCH = tempfile.mkdtemp(prefix="numrpc-setup-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


def makefile_sources(makefile_am, variable):
    """The .c files of an automake SOURCES variable (its unconditional part:
    the `+=` inside `if` blocks add optional parts, e.g. the Fortran side)."""
    text = makefile_am.read_text().replace("\\\n", " ")
    depth, files = 0, None
    for line in text.splitlines():
        word = line.split()[0] if line.split() else ""
        if word == "if":
            depth += 1
        elif word == "endif":
            depth -= 1
        elif depth == 0:
            m = re.match(rf"\s*{variable}\s*=(.*)", line)
            if m:
                files = [f for f in m.group(1).split() if f.endswith(".c")]
    if not files:
        raise RuntimeError(f"numrpc: no {variable} in {makefile_am}")
    return [makefile_am.parent / f for f in files]


def package_version():
    """AC_INIT's version in configure.ac: the C build's PACKAGE_VERSION."""
    m = re.search(r"AC_INIT\(\[[^]]*\],\s*\[([^]]*)\]", (TOP / "configure.ac").read_text())
    if not m:
        raise RuntimeError("numrpc: no version in configure.ac's AC_INIT")
    return m.group(1)


def pkg_config(packages, fallback_cflags, fallback_libs):
    """Compiler and linker flags of packages (pkg-config; fallback without it)."""
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", *packages], check=True, capture_output=True,
                                text=True).stdout
        libs = subprocess.run(["pkg-config", "--libs", *packages], check=True, capture_output=True,
                              text=True).stdout
        return shlex.split(cflags), shlex.split(libs)
    except (OSError, subprocess.CalledProcessError):
        return fallback_cflags, fallback_libs


def build_library(out_dir, temp_dir, log=print):
    """Compiles libnumrpc into out_dir/libnumrpc.so, objects in temp_dir, one
    compiler a CPU. Returns the library's path."""
    if not (TOP / "client" / "Makefile.am").exists():
        raise RuntimeError(f"numrpc: no C sources in {TOP} (client/, common/): build the package from "
                           "the numrpc repository, `pip install ./python`, or set NUMRPC_LIB to a built libnumrpc")
    sources = (makefile_sources(TOP / "common" / "Makefile.am", "libcommon_la_SOURCES")
               + makefile_sources(TOP / "client" / "Makefile.am", "libnumrpc_la_SOURCES"))
    deps_cflags, deps_libs = pkg_config(["libtirpc", "openssl"], ["-I/usr/include/tirpc"],
                                        ["-ltirpc", "-lssl", "-lcrypto"])
    cc = shlex.split(os.environ.get("CC") or "cc")
    # The flags of client/Makefile.am and common/Makefile.am, plus -fPIC (libtool's), then the user's.
    cflags = ["-std=gnu11", "-O2", "-fPIC", "-fvisibility=hidden", "-pthread",
              f'-DPACKAGE_VERSION="{package_version()}"', f"-I{TOP / 'include'}", f"-I{TOP / 'common'}",
              *deps_cflags, *shlex.split(os.environ.get("CFLAGS", ""))]
    os.makedirs(temp_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)

    def compile_one(source):
        obj = os.path.join(temp_dir, f"{source.parent.name}-{source.stem}.o")
        done = subprocess.run([*cc, *cflags, "-c", str(source), "-o", obj], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"numrpc: compiling {source} failed:\n{done.stdout}{done.stderr}")
        return obj

    log(f"numrpc: compiling libnumrpc ({len(sources)} C files, {os.cpu_count() or 1} at a time)")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        objects = list(pool.map(compile_one, sources))
    library = os.path.join(out_dir, LIBRARY)
    # -z defs: a source missing from the lists fails here, not at import.
    link = [*cc, "-shared", "-o", library, *objects, "-Wl,-soname,libnumrpc.so.0", "-Wl,-z,defs",
            *shlex.split(os.environ.get("LDFLAGS", "")), "-pthread", *deps_libs, "-lpthread", "-lm"]
    done = subprocess.run(link, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"numrpc: linking libnumrpc failed:\n{shlex.join(link)}\n{done.stdout}{done.stderr}")
    return library


class BuildWithLibrary(build_py):
    """build_py, then libnumrpc into the built package (numrpc/_libs)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):  # pip install -e: beside the sources
            out_dir = HERE / "numrpc" / "_libs"
        else:
            out_dir = Path(self.build_lib) / "numrpc" / "_libs"
        self._library = build_library(str(out_dir), os.path.join(SCRATCH, "objects"),
                                      log=lambda m: self.announce(m, level=2))

    def get_outputs(self, include_bytecode=1):
        library = getattr(self, "_library", None)
        return super().get_outputs(include_bytecode) + ([library] if library else [])


class BinaryDistribution(Distribution):
    """A package with a compiled file: platform-specific (platlib, a platform wheel)."""

    def has_ext_modules(self):
        return True


commands = {"build_py": BuildWithLibrary}
if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """py3-none-PLATFORM: the library is loaded by ctypes, so any Python 3
        on the platform can use it (no CPython ABI involved)."""

        def get_tag(self):
            _, _, platform = super().get_tag()
            return "py3", "none", platform

    commands["bdist_wheel"] = PlatformWheel

setup(
    cmdclass=commands,
    distclass=BinaryDistribution,
    options={"build": {"build_base": os.path.join(SCRATCH, "build")},
             "egg_info": {"egg_base": SCRATCH}},
)
