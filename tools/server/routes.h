// What tern-server answers, independent of the HTTP machinery (http_session.h reads and
// writes; this decides). The routes, OpenAI-compatible where clients expect it:
//   GET  /                         a small page: upload a file, pick a format, see the text
//   GET  /health                   {"status":"ok"}
//   GET  /v1/models                the loaded model, as the models list of the OpenAI API
//   POST /v1/audio/transcriptions  multipart form: file (required), response_format
//        (json | text | srt | vtt | verbose_json; default json), prompt (folded into the
//        prompt as context), temperature (in [0, 1], as OpenAI's), chunking_strategy
//        ("auto" or {"type":"server_vad",...}: pieces of at most 30 s cut at quiet moments),
//        and tern's own: hotwords (comma-separated), hotword_boost, beam, max_tokens,
//        prompt_format (text | json), max_cue_chars. model, language,
//        timestamp_granularities[] and include[] are accepted (one model is loaded; it
//        detects the language; times come per segment); unknown fields are errors.
//        stream=true (with response_format json or text) answers with server-sent events as
//        OpenAI's streaming transcriptions do: data: {"type":"transcript.text.delta",...}
//        as the text is decoded, then data: {"type":"transcript.text.done","text":...} (or
//        {"type":"error",...}).
// Errors are JSON, {"error": {"message", "type", "param", "code"}}, and never carry the
// server's file paths.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "multipart.h"
#include "tern/tern.h"

namespace tern::server {

struct ServerConfig {
  std::string model_name;      // what /v1/models lists
  std::string api_key;         // when set, /v1/* requires "Authorization: Bearer <key>"
  AudioOptions audio;          // --max-audio-seconds and the front end's defaults
  TranscribeOptions defaults;  // --max-tokens etc.; requests override per field
  // The pieces a request's chunking_strategy asks for: at most 30 s, or 0 (the engine's own
  // pieces, sized to the clips it was trained on) for a model that declares that length.
  double chunking_seconds = 30;
  // Paths on the server (model files and folders) that error messages must not show; each
  // is replaced by its last component.
  std::vector<std::string> private_paths;
};

// One answer: status, type, body and any extra headers.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// OpenAI's error form; a 503 also says when to retry (Retry-After).
Reply JsonError(int status, std::string_view message, std::string_view param = "");
// A Status as the reply its code calls for (400 the request's fault, 413 over a limit, 500
// otherwise), the server's paths removed from the message.
Reply ErrorReply(const ServerConfig& config, const Status& s, std::string_view param = "");
int HttpStatus(const Status& s);

Reply HealthReply();
Reply ModelsReply(const ServerConfig& config);
Reply PageReply();  // GET /: static/index.html, compiled in

// Whether an Authorization header value carries the API key (always, when none is set).
bool Authorized(const ServerConfig& config, std::string_view authorization);

// What one transcription request asks for, parsed from its form.
struct TranscriptionRequest {
  std::string file_name;
  std::string_view audio;  // the uploaded bytes (a view into the request body)
  OutputFormat format = OutputFormat::kJson;
  bool stream = false;   // server-sent events as the text is decoded
  std::string language;  // echoed in verbose_json when given
  FormatOptions format_options;
  TranscribeOptions options;
};

// An error's message names the form field at fault, and so does *field (empty when the
// fault is the body as a whole or an option's value seen by its Validate()).
Result<TranscriptionRequest> ParseTranscriptionForm(std::string_view content_type,
                                                    std::string_view body,
                                                    const ServerConfig& config, std::string* field);

// Where a streamed transcription's bytes go: Begin once the audio has decoded (the response
// header), then each event; Send returns false once the client has gone.
struct StreamSink {
  std::function<void()> begin;
  std::function<bool(const std::string& event)> send;
};

struct Outcome {
  Reply reply;  // the answer (for a stream that began: status 200, body unused)
  bool streamed = false;
  double audio_seconds = 0;
  std::string note;  // for the access log: why it failed, when it did
};

// Decodes the upload and transcribes it on `session` (a worker thread, never an I/O thread;
// the audio is decoded only now that a session is taken). `cancel` stops it (the client
// went away, or the server is shutting down). With stream=true, `sink` gets the events.
Outcome RunTranscription(BatchSession& session, const ServerConfig& config,
                         const TranscriptionRequest& request, const std::atomic<bool>& cancel,
                         const StreamSink* sink);

// One server-sent event: "data: <json>\n\n".
std::string ErrorEvent(std::string_view message, std::string_view type);

}  // namespace tern::server
