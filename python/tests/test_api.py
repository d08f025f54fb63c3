# The Python API against the CLI on the bundled model: every writer byte for byte, NumPy and
# bytes input equal to file input, sessions in two Python threads at once, streaming, stopping,
# and errors carrying tern's message.
import json
import os
import threading
import time

import numpy as np
import pytest

import tern
from conftest import MODEL, SAMPLES, read_wav, run_cli, write_wav

FORMATS = {"txt": ".txt", "json": ".json", "verbose_json": ".verbose.json", "srt": ".srt", "vtt": ".vtt"}
# verbose_json fields that measure this run (times, memory) rather than describe the result.
MEASURED = ("timings_ms", "rtf", "peak_rss_bytes")


def cli_outputs(tmp_path, audio, *flags):
    """The CLI's txt, json, srt, vtt bytes and verbose_json for one input, each its own run."""
    out = {}
    for fmt in FORMATS:
        d = tmp_path / fmt
        d.mkdir(exist_ok=True)
        run_cli("--output-format", fmt, "--output-dir", str(d), *flags, audio)
        stem = os.path.splitext(os.path.basename(audio))[0]
        out[fmt] = (d / (stem + FORMATS[fmt])).read_bytes()
    return out


def without_measurements(verbose_json: bytes):
    j = json.loads(verbose_json)
    for k in MEASURED:
        assert k in j
        del j[k]
    return j


def test_samples_exist():
    assert len(SAMPLES) >= 3


@pytest.mark.parametrize("sample", SAMPLES, ids=os.path.basename)
@pytest.mark.parametrize("flags,options", [
    ((), {}),
    (("--format", "json"), {"format": "json"}),
    (("--max-tokens", "12", "--hotwords", "tern, speech"),
     {"max_tokens": 12, "hotwords": "tern, speech"}),
], ids=["default", "json_prompt", "options"])
def test_writers_equal_cli_byte_for_byte(tmp_path, model, sample, flags, options):
    cli = cli_outputs(tmp_path, sample, *flags)
    # One Session per format, as each CLI run has its own: verbose_json reports how much of
    # the prompt a Session kept from its previous call.
    for fmt in FORMATS:
        r = model.session().transcribe(sample, logprobs=(fmt == "verbose_json"), **options)
        got = r.format(fmt).encode()
        if fmt == "verbose_json":
            assert without_measurements(got) == without_measurements(cli[fmt])
            assert r.token_logprobs and len(r.token_logprobs) == len(r.token_ids)
        else:
            assert got == cli[fmt], fmt
    assert r.to_txt().encode() == cli["txt"]
    assert r.to_json().encode() == cli["json"]
    assert r.to_srt().encode() == cli["srt"]
    assert r.to_vtt().encode() == cli["vtt"]
    assert r.text.strip() == json.loads(cli["json"])["text"]


def test_max_cue_chars_equals_cli(tmp_path, model):
    sample = SAMPLES[0]
    for fmt in ("srt", "vtt"):
        p = run_cli("--output-format", fmt, "--max-cue-chars", "12", sample)
        assert model.session().transcribe(sample).format(fmt, max_cue_chars=12).encode() == p.stdout
        assert p.stdout.count(b"-->") > 1  # the cue was split: the option did something


def test_result_fields_and_to_dict(model):
    r = model.session(threads=1).transcribe(SAMPLES[0], logprobs=True)
    assert r.text.strip()
    assert r.segments and isinstance(r.segments[0], tern.Segment)
    assert r.segments[0].text.strip() == r.text.strip()
    assert r.token_ids and all(isinstance(i, int) for i in r.token_ids)
    assert all(lp <= 0 for lp in r.token_logprobs)
    assert r.timings["wall_ms"] > 0 and r.timings["decode_tokens"] > 0
    assert r.threads == 1
    d = r.to_dict()
    assert set(d) >= {"text", "segments", "token_ids", "token_logprobs", "timings"}
    assert d["segments"][0]["text"] == r.segments[0].text
    json.dumps(d)  # plain data only
    assert model.info["isa"] and model.info["vocab"] > 0
    assert tern.__version__ in tern.version() and tern.__version__[0].isdigit()


@pytest.mark.parametrize("rate,channels", [(16000, 1), (24000, 1), (48000, 1), (48000, 2)])
def test_numpy_input_equals_file_input(tmp_path, model, rate, channels):
    x, src_rate = read_wav(SAMPLES[1])
    assert x.ndim == 1
    # Any resampling will do: the array and the WAV file hold the same samples at `rate`.
    n = int(len(x) * rate / src_rate)
    y = np.interp(np.arange(n) * (src_rate / rate), np.arange(len(x)), x).round().astype(np.int16)
    if channels == 2:
        y = np.stack([y, (y // 2).astype(np.int16)], axis=1)
    path = str(tmp_path / f"clip_{rate}_{channels}.wav")
    write_wav(path, y, rate)
    cli_json = run_cli("--output-format", "json", path).stdout
    cli_srt = run_cli("--output-format", "srt", path).stdout
    s = model.session()
    from_file = s.transcribe(path)
    for samples in (y, y.astype(np.float32) / 32768.0, y.astype(np.float64) / 32768.0):
        r = s.transcribe(samples, sample_rate=rate)
        assert r.to_json().encode() == cli_json
        assert r.to_srt().encode() == cli_srt
        assert r.token_ids == from_file.token_ids
        assert r.duration == pytest.approx(from_file.duration)
    with open(path, "rb") as f:
        assert s.transcribe(f.read()).to_json().encode() == cli_json


def long_clip(tmp_path, seconds=12.0):
    parts, rate = [], None
    for p in SAMPLES:
        x, rate = read_wav(p)
        parts.append(x)
    x = np.concatenate(parts)
    x = np.tile(x, int(np.ceil(seconds * rate / len(x))))[: int(seconds * rate)]
    path = str(tmp_path / "long.wav")
    write_wav(path, x, rate)
    return path


def test_two_sessions_in_two_threads_run_at_once(tmp_path, model):
    # Each thread notes when its transcription calls back (from inside the engine). Had the
    # GIL been held, one transcription would run whole before the other: their callback
    # spans could not overlap.
    path = long_clip(tmp_path)
    sessions = [model.session(threads=1), model.session(threads=1)]
    spans = [[], []]
    results = [None, None]
    barrier = threading.Barrier(2)

    def work(i):
        def note(_):
            spans[i].append(time.monotonic())
            return True
        barrier.wait()
        results[i] = sessions[i].transcribe(path, progress=note, on_text=note, chunk_seconds=4)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(spans[0]) >= 3 and len(spans[1]) >= 3
    first = [min(s) for s in spans]
    last = [max(s) for s in spans]
    assert max(first) < min(last), f"spans did not overlap: {first} {last}"
    assert results[0].to_json() == results[1].to_json()


def test_stream_deltas_concatenate_to_the_text(tmp_path, model):
    s = model.session()
    whole = s.transcribe(SAMPLES[0])
    stream = s.stream(SAMPLES[0])
    deltas = list(stream)
    assert len(deltas) > 1
    assert "".join(deltas) + "\n" == whole.to_txt()
    assert stream.result is not None and stream.result.token_ids == whole.token_ids


def test_stream_stops_when_left(tmp_path, model):
    path = long_clip(tmp_path)
    s = model.session(threads=1)
    whole = s.transcribe(path, chunk_seconds=4)
    n = len(whole.pieces)
    assert n >= 3
    # Each piece has an equal share of the progress range, its first half the encoder's. The
    # engine thread is held in the progress callback once the second piece is being decoded
    # (the first piece's text is out by then), and let go only after the consumer has left:
    # the transcription must stop there instead of going on to the next pieces.
    for leave in ("close", "drop"):
        held, gate = threading.Event(), threading.Event()
        fractions = []

        def progress(p):
            fractions.append(p)
            if p > 1.5 / n:
                held.set()
                gate.wait(30)
            return True

        stream = s.stream(path, progress=progress, chunk_seconds=4)
        assert held.wait(30)
        seen = []
        for d in stream:
            seen.append(d)
            break
        assert seen and whole.to_txt().startswith(seen[0])
        threading.Timer(0.2, gate.set).start()
        if leave == "close":
            stream.close()
            assert stream.result is None  # stopped before the end: no transcript
        else:
            del stream  # dropping the iterator closes it
        assert max(fractions) < 2 / n, "the transcription went on past the second piece"
        # The session is free again and gives the same answer as before.
        assert s.transcribe(path, chunk_seconds=4).token_ids == whole.token_ids


def test_progress_callback_stops_the_transcription(model):
    s = model.session()
    calls = []

    def progress(p):
        calls.append(p)
        return False

    with pytest.raises(tern.CancelledError, match="cancel"):
        s.transcribe(SAMPLES[0], progress=progress)
    assert len(calls) == 1

    def boom(_):
        raise ZeroDivisionError("from the callback")

    with pytest.raises(ZeroDivisionError, match="from the callback"):
        s.transcribe(SAMPLES[0], on_text=boom)
    fractions = []
    s.transcribe(SAMPLES[0], progress=fractions.append)
    assert fractions and fractions[-1] == 1.0 and fractions == sorted(fractions)


def cli_error(*args):
    p = run_cli(*args, check=False)
    assert p.returncode != 0
    prefix = b"tern transcribe: "
    err = p.stderr.strip()
    assert err.startswith(prefix), err
    return err[len(prefix):].decode()


def test_bad_input_raises_with_tern_message(tmp_path, model):
    s = model.session()
    missing = str(tmp_path / "missing.wav")
    with pytest.raises(tern.Error) as e:
        s.transcribe(missing)
    assert missing in str(e.value)
    assert str(e.value) == cli_error(missing)

    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEnot really audio")
    with pytest.raises(tern.Error) as e:
        s.transcribe(str(bad))
    assert str(e.value) == cli_error(str(bad))
    with pytest.raises(tern.Error, match="bytes"):
        s.transcribe(bad.read_bytes())

    with pytest.raises(tern.InvalidArgumentError) as e:
        s.transcribe(SAMPLES[0], beam=17)
    assert isinstance(e.value, ValueError)
    assert str(e.value) == cli_error("--beam", "17", SAMPLES[0])
    with pytest.raises(TypeError, match="no_such_option"):
        s.transcribe(SAMPLES[0], no_such_option=1)
    with pytest.raises(ValueError, match="sample_rate"):
        s.transcribe(np.zeros(24000, dtype=np.float32))
    with pytest.raises(ValueError, match="dtype"):
        s.transcribe(np.zeros(24000, dtype=np.int32), sample_rate=24000)
    with pytest.raises(tern.Error, match="nowhere"):
        tern.Model.load("/nowhere/model")
    with pytest.raises(ValueError, match="head"):
        tern.Model.load(MODEL, head="f8")


def cli_live_finals(path, *flags):
    """The finals of `tern transcribe --live PATH --output-format json`, as JSON objects."""
    out = run_cli("-t", "1", "--live", path, "--output-format", "json", *flags).stdout.decode()
    events = [json.loads(line) for line in out.splitlines()]
    return [e for e in events if e["type"] == "final"]


def test_live_equals_the_cli_live(model):
    # The demo dialogue, fed as a microphone would (20 ms at a time, int16 and bytes in
    # turn) with the JSON prompt: the finals are the CLI's, speakers numbered over the stream.
    path = os.path.join(os.path.dirname(SAMPLES[0]), "dialogue1.wav")
    x, rate = read_wav(path)
    session = model.session(threads=1)
    live = session.live(sample_rate=rate, format="json")
    events = []
    block = rate // 50
    for k, i in enumerate(range(0, len(x), block)):
        chunk = x[i:i + block]
        events += live.feed(chunk if k % 2 else chunk.astype("<i2").tobytes())
    events += live.finish()
    assert live.samples_received == len(x) * 24000 // rate
    kinds = [e.kind for e in events]
    assert "speech_started" in kinds and "partial" in kinds
    finals = [e for e in events if e.kind == "final"]
    cli = cli_live_finals(path, "--format", "json")
    assert [e.text for e in finals] == [c["text"] for c in cli]
    assert [e.piece for e in finals] == list(range(len(finals)))
    assert [round(e.end, 6) for e in finals] == [round(c["end"], 6) for c in cli]
    speakers = [s.speaker for e in finals for s in e.transcript.segments]
    assert speakers == [s["speaker"] for c in cli for s in c["segments"]]
    with open(os.path.join(os.path.dirname(path), "dialogue1.json")) as f:
        ref = [seg[2] for seg in json.load(f)]
    assert len(speakers) == len(ref) and len(set(speakers)) == len(set(ref)) > 1
    # The session still transcribes files, and the stream is done.
    assert session.transcribe(SAMPLES[0]).text
    with pytest.raises(tern.InvalidArgumentError, match="Feed after Finish"):
        live.feed(x[:10])


def test_live_refuses_bad_options_and_samples(model):
    session = model.session(threads=1)
    with pytest.raises(TypeError, match="offset"):
        session.live(offset=1.0)
    with pytest.raises(TypeError, match="unknown option"):
        session.live(colour="red")
    with pytest.raises(ValueError, match="sample rate"):
        session.live(sample_rate=1000)
    live = session.live()
    with pytest.raises(ValueError, match="shape"):
        live.feed(np.zeros((10, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="float"):
        live.feed(np.zeros(10, dtype=np.int32))
    with pytest.raises(ValueError, match="whole number"):
        live.feed(b"\x00\x01\x02")
    assert live.feed(np.zeros(2400, dtype=np.float32)) == []  # silence: no event
    assert live.finish() == []
