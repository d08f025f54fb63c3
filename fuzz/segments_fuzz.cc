// libFuzzer target for the tolerant JSON segment parser (engine/segments.h): model output is
// arbitrary text, so any bytes must parse or be refused without a crash. Run with scripts/fuzz.
//
// Oracles beyond "no crash, no sanitizer report":
//   * the return value is true exactly when segments came back;
//   * start/end are finite or the -1 "no time" sentinel (output formats print them);
//   * (UBSan) a huge Speaker number does not overflow the float->int conversion;
//   * valid UTF-8 in gives valid UTF-8 texts out (escapes and truncation never split a
//     character; JSON and SRT writers need valid text);
//   * parsing is deterministic and ignores what the vector held before;
//   * the segments go through every writer, subtitles also with long cues split
//     (--max-cue-chars 8 and 37): no crash, and valid UTF-8 in gives valid UTF-8 out.
// An empty Content ("Content":"") is a segment the model did write, so it is kept.
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/segments.h"
#include "tern/tern.h"
#include "text/utf8.h"

namespace {

void Require(bool cond) {
  if (!cond) __builtin_trap();
}

bool ValidUtf8(std::string_view s) {
  for (size_t p = 0; p < s.size();) {
    const size_t n = tern::text::ValidUtf8SequenceLength(s, p);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

bool TimeOk(double t) { return t == -1 || std::isfinite(t); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<tern::Segment> segs(1);  // stale content the parser must clear
  segs[0].text = "stale";
  const bool ok = tern::engine::ParseJsonSegments(text, &segs);
  Require(ok == !segs.empty());
  const bool valid_in = ValidUtf8(text);
  for (const tern::Segment& s : segs) {
    Require(TimeOk(s.start) && TimeOk(s.end));
    if (valid_in) Require(ValidUtf8(s.text));
  }
  std::vector<tern::Segment> again;
  Require(tern::engine::ParseJsonSegments(text, &again) == ok);
  Require(again.size() == segs.size());
  for (size_t i = 0; i < segs.size(); ++i) {
    Require(again[i].text == segs[i].text && again[i].speaker == segs[i].speaker);
  }
  tern::Transcript t;
  t.duration_s = 30;
  t.text = std::string(text);
  t.structured = ok;
  t.segments = ok ? segs : std::vector<tern::Segment>{{-1, -1, -1, t.text}};
  for (int max : {0, 8, 37}) {
    tern::FormatOptions o;
    o.max_cue_chars = max;
    for (tern::OutputFormat f : {tern::OutputFormat::kTxt, tern::OutputFormat::kJson,
                                 tern::OutputFormat::kSrt, tern::OutputFormat::kVtt}) {
      if (max != 0 && f != tern::OutputFormat::kSrt && f != tern::OutputFormat::kVtt) continue;
      const std::string out = tern::FormatTranscript(t, f, o);
      if (valid_in) Require(ValidUtf8(out));
    }
  }
  return 0;
}
