// The realtime transcription protocol of GET /v1/realtime?intent=transcription, independent of
// the WebSocket machinery (realtime_ws.h carries the frames). It follows OpenAI's Realtime
// transcription events closely enough that their clients work:
//   client: transcription_session.update | session.update {session: {input_audio_format:
//           "pcm16" (24 kHz mono; nothing else), input_audio_transcription: {prompt (the
//           model's context), model, language (accepted)}, turn_detection: {type: "server_vad",
//           silence_duration_ms (the pause that ends a piece)} or null (pieces end only at
//           commit, or at the 30 s maximum)}}; input_audio_buffer.append {audio: base64
//           pcm16}; input_audio_buffer.commit; input_audio_buffer.clear.
//   server: transcription_session.created / .updated {session}; input_audio_buffer.
//           speech_started {audio_start_ms, item_id} / speech_stopped {audio_end_ms,
//           item_id} / committed {item_id, previous_item_id} / cleared;
//           conversation.item.input_audio_transcription.delta {item_id, content_index,
//           delta} and .completed {item_id, content_index, transcript}; error {error:
//           {type, code, message, param, event_id}}.
// A piece of speech (LiveSession, docs/live.md) is one item. Deltas are sent while the
// piece is spoken, each time its partial text extends what was sent for the item (a partial
// that revises earlier words sends nothing; the completed transcript is the item's text).
// Every client event is answered on the caller's thread (errors, session events) or queued
// for the connection's worker thread, which owns a Session and does all transcription: the
// caller (an I/O thread) never waits for the model.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tern/tern.h"

namespace tern::server {

struct RealtimeLimits {
  size_t max_append_bytes = 1 << 20;  // base64 audio in one append (~16 s); beyond: error event
  double max_buffered_seconds = 30;   // appended audio not yet transcribed; beyond: error event
  int threads = 1;                    // of each connection's Session
};

// "Zm9v" -> "foo"; false on anything that is not canonical padded base64.
bool DecodeBase64(std::string_view in, std::string* out);

class RealtimeConnection {
 public:
  // `send` gets each server event (a JSON text); it is called from the caller's thread and
  // from the worker thread, never from both at once.
  using Send = std::function<void(std::string event)>;
  RealtimeConnection(std::shared_ptr<const Model> model, std::string model_name,
                     TranscribeOptions defaults, const RealtimeLimits& limits, Send send);
  ~RealtimeConnection();  // Close() and wait for the worker
  RealtimeConnection(const RealtimeConnection&) = delete;
  RealtimeConnection& operator=(const RealtimeConnection&) = delete;

  // transcription_session.created; then the worker runs.
  void Start();
  // One text message from the client.
  void OnText(std::string_view message);
  // A message the protocol does not have (binary frames): an error event.
  void OnUnexpected(std::string_view what);
  // The client is gone or the server shuts down: queued audio is dropped, the worker stops
  // after the decode it is in (if any). Idempotent.
  void Close();

  struct Config {
    std::string prompt;  // input_audio_transcription.prompt -> context
    std::string transcription_model;
    std::string language;
    bool server_vad = true;
    int silence_duration_ms = 500;
    double threshold = 0.5;
    int prefix_padding_ms = 300;
  };

 private:
  struct Command {
    enum class Kind { kAudio, kCommit, kClear, kConfig } kind;
    std::vector<float> samples;  // kAudio
    Config config;               // kConfig
    std::string event_id;        // the client's, for errors
  };

  void Error(std::string_view code, std::string_view message, std::string_view param,
             std::string_view client_event_id);
  nlohmann::json SessionJson() const;                       // config_ as a TranscriptionSession
  void Emit(const std::string& type, nlohmann::json body);  // adds event_id and type
  void Queue(Command c);
  void Work();
  // Worker side.
  Status StartLive(const Config& c);
  void HandleEvents(std::vector<LiveEvent>& events, bool commit);
  std::string& ItemFor(int64_t piece);

  std::shared_ptr<const Model> model_;
  std::string model_name_;
  TranscribeOptions defaults_;
  RealtimeLimits limits_;
  Send send_;
  std::mutex send_mu_;
  uint64_t next_event_ = 0;  // under send_mu_

  Config config_;  // the caller's thread
  std::string session_id_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Command> queue_;
  size_t queued_samples_ = 0;
  bool closed_ = false;
  std::atomic<bool> cancel_{false};
  std::thread worker_;

  // Worker thread only.
  Config live_config_;  // the settings live_ runs with
  std::unique_ptr<Session> session_;
  std::unique_ptr<LiveSession> live_;
  int64_t live_base_ = 0;     // the stream sample where live_ started
  int64_t open_piece_ = -1;   // the piece the current item is for
  std::string item_id_;       // "" when no item is open
  std::string sent_text_;     // deltas sent for it
  std::string last_partial_;  // the item's previous partial text
  std::string previous_item_id_;
  uint64_t next_item_ = 0;
  int64_t appended_since_commit_ = 0;
};

}  // namespace tern::server
