# Model.batch_session: Python threads sharing one tern BatchSession get, call for call, the
# bytes a plain Session gives (the engine's contract: a sequence's logits do not depend on who
# else is in the batch), with the same signature, callbacks, streaming and errors.
import threading

import numpy as np
import pytest

import tern
from conftest import SAMPLES, read_wav

# What each thread transcribes, in turn: every sample, with the default and other options.
CALLS = [(s, {}) for s in SAMPLES] + [
    (SAMPLES[0], {"format": "json"}),
    (SAMPLES[1], {"max_tokens": 12, "hotwords": "tern, speech"}),
    (SAMPLES[2], {"temperature": 0.7, "top_k": 20, "seed": 3, "logprobs": True}),
]


def test_four_threads_equal_a_session(model):
    plain = model.session(threads=1)
    expected = [plain.transcribe(path, **o) for path, o in CALLS]
    batch = model.batch_session(threads=2, lanes=4)
    assert batch.threads == 2 and batch.lanes == 4
    n_threads = 4
    got = [[None] * len(CALLS) for _ in range(n_threads)]
    errors = []
    barrier = threading.Barrier(n_threads)

    def work(i):
        try:
            barrier.wait()
            # Each thread starts at a different call, so different inputs decode side by side.
            for k in range(len(CALLS)):
                j = (k + i) % len(CALLS)
                path, o = CALLS[j]
                got[i][j] = batch.transcribe(path, **o)
        except BaseException as e:  # reported on the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i in range(n_threads):
        for j, want in enumerate(expected):
            r = got[i][j]
            assert r.to_json() == want.to_json(), (i, CALLS[j])
            assert r.to_srt() == want.to_srt()
            assert r.token_ids == want.token_ids
            assert r.token_logprobs == want.token_logprobs
    st = batch.stats
    assert st["steps"] > 0 and st["rows"] >= st["steps"]


def test_same_signature_as_a_session(model):
    batch = model.batch_session(threads=1, lanes=2)
    plain = model.session(threads=1)
    x, rate = read_wav(SAMPLES[1])
    assert batch.transcribe(x, sample_rate=rate).to_json() == \
        plain.transcribe(x, sample_rate=rate).to_json()
    with open(SAMPLES[1], "rb") as f:
        assert batch.transcribe(f.read()).to_json() == plain.transcribe(SAMPLES[1]).to_json()
    fractions, deltas = [], []
    r = batch.transcribe(SAMPLES[0], progress=fractions.append, on_text=deltas.append)
    assert fractions and fractions[-1] == 1.0
    assert "".join(deltas) + "\n" == r.to_txt()
    assert "".join(batch.stream(SAMPLES[0])) + "\n" == r.to_txt()
    with pytest.raises(tern.CancelledError):
        batch.transcribe(SAMPLES[0], progress=lambda p: False)
    with pytest.raises(tern.NotFoundError):
        batch.transcribe("/nowhere.wav")
    with pytest.raises(TypeError, match="no_such_option"):
        batch.transcribe(SAMPLES[0], no_such_option=1)
    with pytest.raises(ValueError, match="lanes"):
        model.batch_session(lanes=0)
    with pytest.raises(ValueError, match="lanes"):
        model.batch_session(lanes=257)
    with pytest.raises(ValueError, match="sample_rate"):
        batch.transcribe(np.zeros(24000, dtype=np.float32))
