// Where a live stream's pieces end: pauses found from 10 ms frame energies as samples arrive,
// and a cut at the quietest 400 ms in the second half of a piece that reaches the maximum
// length without one (the rule PlanChunks uses for long files). Decisions depend only on the
// samples, never on how they were cut into Push calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tern::engine {

struct LiveCutterConfig {
  int64_t pause_samples = 12000;  // a pause this long ends a piece with speech
  double silence_ratio = 0.0178;  // quiet: frame RMS below this times the reference level
  int64_t max_samples = 720000;   // the longest piece
};

class LiveCutter {
 public:
  static constexpr int64_t kFrame = 240;     // 10 ms at 24 kHz
  static constexpr double kFloor = 0.00178;  // -55 dBFS: always quiet

  struct Action {
    enum class Kind {
      kSpeechStarted,  // at: the first loud frame's start
      kDrop,           // no speech yet: the piece now starts at `at` (lead-in kept short)
      kCut,            // the piece with speech ends at `at`; the next starts there
    };
    Kind kind;
    int64_t at;       // sample index from the stream's start
    int64_t decided;  // the end of the frame that decided it (>= at)
  };

  explicit LiveCutter(const LiveCutterConfig& config);

  // Appends the actions the new samples cause, in order.
  void Push(const float* x, size_t n, std::vector<Action>* out);

  int64_t piece_start() const { return start_; }
  int64_t received() const { return received_; }
  bool has_speech() const { return speech_; }

 private:
  // Frame f (relative to the piece) with mean square `ms` arrived; may act.
  void AddFrame(double ms, std::vector<Action>* out);
  // The piece now starts `frames` frames later; the rest is replayed (may act again).
  void Advance(int64_t frames, std::vector<Action>* out);

  LiveCutterConfig c_;
  int64_t pause_frames_, max_frames_, lead_frames_;
  int64_t start_ = 0, received_ = 0;
  double partial_sum_ = 0;  // the unfinished frame's sum of squares
  int64_t partial_n_ = 0;
  std::vector<double> ms_;  // the piece's frames' mean squares
  double peak_ = 0;         // loudest frame of the piece (mean square)
  double ref_ = 0;          // loudest frame of the previous piece with speech
  int64_t quiet_run_ = 0;   // trailing quiet frames
  bool speech_ = false;
};

}  // namespace tern::engine
