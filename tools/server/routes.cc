#include "routes.h"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

namespace tern::server {
namespace {

// OpenAI's error type for an HTTP status.
const char* ErrorType(int http) {
  return http == 503 ? "server_busy"
         : http == 401 ? "authentication_error"
         : http < 500  ? "invalid_request_error"
                       : "server_error";
}

void SendJsonError(httplib::Response& res, int http, const std::string& message,
                   const std::string& param) {
  nlohmann::json err = {{"message", message}, {"type", ErrorType(http)}, {"code", nullptr}};
  err["param"] = param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param);
  res.status = http;
  // messages may quote what the client sent: invalid UTF-8 is replaced, never thrown on
  res.set_content(nlohmann::json({{"error", err}}).dump(-1, ' ', false,
                                                         nlohmann::json::error_handler_t::replace),
                  "application/json");
}

// The HTTP status that fits a request's error: the request's fault (400), audio over the
// length limit (413), else the server's (500).
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

void SendError(httplib::Response& res, const Status& s, const std::string& param = "") {
  SendJsonError(res, HttpStatus(s), s.message(), param);
}

// Equal strings, in a time that does not depend on where they first differ.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    diff |= static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]);
  return diff == 0;
}

template <typename T>
Status ParseNumber(const std::string& field, const std::string& text, T* out) {
  const char* b = text.data();
  const char* e = b + text.size();
  while (b < e && *b == ' ') ++b;
  while (e > b && e[-1] == ' ') --e;
  const auto [p, ec] = std::from_chars(b, e, *out);
  if (b == e || ec != std::errc() || p != e)
    return InvalidArgumentError("form field '%s': '%.40s' is not a number", field.c_str(),
                                text.c_str());
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*out))
      return InvalidArgumentError("form field '%s': '%.40s' is not finite", field.c_str(),
                                  text.c_str());
  }
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

// One server-sent event: "data: <json>\n\n" (deltas may end inside a character the model
// never finished: invalid UTF-8 is replaced, never thrown on).
std::string Event(const nlohmann::json& j) {
  return "data: " + j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

// stream=true: OpenAI's streaming transcription events, one transcript.text.delta per piece
// of text as the model decodes it, then transcript.text.done with the whole text (the
// deltas joined). The stream begins once the form and the audio are read, so what the
// transcription itself refuses (audio too long for the context, say) arrives as an error
// event of the type its HTTP status would have had. A client that goes away cancels the
// transcription at its next delta.
void Stream(httplib::Response& res, SessionPool::Lease lease, Audio audio, TranscribeOptions options) {
  struct Job {
    SessionPool::Lease lease;
    Audio audio;
    TranscribeOptions options;
  };
  auto job = std::make_shared<Job>(Job{std::move(lease), std::move(audio), std::move(options)});
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [job](size_t, httplib::DataSink& sink) {
    std::string text;
    job->options.on_text = [&](std::string_view d) {
      text.append(d);
      const std::string e = Event({{"type", "transcript.text.delta"}, {"delta", d}});
      return sink.write(e.data(), e.size());
    };
    Result<Transcript> t = (*job->lease).Transcribe(job->audio, job->options);
    if (!t.ok() && t.status().code() == ErrorCode::kCancelled) return false;  // client gone
    const std::string e =
        t.ok() ? Event({{"type", "transcript.text.done"}, {"text", text}})
               : Event({{"type", "error"},
                        {"error", {{"message", t.status().message()},
                                   {"type", ErrorType(HttpStatus(t.status()))}}}});
    if (!sink.write(e.data(), e.size())) return false;
    sink.done();
    return true;
  });
}

}  // namespace

Result<TranscriptionRequest> ParseTranscriptionForm(const httplib::Request& req,
                                                    const TranscribeOptions& defaults,
                                                    std::string* field) {
  TranscriptionRequest r;
  field->clear();
  r.options = defaults;
  if (!req.is_multipart_form_data())
    return InvalidArgumentError("expected a multipart/form-data body with a 'file' field");
  if (!req.has_file("file")) {
    *field = "file";
    return InvalidArgumentError("form field 'file' is missing");
  }
  const httplib::MultipartFormData& file = req.files.find("file")->second;
  r.file_name = file.filename.empty() ? "upload" : file.filename;
  r.audio = &file.content;
  for (const auto& [name, part] : req.files) {
    const std::string& v = part.content;
    *field = name;
    if (name == "file" || name == "model" || name == "language" ||
        name == "timestamp_granularities[]" || name == "include[]" ||
        name == "chunking_strategy") {
      continue;  // OpenAI's, with nothing to change here
    } else if (name == "stream") {
      if (v == "true") r.stream = true;
      else if (v != "false")
        return InvalidArgumentError("form field 'stream': '%.40s' is not true or false", v.c_str());
    } else if (name == "response_format") {
      if (v == "json") r.format = OutputFormat::kJson;
      else if (v == "text") r.format = OutputFormat::kTxt;
      else if (v == "srt") r.format = OutputFormat::kSrt;
      else if (v == "vtt") r.format = OutputFormat::kVtt;
      else if (v == "verbose_json") r.format = OutputFormat::kVerboseJson;
      else
        return InvalidArgumentError(
            "form field 'response_format': '%.40s' is not json, text, srt, vtt or verbose_json",
            v.c_str());
    } else if (name == "prompt") {
      r.options.context = v;
    } else if (name == "prompt_format") {
      if (v == "text") r.options.format = PromptFormat::kText;
      else if (v == "json") r.options.format = PromptFormat::kJson;
      else return InvalidArgumentError("form field 'prompt_format': '%.40s' is not text or json", v.c_str());
    } else if (name == "temperature") {
      TERN_RETURN_IF_ERROR(ParseNumber(name, v, &r.options.decoding.temperature));
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
  if (r.stream && r.format != OutputFormat::kJson && r.format != OutputFormat::kTxt) {
    *field = "response_format";
    return InvalidArgumentError("form field 'response_format': stream=true sends text events; "
                                "ask for json or text");
  }
  field->clear();  // the option checks below name their value themselves
  TERN_RETURN_IF_ERROR(r.options.Validate());
  TERN_RETURN_IF_ERROR(r.format_options.Validate());
  return r;
}

void InstallRoutes(httplib::Server& server, const ServerConfig& config, SessionPool& pool) {
  // --api-key: every /v1/ route wants it as a bearer token.
  server.set_pre_routing_handler([&config](const httplib::Request& req, httplib::Response& res) {
    if (config.api_key.empty() || req.path.rfind("/v1/", 0) != 0)
      return httplib::Server::HandlerResponse::Unhandled;
    if (SameSecret(req.get_header_value("Authorization"), "Bearer " + config.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    SendJsonError(res, 401, "missing or wrong API key (Authorization: Bearer <key>)", "");
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own refusals (413 over --max-upload-mb, 404 unknown path, ...) in the same
  // JSON form as ours.
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string what = res.status == 413 ? "the request body is over --max-upload-mb"
                             : res.status == 404 ? "no route " + req.method + " " + req.path
                                                 : "HTTP " + std::to_string(res.status);
    SendJsonError(res, res.status, what, "");
  });
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  server.Get("/v1/models", [&config](const httplib::Request&, httplib::Response& res) {
    const nlohmann::json j = {
        {"object", "list"},
        {"data", {{{"id", config.model_name}, {"object", "model"}, {"owned_by", "tern"}}}}};
    res.set_content(j.dump(), "application/json");
  });
  server.Post("/v1/audio/transcriptions", [&config, &pool](const httplib::Request& req,
                                                           httplib::Response& res) {
    std::string field;
    Result<TranscriptionRequest> r = ParseTranscriptionForm(req, config.defaults, &field);
    if (!r.ok()) return SendError(res, r.status(), field);
    Result<Audio> audio =
        LoadAudioFromMemory(r->audio->data(), r->audio->size(), r->file_name, config.audio);
    if (!audio.ok()) return SendError(res, audio.status(), "file");
    Result<SessionPool::Lease> lease = pool.Acquire();
    if (!lease.ok()) return SendJsonError(res, 503, lease.status().message(), "");
    if (r->stream) return Stream(res, std::move(*lease), std::move(*audio), r->options);
    Result<Transcript> t = (**lease).Transcribe(*audio, r->options);
    if (!t.ok()) return SendError(res, t.status());
    res.set_content(FormatTranscript(*t, r->format, r->format_options), ContentType(r->format));
  });
}

}  // namespace tern::server
