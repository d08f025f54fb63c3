// tern._tern: the Python binding over the public API (tern/tern.h) only. The package around
// it (python/tern/__init__.py) gives it its Python shape: keyword options, the result
// dataclass, the streaming iterator.
//
// NativeSession wraps a tern::Session, NativeBatchSession a tern::BatchSession; both have the
// same transcribe(). The GIL is released while tern loads, decodes or transcribes, and taken
// again only to call a Python callback; a Status that is not OK becomes a tern.Error subclass
// (by error code) whose message is the one the CLI prints.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tern/tern.h"

namespace py = pybind11;

namespace {

// A non-OK Status on its way to Python (see the translator in the module body).
struct StatusError {
  tern::Status status;
};

[[noreturn]] void Raise(const tern::Status& s) { throw StatusError{s}; }

template <typename T>
T Unwrap(tern::Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}

void Check(const tern::Status& s) {
  if (!s.ok()) Raise(s);
}

// ---- audio -----------------------------------------------------------------------------

// A WAV file in memory holding the caller's samples as they are (int16 PCM or float32),
// so that a NumPy array goes through the same decoder, resampler and normalization as a
// file with those samples: both give the same transcript.
std::string WavBytes(const void* data, size_t frames, int channels, int rate, bool is_float) {
  const uint16_t bits = is_float ? 32 : 16;
  const uint16_t format = is_float ? 3 : 1;  // WAVE_FORMAT_IEEE_FLOAT : WAVE_FORMAT_PCM
  const uint32_t block = static_cast<uint32_t>(channels) * bits / 8;
  const uint64_t bytes = static_cast<uint64_t>(frames) * block;
  if (bytes > 0xFFFFFFFFull - 64)
    Raise(tern::ResourceExhaustedError("array: %llu bytes of samples do not fit a WAV file",
                                       static_cast<unsigned long long>(bytes)));
  std::string w;
  auto u32 = [&w](uint32_t v) { w.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&w](uint16_t v) { w.append(reinterpret_cast<const char*>(&v), 2); };
  w += "RIFF";
  u32(static_cast<uint32_t>(36 + bytes));
  w += "WAVEfmt ";
  u32(16);
  u16(format);
  u16(static_cast<uint16_t>(channels));
  u32(static_cast<uint32_t>(rate));
  u32(static_cast<uint32_t>(rate) * block);
  u16(static_cast<uint16_t>(block));
  u16(bits);
  w += "data";
  u32(static_cast<uint32_t>(bytes));
  w.append(static_cast<const char*>(data), bytes);
  return w;
}

// What transcribe() was given, made ready to decode without the GIL: a path, encoded bytes,
// or an array turned into WAV bytes.
struct AudioSource {
  std::string path;   // when set, LoadAudio(path)
  std::string bytes;  // else LoadAudioFromMemory(bytes)
  std::string name;

  tern::Audio Load(const tern::AudioOptions& options) const {
    if (!path.empty()) return Unwrap(tern::LoadAudio(path, options));
    return Unwrap(tern::LoadAudioFromMemory(bytes.data(), bytes.size(), name, options));
  }
};

AudioSource SourceFromArray(const py::array& a, int rate) {
  if (rate <= 0)
    Raise(tern::InvalidArgumentError(
        "array: sample_rate must be positive (the rate of the samples), got %d", rate));
  if (a.ndim() != 1 && a.ndim() != 2)
    Raise(tern::InvalidArgumentError(
        "array: expected samples of shape (n,) or (n, channels), got %d dimensions",
        static_cast<int>(a.ndim())));
  const size_t frames = static_cast<size_t>(a.shape(0));
  const int channels = a.ndim() == 2 ? static_cast<int>(a.shape(1)) : 1;
  if (channels < 1 || channels > 64)
    Raise(tern::InvalidArgumentError("array: %d channels (1 to 64 supported)", channels));
  AudioSource src;
  src.name = "array";
  if (py::isinstance<py::array_t<int16_t>>(a)) {
    auto s = py::array_t<int16_t, py::array::c_style | py::array::forcecast>::ensure(a);
    src.bytes = WavBytes(s.data(), frames, channels, rate, false);
  } else if (a.dtype().kind() == 'f') {
    auto s = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    src.bytes = WavBytes(s.data(), frames, channels, rate, true);
  } else {
    Raise(tern::InvalidArgumentError("array: samples must be float (-1..1) or int16, got dtype %s",
                                     std::string(py::str(a.dtype())).c_str()));
  }
  return src;
}

AudioSource SourceFrom(const py::object& audio, std::optional<int> rate) {
  AudioSource src;
  if (py::isinstance<py::array>(audio)) {
    if (!rate)
      Raise(tern::InvalidArgumentError(
          "array: pass sample_rate= with a NumPy array (the rate of its samples)"));
    return SourceFromArray(audio.cast<py::array>(), *rate);
  }
  if (rate)
    Raise(tern::InvalidArgumentError(
        "sample_rate= goes with a NumPy array; a file or bytes carries its own rate"));
  if (py::isinstance<py::bytes>(audio) || py::isinstance<py::bytearray>(audio) ||
      py::isinstance<py::memoryview>(audio)) {
    py::buffer_info info = audio.cast<py::buffer>().request();
    src.bytes.assign(static_cast<const char*>(info.ptr),
                     static_cast<size_t>(info.size * info.itemsize));
    src.name = "bytes";
    return src;
  }
  // str or os.PathLike
  py::object fspath = py::module_::import("os").attr("fspath");
  py::object p = fspath(audio);
  if (!py::isinstance<py::str>(p))
    Raise(tern::InvalidArgumentError("audio: a path must be str, not bytes"));
  src.path = p.cast<std::string>();
  if (src.path.empty()) Raise(tern::InvalidArgumentError("audio: empty path"));
  src.name = src.path;
  return src;
}

// ---- sessions --------------------------------------------------------------------------

// The Python callbacks of one call and the first exception one of them raised (raised in
// Transcribe's place once it returns). The engine's std::functions hold a shared_ptr to this,
// never a Python object, so copying them needs no GIL.
struct Callbacks {
  py::object on_progress, on_text;
  std::optional<py::error_already_set> error;
};

// Loads `audio` and runs `run(audio, options)` (a Session's or a BatchSession's Transcribe)
// with the GIL released, the Python callbacks wrapped to take it back.
template <typename Run>
tern::Transcript TranscribeWith(Run&& run, const py::object& audio, std::optional<int> rate,
                                tern::AudioOptions audio_options, tern::TranscribeOptions options,
                                py::object on_progress, py::object on_text) {
  Check(audio_options.Validate());
  Check(options.Validate());
  AudioSource src = SourceFrom(audio, rate);
  auto cb = std::make_shared<Callbacks>();
  cb->on_progress = std::move(on_progress);
  cb->on_text = std::move(on_text);
  // The callbacks run on this thread without the GIL; they take it to call Python. A False
  // return (or an exception, raised after Transcribe returns) stops the transcription.
  if (!cb->on_progress.is_none()) {
    options.on_progress = [c = cb.get()](double p) {
      py::gil_scoped_acquire gil;
      try {
        py::object r = c->on_progress(p);
        return r.is_none() || r.cast<bool>();
      } catch (py::error_already_set& e) {
        if (!c->error) c->error.emplace(std::move(e));
        return false;
      }
    };
  }
  if (!cb->on_text.is_none()) {
    options.on_text = [c = cb.get()](std::string_view d) {
      py::gil_scoped_acquire gil;
      try {
        PyObject* s = PyUnicode_DecodeUTF8(d.data(), static_cast<Py_ssize_t>(d.size()), "replace");
        if (s == nullptr) throw py::error_already_set();
        py::object r = c->on_text(py::reinterpret_steal<py::object>(s));
        return r.is_none() || r.cast<bool>();
      } catch (py::error_already_set& e) {
        if (!c->error) c->error.emplace(std::move(e));
        return false;
      }
    };
  }
  // As the CLI words them: audio errors name the file themselves, transcription errors
  // get it as a prefix.
  std::optional<tern::Result<tern::Transcript>> result;
  {
    py::gil_scoped_release nogil;
    try {
      tern::Audio a = src.Load(audio_options);
      tern::Result<tern::Transcript> t = run(a, options);
      if (t.ok())
        result.emplace(std::move(t));
      else
        result.emplace(t.status().WithPrefix(src.name));
    } catch (const StatusError& e) {
      result.emplace(e.status);
    }
  }
  if (cb->error) throw std::move(*cb->error);
  if (!result->ok()) Raise(result->status());
  return std::move(*result).value();
}

// One tern::Session plus a lock: a Session is for one thread at a time, so two Python threads
// sharing one wait for each other instead of racing (use one Session per thread to overlap).
class PySession {
 public:
  PySession(std::shared_ptr<const tern::Model> model, int threads)
      : model_(std::move(model)), session_(model_, threads) {}

  int threads() const { return session_.threads(); }

  tern::Transcript Transcribe(const py::object& audio, std::optional<int> rate,
                              tern::AudioOptions audio_options, tern::TranscribeOptions options,
                              py::object on_progress, py::object on_text) {
    auto run = [this](const tern::Audio& a, const tern::TranscribeOptions& o) {
      std::lock_guard<std::mutex> lock(mu_);
      return session_.Transcribe(a, o);
    };
    return TranscribeWith(run, audio, rate, std::move(audio_options), std::move(options),
                          std::move(on_progress), std::move(on_text));
  }

  // A live stream on this session: it transcribes its pieces with the session, so each of
  // its calls takes the session's lock (PyLive keeps the session alive).
  std::unique_ptr<tern::LiveSession> StartLive(const tern::LiveOptions& o) {
    std::lock_guard<std::mutex> lock(mu_);
    return Unwrap(session_.StartLive(o));
  }
  std::mutex& mu() { return mu_; }

 private:
  std::shared_ptr<const tern::Model> model_;
  tern::Session session_;
  std::mutex mu_;
};

// Session.live(): samples in as they arrive, LiveEvents out (docs/live.md).
class PyLive {
 public:
  PyLive(PySession& session, const tern::LiveOptions& o)
      : session_(session), live_(session.StartLive(o)) {}

  // Mono samples: a 1-D float (-1..1) or int16 array, or s16le bytes.
  std::vector<tern::LiveEvent> Feed(const py::object& samples) {
    const std::vector<float> x = Samples(samples);
    return Run(
        [&](std::vector<tern::LiveEvent>* ev) { return live_->Feed(x.data(), x.size(), ev); });
  }
  std::vector<tern::LiveEvent> Finish() {
    return Run([&](std::vector<tern::LiveEvent>* ev) { return live_->Finish(ev); });
  }
  int64_t samples_received() const { return live_->samples_received(); }

 private:
  template <typename F>
  std::vector<tern::LiveEvent> Run(const F& f) {
    std::vector<tern::LiveEvent> events;
    tern::Status s;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(session_.mu());
      s = f(&events);
    }
    Check(s);
    return events;
  }

  static std::vector<float> Samples(const py::object& o) {
    if (py::isinstance<py::bytes>(o) || py::isinstance<py::bytearray>(o)) {
      const std::string b = o.cast<std::string>();
      if (b.size() % 2 != 0)
        Raise(
            tern::InvalidArgumentError("live: %zu bytes of s16le samples is not a whole number "
                                       "of samples",
                                       b.size()));
      std::vector<float> x(b.size() / 2);
      for (size_t i = 0; i < x.size(); ++i) {
        const auto lo = static_cast<unsigned char>(b[2 * i]);
        const auto hi = static_cast<unsigned char>(b[2 * i + 1]);
        x[i] = static_cast<float>(static_cast<int16_t>(lo | hi << 8)) / 32768.0f;
      }
      return x;
    }
    const py::array a = py::array::ensure(o);
    if (!a) Raise(tern::InvalidArgumentError("live: samples must be a NumPy array or bytes"));
    if (a.ndim() != 1)
      Raise(
          tern::InvalidArgumentError("live: expected mono samples of shape (n,), got %d "
                                     "dimensions",
                                     static_cast<int>(a.ndim())));
    if (py::isinstance<py::array_t<int16_t>>(a)) {
      const auto v = py::array_t<int16_t, py::array::c_style | py::array::forcecast>::ensure(a);
      std::vector<float> x(static_cast<size_t>(v.size()));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(v.data()[i]) / 32768.0f;
      return x;
    }
    if (a.dtype().kind() != 'f')
      Raise(tern::InvalidArgumentError("live: samples must be float (-1..1) or int16"));
    const auto v = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    return std::vector<float>(v.data(), v.data() + v.size());
  }

  PySession& session_;
  std::unique_ptr<tern::LiveSession> live_;
};

// A tern::BatchSession: no lock of ours, since it takes calls from up to `lanes` threads at
// once (more wait inside it for a free lane) and decodes them together.
class PyBatchSession {
 public:
  PyBatchSession(std::shared_ptr<const tern::Model> model, int threads, int lanes)
      : model_(std::move(model)), batch_(model_, threads, lanes) {}

  int threads() const { return batch_.threads(); }
  int lanes() const { return batch_.max_batch(); }
  tern::BatchSession::Stats stats() const { return batch_.stats(); }

  tern::Transcript Transcribe(const py::object& audio, std::optional<int> rate,
                              tern::AudioOptions audio_options, tern::TranscribeOptions options,
                              py::object on_progress, py::object on_text) {
    auto run = [this](const tern::Audio& a, const tern::TranscribeOptions& o) {
      return batch_.Transcribe(a, o);
    };
    return TranscribeWith(run, audio, rate, std::move(audio_options), std::move(options),
                          std::move(on_progress), std::move(on_text));
  }

 private:
  std::shared_ptr<const tern::Model> model_;
  tern::BatchSession batch_;
};

// transcribe()'s keyword options, as a dict whose keys tern/__init__.py has checked, applied
// to the engine's option structs.
void ApplyOptions(const py::dict& o, tern::AudioOptions& a, tern::TranscribeOptions& t) {
  tern::DecodingOptions& d = t.decoding;
  for (const auto& [k, v] : o) {
    const std::string key = k.cast<std::string>();
    if (key == "normalize")
      a.normalize = v.cast<bool>();
    else if (key == "clip_guard")
      a.clip_guard = v.cast<bool>();
    else if (key == "max_audio_seconds")
      a.max_seconds = v.cast<double>();
    else if (key == "offset")
      a.offset_s = v.cast<double>();
    else if (key == "duration")
      a.duration_s = v.cast<double>();
    else if (key == "format") {
      const std::string f = v.cast<std::string>();
      if (f == "json")
        t.format = tern::PromptFormat::kJson;
      else if (f != "text")
        Raise(tern::InvalidArgumentError("format must be text or json, not '%s'", f.c_str()));
    } else if (key == "context")
      t.context = v.cast<std::string>();
    else if (key == "chunk_seconds")
      t.chunk_seconds = v.cast<double>();
    else if (key == "snap_seconds")
      t.snap_seconds = v.cast<double>();
    else if (key == "temperature")
      d.temperature = v.cast<float>();
    else if (key == "top_k")
      d.top_k = v.cast<int>();
    else if (key == "top_p")
      d.top_p = v.cast<float>();
    else if (key == "seed")
      d.seed = v.cast<uint64_t>();
    else if (key == "beam")
      d.beam = v.cast<int>();
    else if (key == "max_tokens")
      d.max_tokens = v.cast<int>();
    else if (key == "repetition_guard")
      d.repetition_guard = v.cast<bool>();
    else if (key == "repetition_max_repeats")
      d.repetition_max_repeats = v.cast<int>();
    else if (key == "logprobs")
      d.logprobs = v.cast<bool>();
    else if (key == "hotword_boost")
      d.hotword_boost = v.cast<float>();
    else if (key == "hotwords") {
      if (py::isinstance<py::str>(v)) {
        auto words = tern::SplitHotwords(v.cast<std::string>());
        if (!words.ok()) Raise(words.status().WithPrefix("hotwords"));
        d.hotwords = std::move(*words);
      } else {
        d.hotwords = v.cast<std::vector<std::string>>();
      }
    } else {
      Raise(tern::InvalidArgumentError("unknown option '%s'", key.c_str()));
    }
  }
}

// Binds transcribe() for PySession and PyBatchSession alike: same signature, same results.
template <typename S, typename Class>
void BindTranscribe(Class& cls) {
  cls.def(
      "transcribe",
      [](S& s, const py::object& audio, std::optional<int> sample_rate, const py::dict& o,
         py::object on_progress, py::object on_text) {
        tern::AudioOptions a;
        tern::TranscribeOptions t;
        ApplyOptions(o, a, t);
        return s.Transcribe(audio, sample_rate, a, t, on_progress, on_text);
      },
      py::arg("audio"), py::arg("sample_rate") = py::none(), py::arg("options") = py::dict(),
      py::arg("on_progress") = py::none(), py::arg("on_text") = py::none());
}

std::shared_ptr<const tern::Model> LoadModel(const std::string& dir, const std::string& vae,
                                             const std::string& lm, const std::string& head) {
  tern::ModelOptions o;
  o.model_dir = dir;
  o.vae_path = vae;
  o.lm_path = lm;
  o.head = Unwrap(tern::HeadPrecisionFromName(head));
  Check(o.Validate());
  py::gil_scoped_release nogil;
  return Unwrap(tern::Model::Load(o));
}

std::string Format(const tern::Transcript& t, const std::string& format, int max_cue_chars) {
  const tern::OutputFormat f = Unwrap(tern::OutputFormatFromName(format));
  tern::FormatOptions o;
  o.max_cue_chars = max_cue_chars;
  Check(o.Validate());
  return tern::FormatTranscript(t, f, o);
}

py::dict Timings(const tern::Metrics& m) {
  py::dict stages;
  for (const auto& [name, ms] : m.stages) stages[py::str(name)] = ms;
  py::dict d;
  d["audio_ms"] = m.audio_ms;
  d["encoder_ms"] = m.encoder_ms;
  d["prefill_ms"] = m.prefill_ms;
  d["decode_ms"] = m.decode_ms;
  d["decode_ms_per_token"] = m.decode_ms_per_token();
  d["wall_ms"] = m.wall_ms;
  d["rtf"] = m.rtf;
  d["prompt_tokens"] = m.prompt_tokens;
  d["prompt_reused_tokens"] = m.prompt_reused_tokens;
  d["decode_tokens"] = m.decode_tokens;
  d["peak_rss_bytes"] = m.peak_rss_bytes;
  d["encoder_stages"] = stages;
  return d;
}

}  // namespace

PYBIND11_MODULE(_tern, m) {
  m.doc() = "tern: quantized speech recognition on CPUs (binding over include/tern/tern.h)";

  // tern.Error and one subclass per error code; the common ones also derive from the
  // matching Python built-in so that `except ValueError` / `except FileNotFoundError` work.
  PyObject* base = PyErr_NewException("tern.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(base);
  struct Kind {
    tern::ErrorCode code;
    const char* name;
    PyObject* builtin;
  };
  const Kind kinds[] = {
      {tern::ErrorCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError},
      {tern::ErrorCode::kNotFound, "NotFoundError", PyExc_FileNotFoundError},
      {tern::ErrorCode::kIo, "IoError", PyExc_OSError},
      {tern::ErrorCode::kFormat, "FormatError", PyExc_ValueError},
      {tern::ErrorCode::kUnsupported, "UnsupportedError", nullptr},
      {tern::ErrorCode::kResourceExhausted, "ResourceExhaustedError", nullptr},
      {tern::ErrorCode::kCancelled, "CancelledError", nullptr},
      {tern::ErrorCode::kInternal, "InternalError", nullptr},
  };
  static std::vector<std::pair<tern::ErrorCode, PyObject*>> classes;
  for (const Kind& k : kinds) {
    py::tuple bases = k.builtin ? py::make_tuple(py::handle(base), py::handle(k.builtin))
                                : py::make_tuple(py::handle(base));
    PyObject* cls =
        PyErr_NewException((std::string("tern.") + k.name).c_str(), bases.ptr(), nullptr);
    if (cls == nullptr) throw py::error_already_set();
    m.attr(k.name) = py::handle(cls);
    classes.emplace_back(k.code, cls);
  }
  static PyObject* base_class = base;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      PyObject* cls = base_class;
      for (const auto& [code, c] : classes) {
        if (code == e.status.code()) cls = c;
      }
      // The message alone, as OSError subclasses would otherwise split a (errno, text) pair.
      PyErr_SetObject(cls, py::str(e.status.ToString()).ptr());
    }
  });

  m.def("version", &tern::VersionString, "version, git hash and the kernel ISAs this CPU runs");
  m.def("system_info", [] { return Unwrap(tern::SystemInfo()); });

  py::class_<tern::Model, std::shared_ptr<tern::Model>>(m, "Model")
      .def_static(
          "_load",
          [](const std::string& dir, const std::string& vae, const std::string& lm,
             const std::string& head) {
            // pybind11 holds a shared_ptr<Model>; the engine hands out shared_ptr<const Model>
            // and never mutates one, so the const is dropped only for the holder type.
            return std::const_pointer_cast<tern::Model>(LoadModel(dir, vae, lm, head));
          },
          py::arg("dir"), py::arg("vae"), py::arg("lm"), py::arg("head"))
      .def_property_readonly("info", [](const tern::Model& model) {
        const tern::ModelInfo& i = model.info();
        py::dict d;
        d["vae_path"] = i.vae_path;
        d["lm_path"] = i.lm_path;
        d["name"] = i.name;
        d["vocab"] = i.vocab;
        d["hidden"] = i.hidden;
        d["layers"] = i.layers;
        d["heads"] = i.heads;
        d["kv_heads"] = i.kv_heads;
        d["ffn"] = i.ffn;
        d["context"] = i.context;
        d["head"] = i.head;
        d["isa"] = i.isa;
        d["load_ms"] = i.load_ms;
        return d;
      });

  py::class_<tern::Transcript>(m, "NativeTranscript")
      .def_readonly("text", &tern::Transcript::text)
      .def_property_readonly("segments",
                             [](const tern::Transcript& t) {
                               py::list out;
                               for (const tern::Segment& s : t.segments)
                                 out.append(py::make_tuple(s.start, s.end, s.speaker, s.text));
                               return out;
                             })
      .def_readonly("structured", &tern::Transcript::structured)
      .def_readonly("prompt_token_ids", &tern::Transcript::prompt_token_ids)
      .def_readonly("token_ids", &tern::Transcript::token_ids)
      .def_readonly("token_logprobs", &tern::Transcript::token_logprobs)
      .def_readonly("stop_reason", &tern::Transcript::stop_reason)
      .def_readonly("warnings", &tern::Transcript::warnings)
      .def_readonly("frames", &tern::Transcript::frames)
      .def_readonly("duration_s", &tern::Transcript::duration_s)
      .def_readonly("offset_s", &tern::Transcript::offset_s)
      .def_readonly("pieces", &tern::Transcript::pieces)
      .def_property_readonly("timings",
                             [](const tern::Transcript& t) { return Timings(t.metrics); })
      .def_readonly("model", &tern::Transcript::model)
      .def_readonly("head", &tern::Transcript::head)
      .def_readonly("isa", &tern::Transcript::isa)
      .def_readonly("threads", &tern::Transcript::threads)
      .def("format", &Format, py::arg("format"), py::arg("max_cue_chars") = 0,
           "the CLI's writer for txt, json, verbose_json, srt or vtt");

  py::class_<PySession> session(m, "NativeSession");
  session
      .def(py::init([](const std::shared_ptr<tern::Model>& model, int threads) {
             if (threads < 0 || threads > 1024)
               Raise(tern::InvalidArgumentError(
                   "threads must be in [1, 1024] (0: all CPUs), got %d", threads));
             return std::make_unique<PySession>(model, threads);
           }),
           py::arg("model"), py::arg("threads") = 0)
      .def_property_readonly("threads", &PySession::threads);
  BindTranscribe<PySession>(session);
  session.def(
      "live",
      [](PySession& s, int sample_rate, double update_seconds, double pause_seconds,
         double silence_db, double max_piece_seconds, bool normalize, const py::dict& o) {
        tern::LiveOptions lo;
        lo.sample_rate = sample_rate;
        lo.update_seconds = update_seconds;
        lo.pause_seconds = pause_seconds;
        lo.silence_db = silence_db;
        lo.max_piece_seconds = max_piece_seconds;
        lo.normalize = normalize;
        tern::AudioOptions unused;
        ApplyOptions(o, unused, lo.transcribe);
        return std::make_unique<PyLive>(s, lo);
      },
      py::keep_alive<0, 1>(), py::arg("sample_rate"), py::arg("update_seconds"),
      py::arg("pause_seconds"), py::arg("silence_db"), py::arg("max_piece_seconds"),
      py::arg("normalize"), py::arg("options"));

  py::class_<tern::LiveEvent>(m, "NativeLiveEvent")
      .def_property_readonly(
          "kind", [](const tern::LiveEvent& e) { return tern::LiveEventKindName(e.kind); })
      .def_readonly("piece", &tern::LiveEvent::piece)
      .def_readonly("start_sample", &tern::LiveEvent::start_sample)
      .def_readonly("end_sample", &tern::LiveEvent::end_sample)
      .def_readonly("heard_sample", &tern::LiveEvent::heard_sample)
      .def_readonly("text", &tern::LiveEvent::text)
      .def_readonly("lag_ms", &tern::LiveEvent::lag_ms)
      .def_readonly("transcript", &tern::LiveEvent::transcript);

  py::class_<PyLive>(m, "NativeLive")
      .def("feed", &PyLive::Feed, py::arg("samples"))
      .def("finish", &PyLive::Finish)
      .def_property_readonly("samples_received", &PyLive::samples_received);

  py::class_<PyBatchSession> batch(m, "NativeBatchSession");
  batch
      .def(py::init([](const std::shared_ptr<tern::Model>& model, int threads, int lanes) {
             if (threads < 0 || threads > 1024)
               Raise(tern::InvalidArgumentError(
                   "threads must be in [1, 1024] (0: all CPUs), got %d", threads));
             if (lanes < 1 || lanes > 256)
               Raise(tern::InvalidArgumentError("lanes must be in [1, 256], got %d", lanes));
             return std::make_unique<PyBatchSession>(model, threads, lanes);
           }),
           py::arg("model"), py::arg("threads") = 0, py::arg("lanes") = 16)
      .def_property_readonly("threads", &PyBatchSession::threads)
      .def_property_readonly("lanes", &PyBatchSession::lanes)
      .def_property_readonly("stats", [](const PyBatchSession& s) {
        const tern::BatchSession::Stats st = s.stats();
        return py::make_tuple(st.steps, st.rows);
      });
  BindTranscribe<PyBatchSession>(batch);
}
