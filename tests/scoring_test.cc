// The scoring the model gates rely on, on cases worked by hand (and, for the dialogue
// measures, the values training/eval_mix.py gives for the same segments).
#include "scoring.h"

#include <gtest/gtest.h>

namespace tern::scoring {
namespace {

TEST(Scoring, WordsAreLowercasedAndSplitAtEveryOtherCharacter) {
  EXPECT_EQ(NormWords("Set a timer."), (std::vector<std::string>{"set", "a", "timer"}));
  EXPECT_EQ(NormWords("Don't wake me at 7 p.m., O'Neil!"),
            (std::vector<std::string>{"don't", "wake", "me", "at", "7", "p", "m", "o'neil"}));
  EXPECT_EQ(NormWords("well-known\tcaf\xc3\xa9"),  // UTF-8 separates as reference.py does
            (std::vector<std::string>{"well", "known", "caf"}));
  EXPECT_TRUE(NormWords(" ... ").empty());
}

TEST(Scoring, AlignmentCountsEditsExactly) {
  EXPECT_EQ(EditDistance(NormWords("set a timer"), NormWords("Set a timer.")), 0u);
  EXPECT_EQ(EditDistance(NormWords("a b c d"), NormWords("a x c d")), 1u);    // substitution
  EXPECT_EQ(EditDistance(NormWords("a b c d"), NormWords("a c d")), 1u);      // deletion
  EXPECT_EQ(EditDistance(NormWords("a b c d"), NormWords("a b b c d")), 1u);  // insertion
  EXPECT_EQ(EditDistance(NormWords("a b"), NormWords("")), 2u);
  EXPECT_EQ(EditDistance(NormWords("one two three"), NormWords("three two one")), 2u);
  WerCount c;
  c.Add("a b c d", "a x c d");
  c.Add("e f", "");
  EXPECT_EQ(c.edits, 3u);
  EXPECT_EQ(c.words, 6u);
  EXPECT_DOUBLE_EQ(c.wer(), 0.5);
}

TEST(Scoring, AlignedPairsSkipInsertionsAndDeletions) {
  using P = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(AlignedPairs(NormWords("a b c d"), NormWords("a c d")), (P{{0, 0}, {2, 1}, {3, 2}}));
  EXPECT_EQ(AlignedPairs(NormWords("a b"), NormWords("a x b")), (P{{0, 0}, {1, 2}}));
  EXPECT_EQ(AlignedPairs(NormWords("a b"), NormWords("x y")), (P{{0, 0}, {1, 1}}));
  EXPECT_TRUE(AlignedPairs(NormWords("a b"), {}).empty());
}

TEST(Scoring, SpeakersCountUnderTheBestRenaming) {
  const std::vector<TimedSegment> ref = {{0.0, 2.0, 0, "hello there friend"},
                                         {2.5, 4.0, 1, "hi back"}};
  // The same turns with the numbers swapped: every word right.
  DialogueScore s =
      ScoreDialogue(ref, {{0.1, 2.2, 1, "hello there friend"}, {2.4, 4.0, 0, "hi back"}});
  EXPECT_EQ(s.words, 5u);
  EXPECT_EQ(s.attributed, 5u);
  const std::vector<double> errors = {0.1, 0.2, 0.1, 0.0};
  ASSERT_EQ(s.boundary_errors.size(), errors.size());
  for (size_t k = 0; k < errors.size(); ++k) EXPECT_NEAR(s.boundary_errors[k], errors[k], 1e-12);
  // One speaker for everything: at best the first speaker's three words.
  s = ScoreDialogue(ref, {{0.0, 4.0, 3, "hello there friend hi back"}});
  EXPECT_EQ(s.attributed, 3u);
  EXPECT_EQ(s.boundary_errors, (std::vector<double>{0.0, 2.0, 2.5, 0.0}));
  // Two hypothesis speakers cannot both be renamed to speaker 0.
  s = ScoreDialogue({{0, 1, 0, "a b"}, {1, 2, 0, "c d"}}, {{0, 1, 5, "a b"}, {1, 2, 6, "c d"}});
  EXPECT_EQ(s.attributed, 2u);
  // No segments (an answer that was not JSON): every reference segment counts its length.
  s = ScoreDialogue(ref, {});
  EXPECT_EQ(s.attributed, 0u);
  EXPECT_EQ(s.boundary_errors, (std::vector<double>{2.0, 2.0, 1.5, 1.5}));
  // Segments without times overlap nothing.
  s = ScoreDialogue(ref, {{-1, -1, 0, "hello there friend hi back"}});
  EXPECT_EQ(s.attributed, 3u);
  EXPECT_EQ(s.boundary_errors, (std::vector<double>{2.0, 2.0, 1.5, 1.5}));
}

TEST(Scoring, QuantilesInterpolateAsNumpy) {
  EXPECT_DOUBLE_EQ(Quantile({4, 1, 3, 2}, 0.5), 2.5);    // numpy.percentile([1,2,3,4], 50)
  EXPECT_NEAR(Quantile({4, 1, 3, 2}, 0.9), 3.7, 1e-12);  // ... 90
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.9), 7.0);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0.0);
}

}  // namespace
}  // namespace tern::scoring
