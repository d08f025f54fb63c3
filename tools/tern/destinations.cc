#include "destinations.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <system_error>

#include "commands.h"

namespace tern::cli {

std::filesystem::path OutputPath(const std::string& dir, const std::string& input,
                                 OutputFormat format) {
  const std::string stem =
      input == "-" ? std::string("stdin") : std::filesystem::path(input).stem().string();
  return std::filesystem::path(dir) / (stem + OutputFormatExtension(format));
}

Status CheckOutputDir(const std::string& dir, const std::vector<std::string>& inputs,
                      OutputFormat format) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    return InvalidArgumentError("--output-dir %s: exists and is not a directory", dir.c_str());
  // Refused rather than one silently overwritten; every format's extension is distinct, so
  // one format's paths clash exactly when all do.
  std::map<std::filesystem::path, std::string> writer;  // output file -> the input writing it
  for (const std::string& input : inputs) {
    const std::filesystem::path out = OutputPath(dir, input, format);
    const auto [it, fresh] = writer.emplace(out, input);
    if (!fresh) {
      return InvalidArgumentError(
          "--output-dir: %s and %s would both write %s; transcribe them in separate runs or "
          "into separate directories",
          it->second.c_str(), input.c_str(), out.c_str());
    }
  }
  return Status::Ok();
}

Status Prepare(const Destination& d) {
  if (d.output_dir.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(d.output_dir, ec);
  if (ec) {
    return IoError("--output-dir %s: cannot create it: %s", d.output_dir.c_str(),
                   ec.message().c_str());
  }
  return Status::Ok();
}

void PrintHeaderIfNamed(const Destination& d, const std::string& name,
                        const std::vector<OutputFormat>& formats) {
  if (!d.name_inputs) return;
  const bool all_json =
      !formats.empty() && std::all_of(formats.begin(), formats.end(), [](OutputFormat f) {
        return f == OutputFormat::kJson || f == OutputFormat::kVerboseJson;
      });
  if (all_json) return;
  std::fprintf(stdout, "==> %s <==\n", name.c_str());
  std::fflush(stdout);
}

Status WriteTranscript(const Transcript& t, const std::string& input, const std::string& name,
                       const std::vector<OutputFormat>& formats, FormatOptions options,
                       const Destination& d) {
  if (d.name_inputs) options.file_name = name;
  for (const OutputFormat format : formats) {
    const std::string text = FormatTranscript(t, format, options);
    if (!d.output_dir.empty()) {
      TERN_RETURN_IF_ERROR(
          WriteFile(OutputPath(d.output_dir, input, format).string(), text.data(), text.size()));
    } else if (!d.output_file.empty()) {
      TERN_RETURN_IF_ERROR(WriteFile(d.output_file, text.data(), text.size()));
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
  }
  return Status::Ok();
}

}  // namespace tern::cli
