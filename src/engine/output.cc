// Transcript writers: txt, json, verbose_json, srt, vtt.
//
// Timing syntax: SRT cues are "HH:MM:SS,mmm --> HH:MM:SS,mmm" numbered from 1, separated by
// blank lines; WebVTT starts with "WEBVTT" and uses "HH:MM:SS.mmm". Segments without times
// (plain-text answers) span the whole clip; a segment missing only its start follows the
// previous one, one missing its end runs to the next start or the clip's end.
#include <cmath>
#include <cstdio>
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

std::string Timestamp(double seconds, char sep) {
  if (!(seconds > 0)) seconds = 0;
  const long long ms = std::llround(seconds * 1000.0);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60,
                ms / 1000 % 60, sep, ms % 1000);
  return buf;
}

nlohmann::json SegmentsJson(const Transcript& t) {
  nlohmann::json segs = nlohmann::json::array();
  for (const Cue& c : Cues(t)) {
    nlohmann::json j = {{"start", c.start}, {"end", c.end}, {"text", TrimText(c.text)}};
    if (c.speaker >= 0) j["speaker"] = c.speaker;
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
  return InvalidArgumentError("unknown output format '%.*s' (expected txt, json, verbose_json, "
                              "srt or vtt)", static_cast<int>(name.size()), name.data());
}

const char* OutputFormatExtension(OutputFormat format) {
  switch (format) {
    case OutputFormat::kTxt: return ".txt";
    case OutputFormat::kJson: return ".json";
    case OutputFormat::kVerboseJson: return ".json";
    case OutputFormat::kSrt: return ".srt";
    case OutputFormat::kVtt: return ".vtt";
  }
  return ".txt";
}

std::string FormatTranscript(const Transcript& t, OutputFormat format) {
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
      nlohmann::json j = {{"text", TrimText(t.text)}, {"segments", SegmentsJson(t)}};
      return Dump(j);
    }
    case OutputFormat::kVerboseJson: {
      const Metrics& m = t.metrics;
      nlohmann::json stages = nlohmann::json::object();
      for (const auto& [name, ms] : m.stages) stages[name] = ms;
      nlohmann::json j = {
          {"text", TrimText(t.text)},
          {"segments", SegmentsJson(t)},
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
      return Dump(j);
    }
    case OutputFormat::kSrt: {
      std::string out;
      int index = 1;
      for (const Cue& c : Cues(t)) {
        out += std::to_string(index++) + "\n";
        out += Timestamp(c.start, ',') + " --> " + Timestamp(c.end, ',') + "\n";
        if (c.speaker >= 0) out += "[Speaker " + std::to_string(c.speaker) + "] ";
        out += TrimText(c.text) + "\n\n";
      }
      return out;
    }
    case OutputFormat::kVtt: {
      std::string out = "WEBVTT\n\n";
      for (const Cue& c : Cues(t)) {
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
