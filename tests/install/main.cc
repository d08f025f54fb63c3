// transcribe_one MODEL_DIR AUDIO: the transcript as `tern transcribe` prints it (txt). The
// smallest program on the public API, built against an installed tern (docs/install.md).
#include <cstdio>
#include <string>

#include <tern/tern.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: transcribe_one MODEL_DIR AUDIO\n");
    return 2;
  }
  tern::ModelOptions model_options;
  model_options.model_dir = argv[1];
  auto model = tern::Model::Load(model_options);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  auto audio = tern::LoadAudio(argv[2]);
  if (!audio.ok()) {
    std::fprintf(stderr, "%s\n", audio.status().ToString().c_str());
    return 1;
  }
  tern::Session session(*model);
  auto transcript = session.Transcribe(*audio, tern::TranscribeOptions{});
  if (!transcript.ok()) {
    std::fprintf(stderr, "%s\n", transcript.status().ToString().c_str());
    return 1;
  }
  const std::string text = tern::FormatTranscript(*transcript, tern::OutputFormat::kTxt);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
