// The HTTP routes of tern-server, OpenAI-compatible where clients expect it:
//   GET  /health                   {"status":"ok"}
//   GET  /v1/models                the loaded model, as the models list of the OpenAI API
//   POST /v1/audio/transcriptions  multipart form: file (required), response_format
//        (json | text | srt | vtt | verbose_json; default json), prompt (folded into the
//        prompt as context), temperature, and tern's own: hotwords (comma-separated),
//        hotword_boost, beam, max_tokens, prompt_format (text | json), max_cue_chars.
//        model, language, timestamp_granularities[], include[] and chunking_strategy are
//        accepted and ignored (one model is loaded; it detects the language; times come per
//        segment); unknown fields are errors. stream=true (with response_format json or
//        text) answers with server-sent events as OpenAI's streaming transcriptions do:
//        data: {"type":"transcript.text.delta","delta":...} as the text is decoded, then
//        data: {"type":"transcript.text.done","text":...} (or {"type":"error",...}).
// Errors are JSON, {"error": {"message", "type", "param", "code"}}: 400 for a bad request
// (the message and param name the field, or the audio's problem), 413 for audio over the
// length limit or a body over --max-upload-mb, 401 without the --api-key (when one is set;
// /health stays open), 503 when every session is busy and the wait list is full, 404 for an
// unknown route, 500 otherwise.
#pragma once

#include <string>

#include <httplib.h>

#include "session_pool.h"
#include "tern/tern.h"

namespace tern::server {

struct ServerConfig {
  std::string model_name;       // what /v1/models lists
  std::string api_key;          // when set, /v1/* requires "Authorization: Bearer <key>"
  AudioOptions audio;           // --max-audio-seconds and the front end's defaults
  TranscribeOptions defaults;   // --max-tokens etc.; requests override per field
};

// What one transcription request asks for, parsed from its form.
struct TranscriptionRequest {
  std::string file_name;
  const std::string* audio = nullptr;  // the uploaded bytes (owned by the httplib request)
  OutputFormat format = OutputFormat::kJson;
  bool stream = false;  // server-sent events as the text is decoded
  FormatOptions format_options;
  TranscribeOptions options;
};

// An error's message names the form field at fault, and so does *field (empty when the
// fault is the body as a whole or an option's value seen by its Validate()).
Result<TranscriptionRequest> ParseTranscriptionForm(const httplib::Request& req,
                                                    const TranscribeOptions& defaults,
                                                    std::string* field);

void InstallRoutes(httplib::Server& server, const ServerConfig& config, SessionPool& pool);

}  // namespace tern::server
