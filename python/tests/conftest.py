# Shared by the Python tests: where the source tree, the CLI and the bundled model are (ctest
# passes TERN_SOURCE_DIR and TERN_BINARY), running the CLI, and WAV files from NumPy arrays.
import os
import subprocess
import wave

import numpy as np
import pytest

ROOT = os.environ.get("TERN_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TERN = os.environ.get("TERN_BINARY") or os.path.join(ROOT, "build", "bin", "tern")
MODEL = os.path.join(ROOT, "models", "tiny-en")
# The single-request demo clips (NAME.wav with NAME.txt beside it; a dialogue has NAME.json).
SAMPLES = sorted(os.path.join(ROOT, "samples", n)
                 for n in os.listdir(os.path.join(ROOT, "samples"))
                 if n.endswith(".wav") and
                 os.path.exists(os.path.join(ROOT, "samples", n[:-4] + ".txt")))


def run_cli(*args, check=True):
    """`tern transcribe --model models/tiny-en -q ARGS...`; its CompletedProcess (bytes)."""
    p = subprocess.run([TERN, "transcribe", "--model", MODEL, "-q", *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and p.returncode != 0:
        raise AssertionError(f"tern transcribe {' '.join(args)}: exit {p.returncode}: "
                             f"{p.stderr.decode()}")
    return p


def read_wav(path):
    """(int16 samples, shape (n,) or (n, channels); rate)."""
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2, path
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        if w.getnchannels() > 1:
            x = x.reshape(-1, w.getnchannels())
        return x.copy(), w.getframerate()


def write_wav(path, samples, rate):
    samples = np.asarray(samples, dtype="<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1 if samples.ndim == 1 else samples.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())


@pytest.fixture(scope="session")
def model():
    import tern
    return tern.Model.load(MODEL)
