// The FFmpeg decode path end to end (built with TERN_WITH_AV): a held-out clip encoded here to
// WebM/Opus (what a browser's MediaRecorder uploads) goes to tern-server's
// /v1/audio/transcriptions, and to M4A/AAC (what a phone saves) through `tern transcribe`; both
// answers are the library's for the same bytes, and the transcript is the WAV's.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "audio/av_encode_testutil.h"
#include "server_harness.h"
#include "tern/tern.h"

namespace tern {
namespace {

namespace fs = std::filesystem;
using testing::Form;
using testing::kClips;
using testing::kRoot;
using testing::PostForm;
using testing::Server;

// The clip's 24 kHz mono samples, un-normalized, encoded as `container`/`encoder`.
std::string EncodeClip(const std::string& clip, const char* container, const char* encoder) {
  AudioOptions raw;
  raw.normalize = false;
  Result<Audio> a = LoadAudio(kClips + clip, raw);
  if (!a.ok()) return "";
  auto bytes = audio::testutil::EncodeWithAv(container, encoder, 24000, 1, a->samples, 64000);
  return bytes.ok() ? *bytes : "";
}

Result<Transcript> Library(const Audio& a) {
  ModelOptions mo;
  mo.model_dir = kRoot + "/models/tiny-en";
  TERN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> m, Model::Load(mo));
  Session s(m, 1);
  return s.Transcribe(a, {});
}

Result<Transcript> LibraryOnBytes(const std::string& bytes, const std::string& name) {
  TERN_ASSIGN_OR_RETURN(Audio a, LoadAudioFromMemory(bytes.data(), bytes.size(), name));
  return Library(a);
}

TEST(AvUpload, ServerTranscribesABrowsersWebm) {
  const std::string webm = EncodeClip("008.wav", "webm", "libopus");
  if (webm.empty()) GTEST_SKIP() << "this FFmpeg cannot encode Opus";
  Result<Transcript> want = LibraryOnBytes(webm, "rec.webm");
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  Result<Audio> wav = LoadAudio(kClips + "008.wav");
  ASSERT_TRUE(wav.ok());
  Result<Transcript> from_wav = Library(*wav);
  ASSERT_TRUE(from_wav.ok());
  EXPECT_EQ(want->text, from_wav->text);  // Opus at 64 kbit/s keeps every word

  Server srv({});
  ASSERT_GT(srv.port(), 0);
  Form form = {{"file", webm, "rec.webm", "audio/webm;codecs=opus"},
               {"response_format", "text", "", ""}};
  auto r = PostForm(srv.port(), form);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->body, FormatTranscript(*want, OutputFormat::kTxt));

  // A cut upload is a 400 naming the file.
  Form cut = {{"file", webm.substr(0, 150), "cut.webm", "audio/webm"}};
  auto c = PostForm(srv.port(), cut);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 400) << c->body;
  EXPECT_NE(c->body.find("cut.webm"), std::string::npos) << c->body;
  EXPECT_EQ(srv.Stop(), 0);
}

TEST(AvUpload, CliTranscribesAnM4a) {
  const std::string m4a = EncodeClip("008.wav", "ipod", "aac");
  if (m4a.empty()) GTEST_SKIP() << "this FFmpeg cannot encode AAC";
  const std::string path = ::testing::TempDir() + "/memo-" + std::to_string(getpid()) + ".m4a";
  std::ofstream(path, std::ios::binary) << m4a;
  Result<Audio> a = LoadAudio(path);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<Transcript> want = Library(*a);
  ASSERT_TRUE(want.ok()) << want.status().ToString();

  const std::string cmd = std::string("'") + TERN_BINARY + "' transcribe --model '" + kRoot +
                          "/models/tiny-en' -q -t 1 '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  fs::remove(path);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  EXPECT_EQ(out, FormatTranscript(*want, OutputFormat::kTxt));
  EXPECT_FALSE(want->text.empty());
}

TEST(AvUpload, SystemInfoNamesTheDecoders) {
  FILE* p = popen((std::string("'") + TERN_BINARY + "' --system-info").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  EXPECT_NE(out.find("audio decoders: libsndfile, FFmpeg (libavformat "), std::string::npos) << out;
}

}  // namespace
}  // namespace tern
