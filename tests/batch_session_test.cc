// BatchSession: transcriptions decoded together, in lockstep, give what each gives alone in
// a Session (token ids, log-probabilities, text), whatever runs beside it and at any thread
// count; with mixed lengths, greedy, sampling with seeds, hotwords, beam search, long audio
// in pieces and a transcription cancelled half way.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/test_bundled_model.h"
#include "tern/tern.h"

namespace tern {
namespace {

using bundled::kHeldout;

Audio Clip(const std::string& name) {
  Result<Audio> a = LoadAudio(kHeldout + name);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : Audio{};
}

// Clips one after another with 0.6 s of silence between: long audio for --chunk-seconds.
Audio Joined(const std::vector<std::string>& names) {
  Audio all = Clip(names[0]);
  all.name = "joined";
  for (size_t i = 1; i < names.size(); ++i) {
    all.samples.insert(all.samples.end(), 14400, 0.0f);
    const Audio next = Clip(names[i]);
    all.samples.insert(all.samples.end(), next.samples.begin(), next.samples.end());
  }
  return all;
}

struct Job {
  Audio audio;
  TranscribeOptions options;
};

// Mixed lengths and decoding options, each with its log-probabilities.
std::vector<Job> Jobs() {
  std::vector<Job> jobs;
  auto add = [&](Audio a, auto set) {
    Job j{std::move(a), {}};
    j.options.decoding.logprobs = true;
    j.options.decoding.beam = 1;  // greedy unless the job says otherwise
    set(j.options);
    jobs.push_back(std::move(j));
  };
  add(Clip("000.wav"), [](TranscribeOptions&) {});
  add(Clip("001.wav"), [](TranscribeOptions& o) {
    o.decoding.temperature = 0.8f;
    o.decoding.seed = 7;
  });
  add(Clip("002.wav"), [](TranscribeOptions& o) {
    o.decoding.temperature = 1.0f;
    o.decoding.top_k = 20;
    o.decoding.seed = 3;
  });
  add(Clip("003.wav"), [](TranscribeOptions& o) {
    o.decoding.hotwords = {"Boston", "timer"};
    o.decoding.hotword_boost = 4;
  });
  add(Clip("004.wav"), [](TranscribeOptions& o) { o.decoding.beam = 3; });
  add(Joined({"005.wav", "006.wav", "007.wav"}), [](TranscribeOptions& o) { o.chunk_seconds = 4; });
  add(Clip("008.wav"), [](TranscribeOptions& o) { o.decoding.max_tokens = 5; });
  // The width the bundled model declares (tern.trained.beam).
  add(Clip("009.wav"), [](TranscribeOptions& o) { o.decoding.beam = 0; });
  return jobs;
}

void ExpectSame(const Transcript& alone, const Transcript& batched, const std::string& what) {
  EXPECT_EQ(batched.token_ids, alone.token_ids) << what;
  EXPECT_EQ(batched.token_logprobs, alone.token_logprobs) << what;  // bit for bit
  EXPECT_EQ(batched.text, alone.text) << what;
  EXPECT_EQ(batched.segments.size(), alone.segments.size()) << what;
  EXPECT_EQ(batched.stop_reason, alone.stop_reason) << what;
}

class BatchSessionThreads : public ::testing::TestWithParam<int> {};

TEST_P(BatchSessionThreads, EachTranscriptIsTheOneItGetsAlone) {
  const std::shared_ptr<const Model> model = bundled::TinyModel();
  ASSERT_TRUE(model);
  const std::vector<Job> jobs = Jobs();
  std::vector<Transcript> alone;
  {
    Session session(model, 1);
    for (const Job& j : jobs) {
      Result<Transcript> t = session.Transcribe(j.audio, j.options);
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      ASSERT_FALSE(t->token_ids.empty());
      alone.push_back(std::move(*t));
    }
  }
  // Every job from its own thread, twice over (a lane's second call reuses its cached
  // prompt head), through fewer lanes than callers (the rest wait for one).
  BatchSession batch(model, GetParam(), 5);
  const size_t n = jobs.size();
  std::vector<Result<Transcript>> got(2 * n, Result<Transcript>(InternalError("not run")));
  std::vector<std::thread> callers;
  for (size_t i = 0; i < 2 * n; ++i)
    callers.emplace_back(
        [&, i] { got[i] = batch.Transcribe(jobs[i % n].audio, jobs[i % n].options); });
  for (std::thread& c : callers) c.join();
  for (size_t i = 0; i < 2 * n; ++i) {
    ASSERT_TRUE(got[i].ok()) << got[i].status().ToString();
    ExpectSame(alone[i % n], *got[i], jobs[i % n].audio.name);
  }
  const BatchSession::Stats s = batch.stats();
  std::printf("[figure] %d threads: %lld batched steps, %.2f sequences per step\n", GetParam(),
              static_cast<long long>(s.steps), static_cast<double>(s.rows) / s.steps);
  EXPECT_GT(s.steps, 0);
}

INSTANTIATE_TEST_SUITE_P(Threads, BatchSessionThreads, ::testing::Values(1, 2, 4));

// A transcription whose caller stops it leaves the batch; those beside it finish unchanged.
TEST(BatchSession, ACancelledTranscriptionLeavesTheOthersUnchanged) {
  const std::shared_ptr<const Model> model = bundled::TinyModel();
  ASSERT_TRUE(model);
  const std::vector<Job> jobs = Jobs();
  Session session(model, 2);
  Result<Transcript> alone0 = session.Transcribe(jobs[0].audio, jobs[0].options);
  Result<Transcript> alone1 = session.Transcribe(jobs[1].audio, jobs[1].options);
  ASSERT_TRUE(alone0.ok() && alone1.ok());
  BatchSession batch(model, 2, 4);
  std::atomic<bool> cancel{false};
  TranscribeOptions stopped = jobs[7].options;
  stopped.cancel = &cancel;
  stopped.on_text = [&](std::string_view) {
    cancel = true;  // at its first piece of text
    return true;
  };
  Result<Transcript> got0(InternalError("not run")), got1(InternalError("not run")),
      got2(InternalError("not run"));
  std::thread a([&] { got0 = batch.Transcribe(jobs[0].audio, jobs[0].options); });
  std::thread b([&] { got1 = batch.Transcribe(jobs[1].audio, jobs[1].options); });
  std::thread c([&] { got2 = batch.Transcribe(jobs[7].audio, stopped); });
  a.join();
  b.join();
  c.join();
  ASSERT_FALSE(got2.ok());
  EXPECT_EQ(got2.status().code(), ErrorCode::kCancelled) << got2.status().ToString();
  ASSERT_TRUE(got0.ok() && got1.ok());
  ExpectSame(*alone0, *got0, "beside a cancelled one (greedy)");
  ExpectSame(*alone1, *got1, "beside a cancelled one (sampled)");
}

// Batched decoding runs only when transcriptions overlap: with one caller at a time every
// step advances one sequence.
TEST(BatchSession, OneCallerAtATimeStepsOneSequence) {
  const std::shared_ptr<const Model> model = bundled::TinyModel();
  ASSERT_TRUE(model);
  BatchSession batch(model, 2, 8);
  EXPECT_EQ(batch.max_batch(), 8);
  EXPECT_EQ(batch.threads(), 2);
  TranscribeOptions greedy;
  greedy.decoding.beam = 1;  // the bundled model's declared beam would decode alone
  Result<Transcript> t = batch.Transcribe(Clip("000.wav"), greedy);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const BatchSession::Stats s = batch.stats();
  EXPECT_EQ(s.steps, s.rows);
  EXPECT_EQ(s.steps + 1, static_cast<int64_t>(t->token_ids.size()));  // the first from prefill
}

}  // namespace
}  // namespace tern
