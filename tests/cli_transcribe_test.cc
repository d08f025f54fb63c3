// `tern transcribe` as a user meets it: the built binary (TERN_BINARY) on the bundled model
// and samples/, run through the shell; what it writes, where, and its exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/test_util.h"

#if !defined(TERN_BINARY) || !defined(TERN_DEV_BINARY)
#error "TERN_BINARY and TERN_DEV_BINARY must name the tern and tern-dev executables"
#endif

namespace tern {
namespace {

using tern::testutil::CommandRun;

namespace fs = std::filesystem;

const std::string kSource = TERN_SOURCE_DIR;
const std::string kSamples = kSource + "/samples";

// Runs `tern transcribe --model MODEL -q -t 1 ARGS` (ARGS shell-quoted as needed); MODEL is
// the bundled models/tiny-en unless given.
CommandRun Transcribe(const std::string& args,
                      const std::string& model = kSource + "/models/tiny-en") {
  return testutil::RunCommand(std::string("'") + TERN_BINARY + "' transcribe --model '" + model +
                              "' -q -t 1 " + args);
}

// The bundled model declaring clips of at most 6.5 s, no context and no JSON prompt
// (tests/make_declared_fixture.cmake).
CommandRun TranscribeDeclared(const std::string& args) {
  return Transcribe(args, TERN_DECLARED_DIR);
}

// An empty directory of this name under the test temp dir.
std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// 16-bit mono PCM WAV at 24 kHz.
void WriteWav(const std::string& path, const std::vector<int16_t>& s) {
  std::ofstream f(path, std::ios::binary);
  auto u32 = [&f](uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&f](uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
  const uint32_t bytes = static_cast<uint32_t>(s.size() * 2);
  f.write("RIFF", 4);
  u32(36 + bytes);
  f.write("WAVEfmt ", 8);
  u32(16);
  u16(1);
  u16(1);
  u32(24000);
  u32(48000);
  u16(2);
  u16(16);
  f.write("data", 4);
  u32(bytes);
  f.write(reinterpret_cast<const char*>(s.data()), bytes);
}

// Every JSON document in a stream of them, in order.
std::vector<nlohmann::json> JsonDocuments(const std::string& text) {
  std::vector<nlohmann::json> docs;
  std::istringstream in(text);
  while (in >> std::ws && in.peek() != EOF) {
    nlohmann::json j;
    in >> j;
    docs.push_back(std::move(j));
  }
  return docs;
}

// json and verbose_json together go to NAME.json and NAME.verbose.json (the plain one is not
// overwritten), one pair per input, in an --output-dir that the run creates.
TEST(CliTranscribe, OutputDirHoldsEveryFormatUnderItsOwnName) {
  const std::string root = FreshDir("cli_transcribe_dir");
  const std::string out = root + "/made/by/tern";
  ASSERT_FALSE(fs::exists(out));
  const CommandRun r = Transcribe("--output-format json,verbose_json,txt --output-dir " + out +
                                  " " + kSamples + "/sample1.wav " + kSamples + "/sample2.wav");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // everything went to files
  for (const std::string stem : {"sample1", "sample2"}) {
    SCOPED_TRACE(stem);
    const nlohmann::json plain =
        nlohmann::json::parse(testutil::ReadFile(out + "/" + stem + ".json"));
    const nlohmann::json verbose =
        nlohmann::json::parse(testutil::ReadFile(out + "/" + stem + ".verbose.json"));
    EXPECT_FALSE(plain.contains("token_ids"));  // the plain writer's, not verbose's
    EXPECT_TRUE(verbose.contains("token_ids"));
    EXPECT_EQ(plain["text"], verbose["text"]);
    EXPECT_EQ(testutil::ReadFile(out + "/" + stem + ".txt"),
              plain["text"].get<std::string>() + "\n");
    EXPECT_EQ(testutil::ReadFile(kSamples + "/" + stem + ".txt").substr(0, 10),
              plain["text"].get<std::string>().substr(0, 10));
  }
  fs::remove_all(root);
}

// Two inputs with one stem would write the same file: refused as a usage error naming both,
// before anything runs (no directory made, no file written).
TEST(CliTranscribe, InputsWithOneStemAreRefusedBeforeAnythingRuns) {
  const std::string root = FreshDir("cli_transcribe_stem");
  fs::create_directories(root + "/other");
  fs::copy_file(kSamples + "/sample2.wav", root + "/other/sample1.wav");
  const std::string out = root + "/out";
  const CommandRun r = Transcribe("--output-dir " + out + " " + kSamples + "/sample1.wav " + root +
                                  "/other/sample1.wav");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("would both write"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(root + "/other/sample1.wav"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // Into a file that is not a directory: a usage error too.
  std::ofstream(root + "/file") << "x";
  const CommandRun f = Transcribe("--output-dir " + root + "/file " + kSamples + "/sample1.wav");
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_NE(f.err.find("not a directory"), std::string::npos) << f.err;
  fs::remove_all(root);
}

// Several inputs to stdout: txt (and srt/vtt) get a "==> FILE <==" line before each one's
// text, json documents a "file" field; one input prints as before, with no header.
TEST(CliTranscribe, SeveralInputsOnStdoutAreNamed) {
  const std::string a = kSamples + "/sample1.wav", b = kSamples + "/sample3.wav";
  const CommandRun one = Transcribe(a);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("==>"), std::string::npos) << one.out;
  const CommandRun other = Transcribe(b);
  ASSERT_EQ(other.exit_code, 0) << other.err;

  const CommandRun txt = Transcribe(a + " " + b);
  ASSERT_EQ(txt.exit_code, 0) << txt.err;
  EXPECT_EQ(txt.out, "==> " + a + " <==\n" + one.out + "==> " + b + " <==\n" + other.out);
  const CommandRun streamed = Transcribe("--stream " + a + " " + b);
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  EXPECT_EQ(streamed.out, txt.out);

  const CommandRun json = Transcribe("--output-format json " + a + " " + b);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::vector<nlohmann::json> docs = JsonDocuments(json.out);
  ASSERT_EQ(docs.size(), 2u) << json.out;
  EXPECT_EQ(docs[0]["file"], a);
  EXPECT_EQ(docs[1]["file"], b);
  EXPECT_EQ(docs[0]["text"].get<std::string>() + "\n", one.out);
  EXPECT_EQ(json.out.find("==>"), std::string::npos);
  const CommandRun single = Transcribe("--output-format json " + a);
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_FALSE(nlohmann::json::parse(single.out).contains("file"));
}

// --parallel: the inputs transcribed at once, decoding batched; the output (stdout with
// headers, and files in --output-dir, verbose_json's log-probabilities included) is byte
// for byte the sequential run's, a failing input among them included.
TEST(CliTranscribe, ParallelOutputEqualsTheSequentialRun) {
  const std::string root = FreshDir("cli_transcribe_parallel");
  WriteWav(root + "/zeros.wav", std::vector<int16_t>(24000, 0));
  std::string inputs;
  for (const char* clip : {"000", "001", "002", "003", "004", "005"})
    inputs += " " + kSource + "/tests/data/heldout/" + clip + ".wav";
  inputs += " " + kSamples + "/sample1.wav " + root + "/zeros.wav " + kSamples + "/sample3.wav";
  const CommandRun one = Transcribe(inputs);
  const CommandRun four = Transcribe("--parallel 4" + inputs);
  EXPECT_EQ(one.exit_code, 1) << one.err;  // the silent one
  EXPECT_EQ(four.exit_code, 1) << four.err;
  EXPECT_EQ(four.out, one.out);
  EXPECT_EQ(four.err, one.err);
  size_t headers = 0;
  for (size_t at = one.out.find("==> "); at != std::string::npos; at = one.out.find("==> ", at + 1))
    ++headers;
  EXPECT_EQ(headers, 8u) << one.out;  // every input but the silent one

  const std::string seq = root + "/seq", par = root + "/par";
  ASSERT_EQ(Transcribe("--output-format verbose_json,srt --output-dir " + seq + inputs).exit_code,
            1);
  ASSERT_EQ(Transcribe("--parallel 3 --output-format verbose_json,srt --output-dir " + par + inputs)
                .exit_code,
            1);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(seq)) {
    ++files;
    const std::string name = e.path().filename().string();
    std::string a = testutil::ReadFile(e.path().string()), b = testutil::ReadFile(par + "/" + name);
    if (name.find(".verbose.json") != std::string::npos) {
      // Timings and memory differ from run to run, and how much of the prompt a lane's cache
      // held already; everything the model decided must not.
      nlohmann::json ja = nlohmann::json::parse(a), jb = nlohmann::json::parse(b);
      for (nlohmann::json* j : {&ja, &jb})
        for (const char* key : {"timings_ms", "rtf", "peak_rss_bytes", "prompt_reused_tokens"})
          ASSERT_EQ(j->erase(key), 1u) << key;
      EXPECT_EQ(jb, ja) << name;
    } else {
      EXPECT_EQ(b, a) << name;
    }
  }
  EXPECT_EQ(files, 16u);  // 8 transcribed inputs x 2 formats
  EXPECT_EQ(Transcribe("--parallel 0 " + kSamples + "/sample1.wav").exit_code, 2);
  EXPECT_EQ(Transcribe("--parallel 2 --stream " + kSamples + "/sample1.wav").exit_code, 2);
  fs::remove_all(root);
}

// README's exit codes: 2 only for bad options; audio that cannot be transcribed (silent,
// unreadable, a directory, missing) is 1, alone or in a batch. No message names a C++
// identifier.
TEST(CliTranscribe, ExitCodesSeparateBadOptionsFromBadAudio) {
  const std::string root = FreshDir("cli_transcribe_exit");
  WriteWav(root + "/zeros.wav", std::vector<int16_t>(24000, 0));
  std::ofstream(root + "/text.wav") << "this is not audio\n";
  const std::string good = kSamples + "/sample1.wav";
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {root + "/zeros.wav", 1, "silent"},
      {root + "/text.wav", 1, "not a readable audio file"},
      {root, 1, "is a directory"},
      {root + "/missing.wav", 1, "no such file"},
      {good + " " + root + "/zeros.wav", 1, "1 of 2 inputs failed"},
      {"--max-audio-seconds 1 " + good, 1, "raise it with --max-audio-seconds"},
      {"--temperature abc " + good, 2, "tern transcribe: "},
      {"--format srt " + good, 2, "--output-format"},
      {"--output-format xml " + good, 2, "--output-format: unknown output format 'xml'"},
      {"--top-p 0 " + good, 2, "top"},
      {"-o " + root + "/x.txt --output-dir " + root + " " + good, 2, "do not combine"},
      {"--lm " + root + "/none.gguf " + good, 1, "none.gguf"},
  };
  const std::regex cxx_name("[A-Za-z_]::[A-Za-z_]");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CommandRun r = Transcribe(c.args);
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(std::regex_search(r.err, cxx_name)) << r.err;
  }
  // tern-dev encode keeps the same rule: silent audio is 1, a bad option 2.
  const std::string encode = std::string("'") + TERN_DEV_BINARY + "' encode -q --model '" +
                             kSource + "/models/tiny-en' --dump-features '" + root + "/f.f32' ";
  EXPECT_EQ(WEXITSTATUS(std::system((encode + "'" + root + "/zeros.wav' 2>/dev/null").c_str())), 1);
  EXPECT_EQ(WEXITSTATUS(std::system((encode + "--step nope '" + good + "' 2>/dev/null").c_str())),
            2);
  fs::remove_all(root);
}

// A model that declares it was trained without context and without the JSON prompt
// (tern.trained.*, docs/formats-tern-keys.md): each option warns once per run, not once per
// input, and a context is not used, so the transcript is the one without it (never the
// empty or garbled text the model gives a context).
TEST(CliTranscribe, OptionsTheModelWasNotTrainedForWarnOnce) {
  const std::string inputs = kSamples + "/sample1.wav " + kSamples + "/sample2.wav";
  const CommandRun plain = TranscribeDeclared(inputs);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
  const CommandRun context = TranscribeDeclared("--context Paris " + inputs);
  ASSERT_EQ(context.exit_code, 0) << context.err;
  EXPECT_EQ(context.out, plain.out);
  const std::string said = "not trained with context";
  const size_t first = context.err.find(said);
  EXPECT_NE(first, std::string::npos) << context.err;
  EXPECT_EQ(context.err.find(said, first + 1), std::string::npos) << context.err;
  EXPECT_EQ(std::count(context.err.begin(), context.err.end(), '\n'), 1) << context.err;
  const CommandRun json = TranscribeDeclared("--format json " + inputs);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(std::count(json.err.begin(), json.err.end(), '\n'), 1) << json.err;
  EXPECT_NE(json.err.find("not trained with the JSON prompt"), std::string::npos) << json.err;
  // The warnings are in verbose_json too (what a server client sees).
  const CommandRun verbose = TranscribeDeclared("--context Paris --output-format verbose_json " +
                                                kSamples + "/sample1.wav");
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  const nlohmann::json j = nlohmann::json::parse(verbose.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << verbose.out;
  EXPECT_NE(j["warnings"][0].get<std::string>().find(said), std::string::npos);
}

// Faint hiss: an empty transcript and a warning, exit 0. Audio longer than the pieces a model
// declares it reads best (4 s): a hint to use --chunk-seconds when longer pieces are asked.
TEST(CliTranscribe, NoSpeechAndLongAudioWarn) {
  const std::string root = FreshDir("cli_transcribe_nospeech");
  std::vector<int16_t> hiss(2 * 24000), tone(8 * 24000);
  uint32_t r = 1;
  for (int16_t& v : hiss) {
    r = r * 1664525u + 1013904223u;
    v = static_cast<int16_t>(static_cast<int>(r >> 24) % 41 - 20);  // about -67 dBFS
  }
  for (size_t i = 0; i < tone.size(); ++i)
    tone[i] = static_cast<int16_t>(3000 * std::sin(0.05 * static_cast<double>(i)));
  WriteWav(root + "/hiss.wav", hiss);
  WriteWav(root + "/tone.wav", tone);
  const CommandRun quiet = TranscribeDeclared(root + "/hiss.wav");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "\n");
  EXPECT_NE(quiet.err.find("hiss.wav: no speech: the loudest 25 ms of the audio is at -"),
            std::string::npos)
      << quiet.err;
  const CommandRun off = TranscribeDeclared("--no-speech-floor -150 " + root + "/hiss.wav");
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.err.find("no speech"), std::string::npos) << off.err;
  EXPECT_EQ(TranscribeDeclared("--no-speech-floor 3 " + root + "/hiss.wav").exit_code, 2);
  // Longer than the model's pieces: automatic pieces, no warning; a hint when longer pieces
  // are asked.
  const CommandRun longer = TranscribeDeclared(root + "/tone.wav");
  EXPECT_EQ(longer.exit_code, 0) << longer.err;
  EXPECT_EQ(longer.err.find("--chunk-seconds"), std::string::npos) << longer.err;
  const CommandRun chunked = TranscribeDeclared("--chunk-seconds 8 " + root + "/tone.wav");
  EXPECT_NE(chunked.err.find("reads pieces of at most 4.0 s best: --chunk-seconds 4"),
            std::string::npos)
      << chunked.err;
  fs::remove_all(root);
}

// No user-facing string in src/ or tools/ names a C++ identifier (Options::field): the
// messages speak of flags and files. Scans the string literals of every non-test source.
TEST(CliTranscribe, NoMessageNamesAnInternalIdentifier) {
  const std::regex literal("\"([^\"\\\\]|\\\\.)*\"");
  const std::regex cxx_name("[A-Za-z_]::[A-Za-z_]");
  int files = 0;
  for (const char* top : {"/src", "/tools", "/include", "/bench"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSource + top)) {
      const std::string p = e.path().string();
      if (!e.is_regular_file() || p.find("_test") != std::string::npos) continue;
      if (e.path().extension() != ".cc" && e.path().extension() != ".h") continue;
      ++files;
      std::istringstream lines(testutil::ReadFile(p));
      int n = 0;
      for (std::string line; std::getline(lines, line);) {
        ++n;
        const size_t code = line.find_first_not_of(' ');
        if (code == std::string::npos || line.compare(code, 2, "//") == 0 ||
            line.compare(code, 8, "#include") == 0)
          continue;
        for (auto it = std::sregex_iterator(line.begin(), line.end(), literal);
             it != std::sregex_iterator(); ++it) {
          EXPECT_FALSE(std::regex_search(it->str(), cxx_name)) << p << ":" << n << ": " << line;
        }
      }
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace tern
