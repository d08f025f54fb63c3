// How the tests score a transcript against its reference: the words and alignment of
// training/reference.py and the dialogue measures of training/eval_mix.py, so that a gate
// here and a figure the training scripts print mean the same thing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tern::scoring {

// Lowercased words: every character but a-z, 0-9 and the apostrophe separates (ASCII
// letters lowered first), as reference.py norm_words.
std::vector<std::string> NormWords(std::string_view text);

// Word-level Levenshtein distance (substitutions + deletions + insertions).
size_t EditDistance(const std::vector<std::string>& ref, const std::vector<std::string>& hyp);

// The (reference, hypothesis) index pairs one minimum-edit alignment matches or substitutes,
// in order (eval_mix.py align_pairs: the same tie-breaking).
std::vector<std::pair<size_t, size_t>> AlignedPairs(const std::vector<std::string>& ref,
                                                    const std::vector<std::string>& hyp);

// Edits over reference words, summed over many transcripts.
struct WerCount {
  size_t edits = 0, words = 0;
  void Add(std::string_view ref, std::string_view hyp);
  double wer() const { return words ? static_cast<double>(edits) / words : 0.0; }
};

struct TimedSegment {
  double start = -1, end = -1;  // seconds; -1: no time
  int speaker = -1;
  std::string text;
};

// Reference segments as the test data and samples/ write them: [[start, end, speaker, text],
// ...] (training/heldout_mix.py, training/synth_mix.py's "segs").
std::vector<TimedSegment> SegmentsFromJson(const nlohmann::json& rows);

// One dialogue's speaker attribution and segment boundary errors (eval_mix.py
// dialog_scores), to be summed over a set.
struct DialogueScore {
  size_t words = 0;       // reference words
  size_t attributed = 0;  // of them, aligned to a hypothesis word whose segment's speaker is
                          // theirs under the best one-to-one renaming of hypothesis speakers
  // |start| and |end| difference of each reference segment to the hypothesis segment that
  // overlaps it most; a reference segment that none overlaps counts its length twice.
  std::vector<double> boundary_errors;
};
// `hyp` empty: the answer had no segments (not JSON), every reference segment unmatched.
DialogueScore ScoreDialogue(const std::vector<TimedSegment>& ref,
                            const std::vector<TimedSegment>& hyp);

// The q-quantile (0..1) with linear interpolation between order statistics, as
// numpy.percentile; 0 for no values.
double Quantile(std::vector<double> values, double q);

}  // namespace tern::scoring
