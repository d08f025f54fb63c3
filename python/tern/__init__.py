"""tern: quantized speech recognition on CPUs, from Python.

    import tern
    model = tern.Model.load("models/tiny-en")          # or vae=..., lm=..., head="int8"
    session = model.session(threads=2)                  # one per thread that transcribes
    result = session.transcribe("samples/sample1.wav")  # path, bytes, or array + sample_rate
    print(result.text, result.to_srt())
    for delta in session.stream("long.wav"):            # text as it is decoded
        print(delta, end="", flush=True)
    batch = model.batch_session(threads=2, lanes=8)     # shared by up to 8 threads at once
    live = session.live(sample_rate=16000)              # a microphone: feed samples as they come
    for event in live.feed(chunk) + live.finish():      # LiveEvent: partial and final text
        print(event.kind, event.text)

The work runs in C++ with the GIL released, so sessions in several Python threads run at
the same time; a batch session decodes its callers' transcriptions in one batched loop.
Errors are tern.Error subclasses carrying tern's message.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import threading
from typing import Any, Callable, Iterator, Optional, Union

from . import _tern
from ._tern import (  # noqa: F401  (re-exported)
    CancelledError,
    Error,
    FormatError,
    InternalError,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    ResourceExhaustedError,
    UnsupportedError,
    system_info,
    version,
)

__version__ = version().split()[1]  # "tern 0.1.0 (git ...) isas: ..." -> "0.1.0"

__all__ = [
    "Model", "Session", "BatchSession", "Stream", "Live", "LiveEvent", "Transcript", "Segment",
    "Error", "InvalidArgumentError",
    "NotFoundError", "IoError", "FormatError", "UnsupportedError", "ResourceExhaustedError",
    "CancelledError", "InternalError", "OPTIONS", "version", "system_info",
]

# transcribe()'s keyword options and what they set (the CLI's flag in parentheses).
OPTIONS = {
    "format": "prompt variant: 'text' (plain text) or 'json' (segments with times, speakers) (--format)",
    "context": "extra information for the model: names, topic (--context)",
    "temperature": "sampling temperature; 0 = greedy (--temperature)",
    "top_k": "sample from the k most likely tokens, 0 = all (--top-k)",
    "top_p": "nucleus sampling mass (--top-p)",
    "seed": "sampling seed (--seed)",
    "beam": "beam search width, 1 = off, 0 = the model's declared width (--beam)",
    "max_tokens": "maximum generated tokens (--max-tokens)",
    "chunk_seconds": "long audio: pieces of at most this many seconds (--chunk-seconds)",
    "snap_seconds": "JSON segments: move times to speech edges within this (--snap-seconds)",
    "repetition_guard": "stop on a looping output (default True; --no-repetition-guard)",
    "repetition_max_repeats": "n-gram repeats that count as a loop",
    "hotwords": "words to favour: a list or 'w1, w2' (--hotwords)",
    "hotword_boost": "logit added to hotword tokens (--hotword-boost)",
    "logprobs": "record each token's log-probability in token_logprobs",
    "normalize": "RMS-normalize the audio (default True; --no-normalize)",
    "clip_guard": "rescale audio whose peak exceeds 1 after normalization (--no-clip-guard)",
    "max_audio_seconds": "refuse longer audio (--max-audio-seconds)",
    "offset": "start this many seconds into the audio (--offset)",
    "duration": "transcribe at most this many seconds, 0 = to the end (--duration)",
}

Audio = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Any]


@dataclasses.dataclass(frozen=True)
class Segment:
    start: float  # seconds; -1 when the model gave no time
    end: float
    speaker: int  # -1 when the model gave no speaker
    text: str


@dataclasses.dataclass(frozen=True)
class Transcript:
    """One transcription. The to_* writers are the CLI's own (byte for byte)."""

    text: str
    segments: list
    token_ids: list
    token_logprobs: list
    timings: dict
    duration: float
    offset: float
    stop_reason: str
    warnings: list
    structured: bool
    pieces: list
    model: str
    head: str
    isa: str
    threads: int
    _native: Any = dataclasses.field(repr=False, compare=False, default=None)

    @classmethod
    def _from_native(cls, t) -> "Transcript":
        return cls(
            text=t.text,
            segments=[Segment(*s) for s in t.segments],
            token_ids=list(t.token_ids),
            token_logprobs=list(t.token_logprobs),
            timings=t.timings,
            duration=t.duration_s,
            offset=t.offset_s,
            stop_reason=t.stop_reason,
            warnings=list(t.warnings),
            structured=t.structured,
            pieces=[tuple(p) for p in t.pieces],
            model=t.model,
            head=t.head,
            isa=t.isa,
            threads=t.threads,
            _native=t,
        )

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "_native"}
        d["segments"] = [dataclasses.asdict(s) for s in self.segments]
        d["pieces"] = [list(p) for p in self.pieces]
        return d

    def format(self, fmt: str, max_cue_chars: int = 0) -> str:
        """The CLI's writer: txt, json, verbose_json, srt or vtt."""
        return self._native.format(fmt, max_cue_chars)

    def to_txt(self) -> str:
        return self.format("txt")

    def to_json(self) -> str:
        return self.format("json")

    def to_verbose_json(self) -> str:
        return self.format("verbose_json")

    def to_srt(self, max_cue_chars: int = 0) -> str:
        return self.format("srt", max_cue_chars)

    def to_vtt(self, max_cue_chars: int = 0) -> str:
        return self.format("vtt", max_cue_chars)


# What a live stream takes besides its own arguments: every option of a transcription
# except those about a whole file (normalize is live()'s own argument, applied per piece).
_FILE_OPTIONS = {"normalize", "clip_guard", "max_audio_seconds", "offset", "duration"}


def _split_options(options: dict):
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"transcribe() got unknown option(s) {', '.join(unknown)}; "
                        f"known: {', '.join(sorted(OPTIONS))}")
    return options


class Model:
    """A loaded model: immutable, shared by any number of sessions and threads."""

    def __init__(self, native):
        self._native = native

    @classmethod
    def load(cls, dir: Optional[Union[str, os.PathLike]] = None, *, vae=None, lm=None,
             head: str = "f16") -> "Model":
        """Loads a model folder (vibeasr-vae-encoder-i8_s.gguf + vibeasr-lm-i2_s-embed-q6_k.gguf)
        and/or the two files (vae=, lm= override the folder's). head: "f16" or "int8"."""
        f = lambda p: "" if p is None else os.fspath(p)  # noqa: E731
        return cls(_tern.Model._load(f(dir), f(vae), f(lm), head))

    @property
    def info(self) -> dict:
        return self._native.info

    def session(self, threads: int = 0) -> "Session":
        """A session (thread pool, KV cache): use one per thread. threads=0: all CPUs."""
        return Session(self, threads)

    def batch_session(self, threads: int = 0, lanes: int = 16) -> "BatchSession":
        """A session for many threads at once (docs/batching.md): up to `lanes` calls run
        together over one pool of `threads` (0: all CPUs), their decoding batched."""
        return BatchSession(self, threads, lanes)


class _Transcriber:
    """transcribe() and stream(), shared by Session and BatchSession (same results)."""

    _native: Any

    @property
    def threads(self) -> int:
        return self._native.threads

    def transcribe(self, audio: Audio, sample_rate: Optional[int] = None, *,
                   progress: Optional[Callable[[float], Optional[bool]]] = None,
                   on_text: Optional[Callable[[str], Optional[bool]]] = None,
                   **options) -> Transcript:
        """Transcribes a path, encoded bytes (WAV/FLAC/OGG/MP3), or a NumPy array of samples
        (float in -1..1 or int16, shape (n,) or (n, channels)) with sample_rate=.

        progress(fraction) and on_text(delta) are called as the work goes; returning False
        stops it (tern.CancelledError), an exception they raise stops it and is re-raised.
        Options: see tern.OPTIONS."""
        t = self._native.transcribe(audio, sample_rate, _split_options(options), progress, on_text)
        return Transcript._from_native(t)

    def stream(self, audio: Audio, sample_rate: Optional[int] = None, *,
               progress: Optional[Callable[[float], Optional[bool]]] = None,
               **options) -> "Stream":
        """Iterates over the transcript's text as it is decoded (deltas that concatenate to
        the txt writer's text without its final newline). Stopping early (break, close())
        stops the transcription; .result holds the Transcript once the iteration ends."""
        return Stream(self, audio, sample_rate, progress, _split_options(options))


class Session(_Transcriber):
    """One transcription at a time (a second thread calling it waits): one per thread."""

    def __init__(self, model: Model, threads: int = 0):
        self.model = model
        self._native = _tern.NativeSession(model._native, threads)

    def live(self, sample_rate: int = 24000, *, update_seconds: float = 0.5,
             pause_seconds: float = 0.5, silence_db: float = -35.0,
             max_piece_seconds: float = 0.0, normalize: bool = True, **options) -> "Live":
        """A live stream (docs/live.md): feed() it mono samples at sample_rate as they arrive
        and it returns the LiveEvents they cause: speech started, partial text every
        update_seconds, and a final transcript for every piece, cut at pauses of
        pause_seconds quieter than silence_db under the piece's loudest. Options: those of
        transcribe() but the whole-file ones (normalize, here per piece; clip_guard,
        max_audio_seconds, offset, duration). The stream uses this session (its calls and
        transcribe()'s wait for each other)."""
        bad = sorted(set(options) & _FILE_OPTIONS)
        if bad:
            raise TypeError(f"live() does not take the whole-file option(s) {', '.join(bad)}")
        native = self._native.live(sample_rate, update_seconds, pause_seconds, silence_db,
                                   max_piece_seconds, normalize, _split_options(options))
        return Live(native)


@dataclasses.dataclass(frozen=True)
class LiveEvent:
    """One event of a live stream. kind: "speech_started", "partial" (the open piece's text so
    far, replaced by the next partial or final) or "final" (the piece's text, committed, with
    its transcript). Times are seconds from the stream's start: the piece's start, the end of
    the audio the text covers, and the audio received when the event was decided."""

    kind: str
    piece: int
    start: float
    end: float
    heard: float
    text: str
    lag_ms: float
    transcript: Optional[Transcript]

    @classmethod
    def _from_native(cls, e) -> "LiveEvent":
        sr = 24000.0
        return cls(kind=e.kind, piece=e.piece, start=e.start_sample / sr,
                   end=e.end_sample / sr, heard=e.heard_sample / sr, text=e.text,
                   lag_ms=e.lag_ms,
                   transcript=Transcript._from_native(e.transcript) if e.kind == "final" else None)


class Live:
    """A live stream on a Session (Session.live)."""

    def __init__(self, native):
        self._native = native

    def feed(self, samples) -> list:
        """Mono samples (a 1-D NumPy array, float in -1..1 or int16, or s16le bytes), any
        number; returns the LiveEvents they cause, in order."""
        return [LiveEvent._from_native(e) for e in self._native.feed(samples)]

    def finish(self) -> list:
        """The stream ended: the open piece, if it holds speech, becomes final. feed() and
        finish() are errors afterwards."""
        return [LiveEvent._from_native(e) for e in self._native.finish()]

    @property
    def samples_received(self) -> int:
        """Samples received so far, at 24 kHz."""
        return self._native.samples_received


class BatchSession(_Transcriber):
    """tern's BatchSession: call transcribe() or stream() from up to `lanes` threads at once
    (more wait for a free lane). Each call's encoder and prefill run alone on the shared
    threads, then its decoding steps are batched with the others', so the decoder's weights
    are read once per step for all of them. A result equals a Session's for the same audio
    and options, whatever runs beside it."""

    def __init__(self, model: Model, threads: int = 0, lanes: int = 16):
        self.model = model
        self._native = _tern.NativeBatchSession(model._native, threads, lanes)

    @property
    def lanes(self) -> int:
        return self._native.lanes

    @property
    def stats(self) -> dict:
        """Batched decoder steps so far and the sequences they advanced (rows / steps is the
        mean batch size)."""
        steps, rows = self._native.stats
        return {"steps": steps, "rows": rows}


_END = object()


class _StreamState:
    """What the stream's thread shares with the iterating one. The thread holds this, never the
    Stream, so dropping the Stream (a `break` out of the loop) closes it and stops the work."""

    def __init__(self):
        self.queue: "queue.Queue" = queue.Queue()
        self.stop = threading.Event()
        self.error: Optional[BaseException] = None
        self.result: Optional[Transcript] = None


class Stream:
    """The deltas of one transcription, decoded on a helper thread (see Session.stream)."""

    def __init__(self, session: _Transcriber, audio, sample_rate, progress, options):
        st = self._state = _StreamState()

        def on_text(delta):
            if st.stop.is_set():
                return False
            st.queue.put(delta)
            return True

        def on_progress(p):
            if st.stop.is_set():
                return False
            ok = progress(p) if progress is not None else True
            return (ok is None or bool(ok)) and not st.stop.is_set()

        def run(native):
            try:
                t = native.transcribe(audio, sample_rate, options, on_progress, on_text)
                st.result = Transcript._from_native(t)
            except BaseException as e:  # handed to the iterating thread
                st.error = e
            finally:
                st.queue.put(_END)

        self._thread: Optional[threading.Thread] = threading.Thread(
            target=run, args=(session._native,), name="tern-stream", daemon=True)
        self._thread.start()

    @property
    def result(self) -> Optional[Transcript]:
        """The Transcript, once the iteration has ended (None if it was stopped)."""
        return self._state.result

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        st = self._state
        if self._thread is None:
            raise StopIteration
        item = st.queue.get()
        if item is _END:
            self._finish()
            if st.error is not None:
                err, st.error = st.error, None
                raise err
            raise StopIteration
        return item

    def close(self) -> None:
        """Stops the transcription (if still running) and waits for its thread."""
        if self._thread is None:
            return
        self._state.stop.set()
        self._finish()
        if isinstance(self._state.error, CancelledError):
            self._state.error = None  # the cancellation asked for

    def _finish(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _json_default(o):
    if dataclasses.is_dataclass(o):
        return dataclasses.asdict(o)
    raise TypeError(type(o).__name__)


def dumps(result: Transcript) -> str:
    """result.to_dict() as one JSON line."""
    return json.dumps(result.to_dict(), ensure_ascii=False, default=_json_default)
