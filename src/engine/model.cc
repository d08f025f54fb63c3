// Model::Load: finds the two GGUF files, loads the encoder, the decoder and the tokenizer,
// and checks that they fit together.
#include <sys/stat.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>

#include "base/timer.h"
#include "engine/model_impl.h"
#include "engine/trained.h"
#include "kernels/kernels.h"

namespace tern {
namespace {

constexpr const char* kVaeFileName = "vibeasr-vae-encoder-i8_s.gguf";
constexpr const char* kLmFileName = "vibeasr-lm-i2_s-embed-q6_k.gguf";

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The explicit file if given, else DIR/default-name; a missing file is reported with both.
Result<std::string> ResolveFile(const std::string& dir, const std::string& explicit_path,
                                const char* default_name, const char* flag) {
  if (!explicit_path.empty()) return explicit_path;
  if (!IsDirectory(dir)) return NotFoundError("model directory %s: not a directory", dir.c_str());
  const std::string path = dir + "/" + default_name;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError("model directory %s has no %s (or pass %s FILE)", dir.c_str(),
                         default_name, flag);
  }
  return path;
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
const ModelInfo& Model::info() const { return impl_->info; }

Result<std::shared_ptr<const Model>> Model::Load(const ModelOptions& options) {
  TERN_RETURN_IF_ERROR(options.Validate());
  TERN_ASSIGN_OR_RETURN(const kernels::Isa isa, kernels::SelectIsa());
  Timer timer;
  auto impl = std::make_unique<Impl>();
  ModelInfo& info = impl->info;
  TERN_ASSIGN_OR_RETURN(info.vae_path,
                        ResolveFile(options.model_dir, options.vae_path, kVaeFileName, "--vae"));
  TERN_ASSIGN_OR_RETURN(info.lm_path,
                        ResolveFile(options.model_dir, options.lm_path, kLmFileName, "--lm"));

  // The encoder loads on a second thread (its two branches side by side) while this one
  // loads the decoder with a pool of every CPU (up to 8): both are mostly packing and first
  // touches of fresh memory, and independent. The decoder's share (opening the file, its
  // vocabulary, ~330 MB of I2_S) outlasts the encoder's, so its pool gets every CPU too,
  // even where the encoder's thread then shares a core. The future joins on every return
  // path.
  std::future<Result<std::unique_ptr<vibeasr::Encoder>>> encoder = std::async(
      std::launch::async, [path = info.vae_path] { return vibeasr::Encoder::Load(path); });

  TERN_ASSIGN_OR_RETURN(impl->lm_file, gguf::File::Open(info.lm_path));
  const HeadPrecision head = options.head;
  {
    // At most 8: packing is bound by memory long before that, and a container may report
    // far more CPUs than it may use.
    const unsigned cpus = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
    ThreadPool load_pool(static_cast<int>(cpus));
    TERN_ASSIGN_OR_RETURN(impl->decoder, vibeasr::Decoder::Load(*impl->lm_file, head, &load_pool));
  }
  TERN_ASSIGN_OR_RETURN(impl->tokenizer, text::Tokenizer::FromGguf(*impl->lm_file));
  Result<text::SpecialTokens> special = text::FindSpecialTokens(*impl->tokenizer);
  if (!special.ok()) return special.status().WithPrefix(info.lm_path);
  impl->special = *special;
  const vibeasr::DecoderConfig& c = impl->decoder->config();
  if (static_cast<int64_t>(impl->tokenizer->vocab_size()) > c.vocab) {
    return FormatError("%s: tokenizer has %zu tokens but token_embd.weight only %lld rows",
                       info.lm_path.c_str(), impl->tokenizer->vocab_size(),
                       static_cast<long long>(c.vocab));
  }

  TERN_ASSIGN_OR_RETURN(impl->encoder, encoder.get());
  if (impl->encoder->hidden() != c.hidden) {
    return FormatError(
        "%s: the encoder's connectors output %lld features per frame, but the "
        "decoder in %s has hidden size %lld",
        info.vae_path.c_str(), static_cast<long long>(impl->encoder->hidden()),
        info.lm_path.c_str(), static_cast<long long>(c.hidden));
  }

  Result<std::string> name = impl->lm_file->GetString("general.name");
  info.name = name.ok() ? *name : info.lm_path.substr(info.lm_path.find_last_of('/') + 1);
  info.vocab = c.vocab;
  info.hidden = c.hidden;
  info.layers = c.layers;
  info.heads = c.heads;
  info.kv_heads = c.kv_heads;
  info.ffn = c.ffn;
  info.context = c.context;
  info.head = head == HeadPrecision::kInt8 ? "int8" : "f16";
  info.isa = kernels::IsaName(isa);
  TERN_ASSIGN_OR_RETURN(info.trained, engine::ReadTrainedWith(*impl->lm_file));
  TERN_ASSIGN_OR_RETURN(impl->voices, engine::ReadVoiceProjection(*impl->lm_file));
  info.load_ms = timer.ElapsedMs();
  return std::shared_ptr<const Model>(new Model(std::move(impl)));
}

}  // namespace tern
