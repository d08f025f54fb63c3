"""pip install --no-build-isolation .  (Debian's setuptools; nothing is downloaded)

Builds the Python package `tern` (python/) with CMake, for the interpreter running pip: the
engine and the pybind11 module _tern, then the package's pure-Python files.
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(tern VERSION ([0-9.]+)", f.read()).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.join(os.path.abspath(self.build_temp), "cmake")
        subprocess.check_call([
            "cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "tern_python",
                               "-j", str(os.cpu_count() or 1)])
        built = os.path.join(build, "python", "tern")
        module = [n for n in os.listdir(built) if n.startswith("_tern.") and n.endswith(".so")]
        if len(module) != 1:
            raise RuntimeError(f"{built}: expected one _tern module, found {module}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(built, module[0]), dest)


setup(
    name="tern",
    version=version(),
    description="tern: quantized speech recognition on CPUs (VibeVoice-ASR)",
    packages=["tern"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("tern._tern")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
