# Model.load's ways of naming a model (a folder, the two files, pathlib.Path) and its head
# precision, each against the CLI with the matching flags; and the package as
# `cmake --install --component python` lays it out, imported from the install prefix alone.
import glob
import os
import pathlib
import subprocess
import sys

import pytest

import tern
from conftest import MODEL, ROOT, SAMPLES, TERN

VAE = os.path.join(MODEL, "vibeasr-vae-encoder-i8_s.gguf")
LM = os.path.join(MODEL, "vibeasr-lm-i2_s-embed-q6_k.gguf")


def cli_json(*model_flags, audio=SAMPLES[0]):
    """`tern transcribe MODEL_FLAGS --output-format json AUDIO`'s stdout (bytes)."""
    p = subprocess.run([TERN, "transcribe", *model_flags, "-q", "--output-format", "json", audio],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout


def test_files_instead_of_a_folder():
    want = cli_json("--vae", VAE, "--lm", LM)
    assert want == cli_json("--model", MODEL)
    for m in (tern.Model.load(vae=VAE, lm=LM),
              tern.Model.load(vae=pathlib.Path(VAE), lm=pathlib.Path(LM)),
              tern.Model.load(pathlib.Path("/nowhere"), vae=VAE, lm=LM)):
        assert m.info["vae_path"] == VAE and m.info["lm_path"] == LM
        assert m.session(threads=1).transcribe(SAMPLES[0]).to_json().encode() == want


def test_one_file_overrides_the_folders():
    # The folder supplies the other file; the named one must exist.
    m = tern.Model.load(MODEL, lm=pathlib.Path(LM))
    assert m.info["lm_path"] == LM and m.info["vae_path"] == VAE
    with pytest.raises(tern.Error, match="nowhere.gguf"):
        tern.Model.load(MODEL, vae="/nowhere.gguf")
    with pytest.raises(tern.Error):
        tern.Model.load(vae=VAE)  # no decoder anywhere


def test_pathlib_paths():
    m = tern.Model.load(pathlib.Path(MODEL))
    s = m.session(threads=1)
    want = cli_json("--model", MODEL, audio=SAMPLES[1])
    assert s.transcribe(pathlib.Path(SAMPLES[1])).to_json().encode() == want
    assert "".join(s.stream(pathlib.Path(SAMPLES[1]))) + "\n" == s.transcribe(SAMPLES[1]).to_txt()


@pytest.mark.parametrize("sample", SAMPLES, ids=os.path.basename)
def test_int8_head_equals_cli(sample):
    m = tern.Model.load(MODEL, head="int8")
    assert m.info["head"] == "int8"
    r = m.session(threads=1).transcribe(sample)
    assert r.head == "int8"
    assert r.to_json().encode() == cli_json("--model", MODEL, "--head", "int8", audio=sample)


def test_installed_package_imports_from_the_prefix(tmp_path):
    build = os.environ.get("TERN_BUILD_DIR") or os.path.join(ROOT, "build")
    cmake = os.environ.get("TERN_CMAKE") or "cmake"
    prefix = tmp_path / "prefix"
    p = subprocess.run([cmake, "--install", build, "--prefix", str(prefix), "--component",
                        "python"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode == 0, p.stdout.decode()
    inits = glob.glob(str(prefix / "lib" / "python3*" / "*-packages" / "tern" / "__init__.py"))
    assert len(inits) == 1, list(prefix.rglob("*"))
    site = os.path.dirname(os.path.dirname(inits[0]))
    assert sorted(os.listdir(os.path.join(site, "tern"))) == sorted(
        ["__init__.py", "batch.py", os.path.basename(tern._tern.__file__)])
    # Nothing of the build tree on the path: the installed copy alone.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = site
    code = ("import sys, tern, tern.batch; print(tern.__file__); "
            "print(tern.Model.load(sys.argv[1]).session(threads=1).transcribe(sys.argv[2])"
            ".to_json(), end='')")
    p = subprocess.run([sys.executable, "-c", code, MODEL, SAMPLES[0]], env=env, cwd=tmp_path,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    where, _, out = p.stdout.partition(b"\n")
    assert where.decode() == os.path.join(site, "tern", "__init__.py")
    assert out == cli_json("--model", MODEL)
