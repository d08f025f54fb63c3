// Transcript writers: txt, json, verbose_json, srt, vtt.
//
// Timing syntax: SRT cues are "HH:MM:SS,mmm --> HH:MM:SS,mmm" numbered from 1, separated by
// blank lines; WebVTT starts with "WEBVTT" and uses "HH:MM:SS.mmm". Segments without times
// (plain-text answers) span the whole clip; a segment missing only its start follows the
// previous one, one missing its end runs to the next start or the clip's end. With
// FormatOptions::max_cue_chars, a longer cue becomes several at word boundaries, its time
// shared in proportion to their lengths.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/segments.h"
#include "tern/tern.h"

namespace tern {
namespace {

using engine::TrimText;

struct Cue {
  double start, end;
  int speaker;
  std::string text;
};

std::vector<Cue> Cues(const Transcript& t) {
  std::vector<Cue> cues;
  double prev_end = t.offset_s;
  for (size_t i = 0; i < t.segments.size(); ++i) {
    const Segment& s = t.segments[i];
    double start = s.start >= 0 ? s.start : prev_end;
    double end = s.end;
    if (end < 0) {
      end = t.offset_s + t.duration_s;
      if (i + 1 < t.segments.size() && t.segments[i + 1].start >= 0) end = t.segments[i + 1].start;
    }
    if (end < start) end = start;
    cues.push_back({start, end, s.speaker, s.text});
    prev_end = end;
  }
  return cues;
}

// The cue split into pieces of at most `max` bytes at spaces (a word longer than that stays
// whole), each piece ending after punctuation when such a break leaves it at least half
// full; each piece ends at the time of its last byte's share of the cue, the next starts
// there.
std::vector<Cue> SplitCue(const Cue& c, size_t max) {
  const std::string text = TrimText(c.text);
  if (max == 0 || text.size() <= max) return {c};
  std::vector<Cue> out;
  const double per_byte = (c.end - c.start) / static_cast<double>(text.size());
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.size();
    if (e - b > max) {
      size_t cut = std::string::npos, punct = std::string::npos;
      for (size_t i = b + 1; i <= b + max && i < text.size(); ++i) {
        if (text[i] != ' ') continue;
        cut = i;
        if (std::strchr(".,;:!?", text[i - 1]) && i - b >= max / 2) punct = i;
      }
      if (punct != std::string::npos) cut = punct;
      if (cut == std::string::npos) cut = text.find(' ', b + max);  // one long word
      if (cut != std::string::npos) e = cut;
    }
    const double start = out.empty() ? c.start : out.back().end;  // no gaps between pieces
    const double end = e == text.size() ? c.end : c.start + per_byte * static_cast<double>(e);
    out.push_back({start, end, c.speaker, text.substr(b, e - b)});
    b = e;
    while (b < text.size() && text[b] == ' ') ++b;
  }
  return out;
}

std::vector<Cue> SubtitleCues(const Transcript& t, const FormatOptions& o) {
  std::vector<Cue> cues;
  for (const Cue& c : Cues(t))
    for (Cue& piece : SplitCue(c, static_cast<size_t>(o.max_cue_chars)))
      cues.push_back(std::move(piece));
  return cues;
}

std::string Timestamp(double seconds, char sep) {
  if (!(seconds > 0)) seconds = 0;
  const long long ms = std::llround(seconds * 1000.0);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60,
                ms / 1000 % 60, sep, ms % 1000);
  return buf;
}

// `verbose`: each segment's no_speech_prob too, when measured.
nlohmann::json SegmentsJson(const Transcript& t, bool verbose) {
  nlohmann::json segs = nlohmann::json::array();
  const std::vector<Cue> cues = Cues(t);  // one per segment, in order
  for (size_t i = 0; i < cues.size(); ++i) {
    const Cue& c = cues[i];
    nlohmann::json j = {{"start", c.start}, {"end", c.end}, {"text", TrimText(c.text)}};
    if (c.speaker >= 0) j["speaker"] = c.speaker;
    if (verbose && t.segments[i].no_speech_prob >= 0)
      j["no_speech_prob"] = t.segments[i].no_speech_prob;
    segs.push_back(j);
  }
  return segs;
}

std::string Dump(const nlohmann::json& j) {
  // Replace invalid UTF-8 instead of throwing: model output may end mid-character.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

Result<OutputFormat> OutputFormatFromName(std::string_view name) {
  if (name == "txt" || name == "text") return OutputFormat::kTxt;
  if (name == "json") return OutputFormat::kJson;
  if (name == "verbose_json") return OutputFormat::kVerboseJson;
  if (name == "srt") return OutputFormat::kSrt;
  if (name == "vtt") return OutputFormat::kVtt;
  return InvalidArgumentError(
      "unknown output format '%.*s' (expected txt, json, verbose_json, "
      "srt or vtt)",
      static_cast<int>(name.size()), name.data());
}

const char* OutputFormatExtension(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTxt:
      return ".txt";
    case OutputFormat::kJson:
      return ".json";
    case OutputFormat::kVerboseJson:
      return ".verbose.json";
    case OutputFormat::kSrt:
      return ".srt";
    case OutputFormat::kVtt:
      return ".vtt";
  }
  return ".txt";
}

std::string FormatTranscript(const Transcript& t, OutputFormat format,
                             const FormatOptions& options) {
  switch (format) {
    case OutputFormat::kTxt: {
      if (!t.structured) return TrimText(t.text) + "\n";
      std::string out;
      for (const Segment& s : t.segments) {
        if (s.speaker >= 0) out += "Speaker " + std::to_string(s.speaker) + ": ";
        out += TrimText(s.text) + "\n";
      }
      return out;
    }
    case OutputFormat::kJson: {
      nlohmann::json j = {{"text", TrimText(t.text)}, {"segments", SegmentsJson(t, false)}};
      if (!options.file_name.empty()) j["file"] = options.file_name;
      return Dump(j);
    }
    case OutputFormat::kVerboseJson: {
      const Metrics& m = t.metrics;
      nlohmann::json stages = nlohmann::json::object();
      for (const auto& [name, ms] : m.stages) stages[name] = ms;
      nlohmann::json j = {
          {"text", TrimText(t.text)},
          {"segments", SegmentsJson(t, true)},
          {"structured", t.structured},
          {"duration", t.duration_s},
          {"offset", t.offset_s},
          {"frames", t.frames},
          {"pieces", t.pieces},
          {"prompt_token_ids", t.prompt_token_ids},
          {"token_ids", t.token_ids},
          {"stop_reason", t.stop_reason},
          {"warnings", t.warnings},
          {"model", t.model},
          {"head", t.head},
          {"isa", t.isa},
          {"threads", t.threads},
          {"timings_ms",
           {{"audio", m.audio_ms},
            {"encoder", m.encoder_ms},
            {"prefill", m.prefill_ms},
            {"decode", m.decode_ms},
            {"decode_per_token", m.decode_ms_per_token()},
            {"wall", m.wall_ms},
            {"encoder_stages", stages}}},
          {"rtf", m.rtf},
          {"prompt_tokens", m.prompt_tokens},
          {"prompt_reused_tokens", m.prompt_reused_tokens},
          {"decode_tokens", m.decode_tokens},
          {"peak_rss_bytes", m.peak_rss_bytes},
      };
      if (!t.token_logprobs.empty()) {
        double sum = 0;
        for (float lp : t.token_logprobs) sum += lp;
        j["token_logprobs"] = t.token_logprobs;
        j["avg_logprob"] = sum / static_cast<double>(t.token_logprobs.size());
      }
      if (!options.file_name.empty()) j["file"] = options.file_name;
      return Dump(j);
    }
    case OutputFormat::kSrt: {
      std::string out;
      int index = 1;
      for (const Cue& c : SubtitleCues(t, options)) {
        out += std::to_string(index++) + "\n";
        out += Timestamp(c.start, ',') + " --> " + Timestamp(c.end, ',') + "\n";
        if (c.speaker >= 0) out += "[Speaker " + std::to_string(c.speaker) + "] ";
        out += TrimText(c.text) + "\n\n";
      }
      return out;
    }
    case OutputFormat::kVtt: {
      std::string out = "WEBVTT\n\n";
      for (const Cue& c : SubtitleCues(t, options)) {
        out += Timestamp(c.start, '.') + " --> " + Timestamp(c.end, '.') + "\n";
        if (c.speaker >= 0) out += "<v Speaker " + std::to_string(c.speaker) + ">";
        out += TrimText(c.text) + "\n\n";
      }
      return out;
    }
  }
  return t.text;
}

}  // namespace tern
