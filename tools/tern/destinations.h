// Where `tern transcribe` puts each input's transcripts: stdout (several inputs each named),
// -o FILE, or --output-dir DIR (one file per input and format, never two inputs on one).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tern/tern.h"

namespace tern::cli {

struct Destination {
  std::string output_file;  // -o
  std::string output_dir;   // --output-dir
  // Several inputs to stdout: a "==> NAME <==" line before each one's text or subtitles,
  // a "file" field in its JSON.
  bool name_inputs = false;
};

// DIR/<stem><extension> (verbose_json: <stem>.verbose.json beside <stem>.json); standard
// input ("-") is "stdin".
std::filesystem::path OutputPath(const std::string& dir, const std::string& input,
                                 OutputFormat format);

// --output-dir before anything runs: a path that exists and is not a directory, or two
// inputs with one stem (a.wav and a.flac, x/a.wav and y/a.wav), are usage errors naming
// what clashes. The directory itself is made by Prepare.
Status CheckOutputDir(const std::string& dir, const std::vector<std::string>& inputs,
                      OutputFormat format);
// Creates --output-dir and its parents if missing.
Status Prepare(const Destination& d);

// The header line for input `name` on stdout, when the destination names inputs and
// `formats` has one that carries no file field (txt, srt, vtt; --stream: empty formats).
void PrintHeaderIfNamed(const Destination& d, const std::string& name,
                        const std::vector<OutputFormat>& formats);

// Every format's text for one input, to its destination.
Status WriteTranscript(const Transcript& t, const std::string& input, const std::string& name,
                       const std::vector<OutputFormat>& formats, FormatOptions options,
                       const Destination& d);

}  // namespace tern::cli
