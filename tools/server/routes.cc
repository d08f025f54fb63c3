#include "routes.h"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "static_page.h"

namespace tern::server {
namespace {

using nlohmann::json;

// Invalid UTF-8 (a client's bytes quoted back, or model output cut mid-character) is
// replaced, never thrown on.
std::string Dump(const json& j, int indent = -1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

// OpenAI's error type for an HTTP status.
const char* ErrorType(int http) {
  return http == 503   ? "server_busy"
         : http == 401 ? "authentication_error"
         : http < 500  ? "invalid_request_error"
                       : "server_error";
}

std::string Scrub(const ServerConfig& config, std::string message) {
  for (const std::string& p : config.private_paths) {
    if (p.empty()) continue;
    std::string base = p;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    base = base.substr(base.find_last_of('/') + 1);
    for (size_t at; (at = message.find(p)) != std::string::npos;)
      message.replace(at, p.size(), base);
  }
  return message;
}

template <typename T>
Status ParseNumber(const std::string& field, std::string_view text, T* out) {
  const char* b = text.data();
  const char* e = b + text.size();
  while (b < e && *b == ' ') ++b;
  while (e > b && e[-1] == ' ') --e;
  const auto [p, ec] = std::from_chars(b, e, *out);
  const std::string shown(text.substr(0, 40));
  if (b == e || ec != std::errc() || p != e)
    return InvalidArgumentError("form field '%s': '%s' is not a number", field.c_str(),
                                shown.c_str());
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*out))
      return InvalidArgumentError("form field '%s': '%s' is not finite", field.c_str(),
                                  shown.c_str());
  }
  return Status::Ok();
}

// chunking_strategy: OpenAI cuts long audio at pauses it finds; tern's engine cuts long
// audio into pieces at the quietest moment near each piece's limit, so both forms map to
// pieces of at most `seconds` (ServerConfig::chunking_seconds).
Status ParseChunking(std::string_view v, double seconds, TranscribeOptions* o) {
  if (v == "auto") {
    o->chunk_seconds = seconds;
    return Status::Ok();
  }
  const json j = json::parse(v.begin(), v.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || j["type"] != "server_vad")
    return InvalidArgumentError(
        "form field 'chunking_strategy': expected \"auto\" or "
        "{\"type\":\"server_vad\",...}");
  for (const auto& [k, val] : j.items()) {
    if (k == "type") continue;
    if (k != "prefix_padding_ms" && k != "silence_duration_ms" && k != "threshold")
      return InvalidArgumentError("form field 'chunking_strategy': unknown key '%.40s'", k.c_str());
    if (!val.is_number())
      return InvalidArgumentError("form field 'chunking_strategy': '%s' is not a number",
                                  k.c_str());
  }
  o->chunk_seconds = seconds;
  return Status::Ok();
}

const char* ContentType(OutputFormat f) {
  switch (f) {
    case OutputFormat::kJson:
    case OutputFormat::kVerboseJson:
      return "application/json";
    case OutputFormat::kVtt:
      return "text/vtt; charset=utf-8";
    default:
      return "text/plain; charset=utf-8";
  }
}

std::string Event(const json& j) { return "data: " + Dump(j) + "\n\n"; }

// verbose_json in OpenAI's shape (task, language, duration, text, segments with id, start,
// end, text, avg_logprob), plus what the CLI's verbose_json adds that concerns the
// transcript (token ids and log-probabilities, stop reason, pieces). The host's details
// (memory, ISA, threads, timings) stay out of answers to clients.
std::string VerboseJson(const Transcript& t, const TranscriptionRequest& r) {
  json j = json::parse(FormatTranscript(t, OutputFormat::kVerboseJson), nullptr, false);
  if (j.is_discarded()) return FormatTranscript(t, OutputFormat::kVerboseJson);
  for (const char* k : {"peak_rss_bytes", "isa", "threads", "head", "timings_ms", "rtf"})
    j.erase(k);
  j["task"] = "transcribe";
  if (!r.language.empty()) j["language"] = r.language;
  json& segs = j["segments"];
  for (size_t i = 0; i < segs.size(); ++i) {
    segs[i]["id"] = i;
    segs[i]["temperature"] = r.options.decoding.temperature;
    // Log-probabilities are per token and the model's segments carry no token spans: a
    // lone segment's average is the transcript's.
    if (segs.size() == 1 && j.contains("avg_logprob")) segs[i]["avg_logprob"] = j["avg_logprob"];
  }
  return Dump(j, 2) + "\n";
}

}  // namespace

int HttpStatus(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
    case ErrorCode::kFormat:
    case ErrorCode::kUnsupported:
      return 400;
    case ErrorCode::kResourceExhausted:
      return 413;
    default:
      return 500;
  }
}

Reply JsonError(int status, std::string_view message, std::string_view param) {
  json err = {{"message", message}, {"type", ErrorType(status)}, {"code", nullptr}};
  err["param"] = param.empty() ? json(nullptr) : json(param);
  Reply r;
  r.status = status;
  r.body = Dump(json{{"error", err}});
  if (status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

Reply ErrorReply(const ServerConfig& config, const Status& s, std::string_view param) {
  return JsonError(HttpStatus(s), Scrub(config, s.message()), param);
}

Reply HealthReply() {
  Reply r;
  r.body = R"({"status":"ok"})";
  return r;
}

Reply ModelsReply(const ServerConfig& config) {
  Reply r;
  r.body = json{{"object", "list"},
                {"data", {{{"id", config.model_name}, {"object", "model"}, {"owned_by", "tern"}}}}}
               .dump();
  return r;
}

Reply PageReply() {
  Reply r;
  r.content_type = "text/html; charset=utf-8";
  r.body = kIndexHtml;
  return r;
}

bool Authorized(const ServerConfig& config, std::string_view authorization) {
  if (config.api_key.empty()) return true;
  // Equal strings, in a time that does not depend on where they first differ.
  const std::string want = "Bearer " + config.api_key;
  unsigned diff = authorization.size() != want.size();
  for (size_t i = 0; i < authorization.size() && i < want.size(); ++i)
    diff |= static_cast<unsigned char>(authorization[i]) ^ static_cast<unsigned char>(want[i]);
  return diff == 0;
}

Result<TranscriptionRequest> ParseTranscriptionForm(std::string_view content_type,
                                                    std::string_view body,
                                                    const ServerConfig& config,
                                                    std::string* field) {
  TranscriptionRequest r;
  field->clear();
  r.options = config.defaults;
  TERN_ASSIGN_OR_RETURN(const std::string boundary, MultipartBoundary(content_type));
  TERN_ASSIGN_OR_RETURN(const std::vector<FormPart> parts, ParseMultipart(body, boundary));
  bool have_file = false;
  for (const FormPart& part : parts) {
    const std::string& name = part.name;
    const std::string_view v = part.content;
    const std::string shown(v.substr(0, 40));
    *field = name;
    if (name == "file") {
      if (have_file) return InvalidArgumentError("form field 'file' is given twice");
      have_file = true;
      r.file_name = part.filename.empty() ? "upload" : part.filename;
      r.audio = v;
    } else if (name == "model" || name == "timestamp_granularities[]" || name == "include[]") {
      continue;  // OpenAI's, with nothing to change here
    } else if (name == "language") {
      r.language = std::string(v.substr(0, 32));
    } else if (name == "chunking_strategy") {
      TERN_RETURN_IF_ERROR(ParseChunking(v, config.chunking_seconds, &r.options));
    } else if (name == "stream") {
      if (v == "true")
        r.stream = true;
      else if (v != "false")
        return InvalidArgumentError("form field 'stream': '%s' is not true or false",
                                    shown.c_str());
    } else if (name == "response_format") {
      if (v == "json")
        r.format = OutputFormat::kJson;
      else if (v == "text")
        r.format = OutputFormat::kTxt;
      else if (v == "srt")
        r.format = OutputFormat::kSrt;
      else if (v == "vtt")
        r.format = OutputFormat::kVtt;
      else if (v == "verbose_json")
        r.format = OutputFormat::kVerboseJson;
      else
        return InvalidArgumentError(
            "form field 'response_format': '%s' is not json, text, srt, vtt or verbose_json",
            shown.c_str());
    } else if (name == "prompt") {
      r.options.context = std::string(v);
    } else if (name == "prompt_format") {
      if (v == "text")
        r.options.format = PromptFormat::kText;
      else if (v == "json")
        r.options.format = PromptFormat::kJson;
      else
        return InvalidArgumentError("form field 'prompt_format': '%s' is not text or json",
                                    shown.c_str());
    } else if (name == "temperature") {
      TERN_RETURN_IF_ERROR(ParseNumber(name, v, &r.options.decoding.temperature));
      if (r.options.decoding.temperature < 0 || r.options.decoding.temperature > 1)
        return InvalidArgumentError("form field 'temperature': %g is not in [0, 1]",
                                    r.options.decoding.temperature);
    } else if (name == "beam") {
      TERN_RETURN_IF_ERROR(ParseNumber(name, v, &r.options.decoding.beam));
    } else if (name == "max_tokens") {
      TERN_RETURN_IF_ERROR(ParseNumber(name, v, &r.options.decoding.max_tokens));
    } else if (name == "hotword_boost") {
      TERN_RETURN_IF_ERROR(ParseNumber(name, v, &r.options.decoding.hotword_boost));
    } else if (name == "max_cue_chars") {
      TERN_RETURN_IF_ERROR(ParseNumber(name, v, &r.format_options.max_cue_chars));
    } else if (name == "hotwords") {
      Result<std::vector<std::string>> words = SplitHotwords(v);
      if (!words.ok()) return words.status().WithPrefix("form field 'hotwords'");
      r.options.decoding.hotwords = std::move(*words);
    } else {
      return InvalidArgumentError("unknown form field '%.64s'", name.c_str());
    }
  }
  if (!have_file) {
    *field = "file";
    return InvalidArgumentError("form field 'file' is missing");
  }
  if (r.stream && r.format != OutputFormat::kJson && r.format != OutputFormat::kTxt) {
    *field = "response_format";
    return InvalidArgumentError(
        "form field 'response_format': stream=true sends text events; "
        "ask for json or text");
  }
  field->clear();  // the option checks below name their value themselves
  r.options.decoding.logprobs = r.format == OutputFormat::kVerboseJson;
  TERN_RETURN_IF_ERROR(r.options.Validate());
  TERN_RETURN_IF_ERROR(r.format_options.Validate());
  return r;
}

std::string ErrorEvent(std::string_view message, std::string_view type) {
  return Event({{"type", "error"}, {"error", {{"message", message}, {"type", type}}}});
}

Outcome RunTranscription(BatchSession& session, const ServerConfig& config,
                         const TranscriptionRequest& r, const std::atomic<bool>& cancel,
                         const StreamSink* sink) {
  Outcome out;
  if (cancel.load()) {
    out.reply = JsonError(503, "the server is shutting down or the client has gone");
    out.note = "cancelled before it ran";
    return out;
  }
  Result<Audio> audio =
      LoadAudioFromMemory(r.audio.data(), r.audio.size(), r.file_name, config.audio);
  if (!audio.ok()) {
    out.reply = ErrorReply(config, audio.status(), "file");
    out.note = audio.status().message();
    return out;
  }
  out.audio_seconds = audio->duration_s();
  TranscribeOptions o = r.options;
  o.cancel = &cancel;
  if (sink == nullptr) {
    Result<Transcript> t = session.Transcribe(*audio, o);
    if (!t.ok()) {
      // Cancelled: the client has gone (nobody reads this) or the server is shutting down.
      out.reply =
          t.status().code() == ErrorCode::kCancelled
              ? JsonError(503, "the transcription was cancelled: the server is shutting down")
              : ErrorReply(config, t.status());
      out.note = t.status().message();
      return out;
    }
    out.reply.content_type = ContentType(r.format);
    out.reply.body = r.format == OutputFormat::kVerboseJson
                         ? VerboseJson(*t, r)
                         : FormatTranscript(*t, r.format, r.format_options);
    return out;
  }
  // stream=true: the stream begins once the audio is read, so what the transcription itself
  // refuses (audio too long for the context, say) arrives as an error event of the type its
  // HTTP status would have had.
  out.streamed = true;
  sink->begin();
  std::string text;
  o.on_text = [&](std::string_view d) {
    text.append(d);
    return sink->send(Event({{"type", "transcript.text.delta"}, {"delta", d}}));
  };
  Result<Transcript> t = session.Transcribe(*audio, o);
  if (t.ok()) {
    sink->send(Event({{"type", "transcript.text.done"}, {"text", text}}));
  } else {
    const bool shutting = t.status().code() == ErrorCode::kCancelled;
    out.note = t.status().message();
    sink->send(shutting ? ErrorEvent("the transcription was cancelled: the server is shutting down",
                                     "server_error")
                        : ErrorEvent(Scrub(config, t.status().message()),
                                     ErrorType(HttpStatus(t.status()))));
  }
  return out;
}

}  // namespace tern::server
