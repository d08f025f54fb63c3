#include "realtime.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tern::server {

namespace {

using json = nlohmann::json;

constexpr double kRate = 24000.0;
// Without turn detection a piece ends at a commit, or at the maximum length: the longest
// pause LiveOptions accepts stands for "never".
constexpr double kManualPauseSeconds = 10.0;

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The longest prefix of `s` that does not end inside a UTF-8 sequence.
size_t CompleteUtf8(std::string_view s) {
  size_t end = s.size();
  size_t back = 0;
  while (back < 4 && back < end && (static_cast<unsigned char>(s[end - 1 - back]) & 0xC0) == 0x80)
    ++back;
  if (back == end) return 0;
  const unsigned char lead = static_cast<unsigned char>(s[end - 1 - back]);
  const size_t need = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : 4;
  return back + 1 >= need ? end : end - 1 - back;
}

// What two successive partials agree on, up to the end of the last whole word they share.
std::string StablePrefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  if (n == a.size() && n == b.size()) return a.substr(0, CompleteUtf8(a));
  // cut at the last space inside the common part: a word both end in the same way
  const size_t space = a.substr(0, n).find_last_of(' ');
  return space == std::string::npos ? std::string() : a.substr(0, space);
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

int64_t Ms(int64_t samples) { return samples * 1000 / static_cast<int64_t>(kRate); }

}  // namespace

bool DecodeBase64(std::string_view in, std::string* out) {
  out->clear();
  if (in.size() % 4 != 0) return false;
  out->reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // data after '='
      v[k] = Base64Value(c);
      if (v[k] < 0) return false;
    }
    const uint32_t w = static_cast<uint32_t>(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
    out->push_back(static_cast<char>(w >> 16));
    if (pad < 2) out->push_back(static_cast<char>((w >> 8) & 0xFF));
    if (pad < 1) out->push_back(static_cast<char>(w & 0xFF));
  }
  return true;
}

RealtimeConnection::RealtimeConnection(std::shared_ptr<const Model> model, std::string model_name,
                                       TranscribeOptions defaults, const RealtimeLimits& limits,
                                       Send send)
    : model_(std::move(model)),
      model_name_(std::move(model_name)),
      defaults_(std::move(defaults)),
      limits_(limits),
      send_(std::move(send)) {
  static std::atomic<uint64_t> next_session{0};
  session_id_ = "sess_tern_" + std::to_string(++next_session);
  config_.transcription_model = model_name_;
  defaults_.on_progress = nullptr;
  defaults_.on_text = nullptr;
  defaults_.cancel = &cancel_;
}

RealtimeConnection::~RealtimeConnection() {
  Close();
  if (worker_.joinable()) worker_.join();
}

void RealtimeConnection::Start() {
  Emit("transcription_session.created", {{"session", SessionJson()}});
  worker_ = std::thread([this] { Work(); });
}

void RealtimeConnection::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cancel_ = true;
  queue_.clear();
  queued_samples_ = 0;
  cv_.notify_all();
}

json RealtimeConnection::SessionJson() const {
  json s;
  s["id"] = session_id_;
  s["object"] = "realtime.transcription_session";
  s["modalities"] = json::array({"text"});
  s["input_audio_format"] = "pcm16";
  s["input_audio_transcription"] = {
      {"model", config_.transcription_model},
      {"prompt", config_.prompt},
      {"language", config_.language.empty() ? json(nullptr) : json(config_.language)}};
  if (config_.server_vad) {
    s["turn_detection"] = {{"type", "server_vad"},
                           {"threshold", config_.threshold},
                           {"prefix_padding_ms", config_.prefix_padding_ms},
                           {"silence_duration_ms", config_.silence_duration_ms}};
  } else {
    s["turn_detection"] = nullptr;
  }
  s["client_secret"] = nullptr;
  return s;
}

void RealtimeConnection::Emit(const std::string& type, json body) {
  std::lock_guard<std::mutex> lock(send_mu_);
  json e;
  e["event_id"] = "event_tern_" + std::to_string(++next_event_);
  e["type"] = type;
  for (auto& [k, v] : body.items()) e[k] = std::move(v);
  send_(e.dump(-1, ' ', false, json::error_handler_t::replace));
}

void RealtimeConnection::Error(std::string_view code, std::string_view message,
                               std::string_view param, std::string_view client_event_id) {
  json err = {
      {"type", "invalid_request_error"},
      {"code", std::string(code)},
      {"message", std::string(message)},
      {"param", param.empty() ? json(nullptr) : json(std::string(param))},
      {"event_id", client_event_id.empty() ? json(nullptr) : json(std::string(client_event_id))}};
  if (code == "server_error") err["type"] = "server_error";
  Emit("error", {{"error", std::move(err)}});
}

void RealtimeConnection::OnUnexpected(std::string_view what) {
  Error("invalid_event", std::string(what) + ": client events are JSON text messages", "", "");
}

void RealtimeConnection::Queue(Command c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  queued_samples_ += c.samples.size();
  queue_.push_back(std::move(c));
  cv_.notify_one();
}

void RealtimeConnection::OnText(std::string_view message) {
  const json j = json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error("invalid_json", "the message is not valid JSON", "", "");
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    return Error("invalid_event", "a client event is a JSON object with a string 'type'", "type",
                 "");
  const std::string type = j["type"];
  const std::string event_id =
      j.contains("event_id") && j["event_id"].is_string() ? j["event_id"].get<std::string>() : "";

  if (type == "input_audio_buffer.append") {
    if (!j.contains("audio") || !j["audio"].is_string())
      return Error("missing_required_parameter",
                   "input_audio_buffer.append needs 'audio' (base64 pcm16)", "audio", event_id);
    const std::string& b64 = j["audio"].get_ref<const std::string&>();
    if (b64.size() > limits_.max_append_bytes)
      return Error("input_audio_buffer_append_too_large",
                   "the appended audio is " + std::to_string(b64.size()) +
                       " bytes of base64; at most " + std::to_string(limits_.max_append_bytes) +
                       " are accepted per append",
                   "audio", event_id);
    std::string pcm;
    if (!DecodeBase64(b64, &pcm))
      return Error("invalid_value", "'audio' is not valid base64", "audio", event_id);
    if (pcm.size() % 2 != 0)
      return Error("invalid_value", "'audio' is not whole 16-bit samples (an odd byte count)",
                   "audio", event_id);
    Command c{Command::Kind::kAudio, {}, {}, event_id};
    c.samples.resize(pcm.size() / 2);
    for (size_t i = 0; i < c.samples.size(); ++i) {
      const auto lo = static_cast<unsigned char>(pcm[2 * i]);
      const auto hi = static_cast<unsigned char>(pcm[2 * i + 1]);
      c.samples[i] = static_cast<float>(static_cast<int16_t>(lo | hi << 8)) / 32768.0f;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      const size_t limit = static_cast<size_t>(limits_.max_buffered_seconds * kRate);
      if (queued_samples_ + c.samples.size() > limit) {
        // the client sends faster than the model transcribes: refuse rather than hold it
        return Error("input_audio_buffer_full",
                     "more than " + std::to_string(limits_.max_buffered_seconds) +
                         " s of audio wait to be transcribed; this append was dropped",
                     "audio", event_id);
      }
    }
    return Queue(std::move(c));
  }
  if (type == "input_audio_buffer.commit") return Queue({Command::Kind::kCommit, {}, {}, event_id});
  if (type == "input_audio_buffer.clear") return Queue({Command::Kind::kClear, {}, {}, event_id});
  if (type == "transcription_session.update" || type == "session.update") {
    if (!j.contains("session") || !j["session"].is_object())
      return Error("missing_required_parameter", type + " needs a 'session' object", "session",
                   event_id);
    const json& s = j["session"];
    Config c = config_;
    if (s.contains("input_audio_format")) {
      if (!s["input_audio_format"].is_string() || s["input_audio_format"] != "pcm16")
        return Error("invalid_value",
                     "input_audio_format must be 'pcm16' (24 kHz mono, little-endian); "
                     "g711 is not supported",
                     "session.input_audio_format", event_id);
    }
    if (s.contains("input_audio_transcription") && !s["input_audio_transcription"].is_null()) {
      const json& t = s["input_audio_transcription"];
      if (!t.is_object())
        return Error("invalid_type", "input_audio_transcription must be an object",
                     "session.input_audio_transcription", event_id);
      for (const char* key : {"prompt", "model", "language"}) {
        if (t.contains(key) && !t[key].is_null() && !t[key].is_string())
          return Error("invalid_type", std::string(key) + " must be a string",
                       std::string("session.input_audio_transcription.") + key, event_id);
      }
      if (t.contains("prompt") && t["prompt"].is_string()) c.prompt = t["prompt"];
      if (t.contains("model") && t["model"].is_string()) c.transcription_model = t["model"];
      if (t.contains("language") && t["language"].is_string()) c.language = t["language"];
      if (c.prompt.size() > 64 * 1024)
        return Error("invalid_value", "prompt is longer than 65536 bytes",
                     "session.input_audio_transcription.prompt", event_id);
    }
    if (s.contains("turn_detection")) {
      const json& t = s["turn_detection"];
      if (t.is_null()) {
        c.server_vad = false;
      } else if (!t.is_object()) {
        return Error("invalid_type", "turn_detection must be an object or null",
                     "session.turn_detection", event_id);
      } else {
        if (t.contains("type") && t["type"] != "server_vad")
          return Error("invalid_value", "turn_detection.type must be 'server_vad'",
                       "session.turn_detection.type", event_id);
        c.server_vad = true;
        if (t.contains("silence_duration_ms")) {
          const json& v = t["silence_duration_ms"];
          if (!v.is_number() || v.get<double>() < 50 || v.get<double>() > 10000)
            return Error("invalid_value", "silence_duration_ms must be a number in [50, 10000]",
                         "session.turn_detection.silence_duration_ms", event_id);
          c.silence_duration_ms = static_cast<int>(v.get<double>());
        }
        if (t.contains("threshold")) {
          const json& v = t["threshold"];
          if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
            return Error("invalid_value", "threshold must be a number in [0, 1]",
                         "session.turn_detection.threshold", event_id);
          c.threshold = v.get<double>();
        }
        if (t.contains("prefix_padding_ms")) {
          const json& v = t["prefix_padding_ms"];
          if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 10000)
            return Error("invalid_value", "prefix_padding_ms must be a number in [0, 10000]",
                         "session.turn_detection.prefix_padding_ms", event_id);
          c.prefix_padding_ms = static_cast<int>(v.get<double>());
        }
      }
    }
    config_ = c;
    Queue({Command::Kind::kConfig, {}, c, event_id});
    return Emit(type == "session.update" ? "session.updated" : "transcription_session.updated",
                {{"session", SessionJson()}});
  }
  Error("invalid_event", "unknown client event type '" + type + "'", "type", event_id);
}

Status RealtimeConnection::StartLive(const Config& c) {
  if (live_) live_base_ += live_->samples_received();
  LiveOptions o;
  o.transcribe = defaults_;
  o.transcribe.context = c.prompt;
  o.pause_seconds = c.server_vad ? c.silence_duration_ms / 1000.0 : kManualPauseSeconds;
  live_.reset();
  Result<std::unique_ptr<LiveSession>> live = session_->StartLive(o);
  if (!live.ok()) return live.status();
  live_ = std::move(*live);
  open_piece_ = -1;
  item_id_.clear();
  return Status::Ok();
}

std::string& RealtimeConnection::ItemFor(int64_t piece) {
  if (item_id_.empty() || open_piece_ != piece) {
    item_id_ = "item_tern_" + std::to_string(++next_item_);
    open_piece_ = piece;
    sent_text_.clear();
    last_partial_.clear();
  }
  return item_id_;
}

void RealtimeConnection::HandleEvents(std::vector<LiveEvent>& events, bool commit) {
  const bool vad = live_config_.server_vad;
  for (LiveEvent& e : events) {
    const std::string item = ItemFor(e.piece);
    switch (e.kind) {
      case LiveEvent::Kind::kSpeechStarted:
        if (vad) {
          Emit("input_audio_buffer.speech_started",
               {{"audio_start_ms", Ms(live_base_ + e.start_sample)}, {"item_id", item}});
        }
        break;
      case LiveEvent::Kind::kPartial: {
        const std::string stable = StablePrefix(e.text, last_partial_);
        last_partial_ = e.text;
        if (stable.size() > sent_text_.size() &&
            stable.compare(0, sent_text_.size(), sent_text_) == 0) {
          Emit("conversation.item.input_audio_transcription.delta",
               {{"item_id", item},
                {"content_index", 0},
                {"delta", stable.substr(sent_text_.size())}});
          sent_text_ = stable;
        }
        break;
      }
      case LiveEvent::Kind::kFinal:
        if (vad && !commit) {
          Emit("input_audio_buffer.speech_stopped",
               {{"audio_end_ms", Ms(live_base_ + e.end_sample)}, {"item_id", item}});
        }
        Emit("input_audio_buffer.committed",
             {{"item_id", item},
              {"previous_item_id",
               previous_item_id_.empty() ? json(nullptr) : json(previous_item_id_)}});
        Emit("conversation.item.input_audio_transcription.completed",
             {{"item_id", item}, {"content_index", 0}, {"transcript", Trim(e.text)}});
        previous_item_id_ = item;
        item_id_.clear();
        break;
    }
  }
  events.clear();
}

void RealtimeConnection::Work() {
  session_ = std::make_unique<Session>(model_, limits_.threads);
  live_config_ = Config{};
  if (Status s = StartLive(live_config_); !s.ok()) {
    Error("server_error", s.message(), "", "");
    return;
  }
  std::vector<LiveEvent> events;
  while (true) {
    Command c;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closed_ || !queue_.empty(); });
      if (closed_) return;
      c = std::move(queue_.front());
      queue_.pop_front();
      queued_samples_ -= c.samples.size();
    }
    Status st;
    switch (c.kind) {
      case Command::Kind::kAudio:
        appended_since_commit_ += static_cast<int64_t>(c.samples.size());
        st = live_->Feed(c.samples.data(), c.samples.size(), &events);
        if (st.ok()) HandleEvents(events, false);
        break;
      case Command::Kind::kCommit: {
        if (appended_since_commit_ == 0) {
          Error("input_audio_buffer_commit_empty", "no audio was appended since the last commit",
                "", c.event_id);
          break;
        }
        st = live_->Finish(&events);
        if (!st.ok()) break;
        const bool any_final = std::any_of(events.begin(), events.end(), [](const LiveEvent& e) {
          return e.kind == LiveEvent::Kind::kFinal;
        });
        HandleEvents(events, true);
        if (!any_final) {  // silence only: committed all the same, with no words
          LiveEvent empty;
          empty.kind = LiveEvent::Kind::kFinal;
          empty.piece = open_piece_ >= 0 && !item_id_.empty() ? open_piece_ : -2;
          std::vector<LiveEvent> one{empty};
          HandleEvents(one, true);
        }
        appended_since_commit_ = 0;
        st = StartLive(live_config_);
        break;
      }
      case Command::Kind::kClear:
        appended_since_commit_ = 0;
        st = StartLive(live_config_);
        if (st.ok()) Emit("input_audio_buffer.cleared", json::object());
        break;
      case Command::Kind::kConfig:
        // The open piece ends under the old settings (as if committed by a pause).
        if (live_->samples_received() > 0) {
          st = live_->Finish(&events);
          if (st.ok()) HandleEvents(events, false);
        }
        live_config_ = c.config;
        if (st.ok()) st = StartLive(live_config_);
        break;
    }
    if (!st.ok()) {
      if (st.code() == ErrorCode::kCancelled) return;
      Error("server_error", st.message(), "", c.event_id);
      if (!StartLive(live_config_).ok()) return;
    }
  }
}

}  // namespace tern::server
