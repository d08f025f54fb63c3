// libFuzzer target for the GGUF reader: parse arbitrary bytes, then use everything a
// successful parse promises. Build and run with scripts/fuzz.
//
// Oracles beyond "no crash, no sanitizer report":
//   * every tensor's bytes [data, data + n_bytes) are read (ASan checks they are in the input);
//   * a parsed file rewritten to the other type-id numbering still parses, with the same
//     tensors (what `tern-dev convert` relies on);
//   * the tern.* keys a model may declare (engine/trained.h, engine/speakers.h) read either
//     as values inside their documented bounds or as an error naming the file.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "audio/voice_features.h"
#include "engine/speakers.h"
#include "engine/trained.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"

namespace {

using tern::gguf::File;

void Require(bool cond) {
  if (!cond) __builtin_trap();
}

void Touch(const File& f) {
  uint64_t sum = 0;
  for (const auto& t : f.tensors()) {
    for (uint64_t i = 0; i < t.n_bytes; ++i) sum += t.data[i];
    Require(f.FindTensor(t.name) == &t);
  }
  for (const auto& [key, v] : f.kv()) {
    sum += tern::gguf::FormatValue(v).size();
    Require(f.Find(key) == &v);
    (void)f.GetString(key);
    (void)f.GetI64(key);
    (void)f.GetF64(key);
    (void)f.GetIntArray(key);
    (void)f.GetFloatArray(key);
    (void)f.GetStringArray(key);
  }
  volatile uint64_t sink = sum;
  (void)sink;
}

void CheckRetype(const File& f, const uint8_t* data, size_t size) {
  for (auto ids : {tern::gguf::TypeIds::kPublished, tern::gguf::TypeIds::kRemapped}) {
    const auto patches = tern::gguf::PlanTypeIdRewrite(f, ids);
    if (patches.empty()) continue;
    std::vector<uint8_t> copy(data, data + size);
    Require(tern::gguf::ApplyTypeIdPatches(patches, copy.data(), copy.size()).ok());
    auto g = File::Parse(copy.data(), copy.size(), "retyped");
    Require(g.ok());
    Require((*g)->tensors().size() == f.tensors().size());
    for (size_t k = 0; k < f.tensors().size(); ++k) {
      Require((*g)->tensors()[k].type == f.tensors()[k].type);
      Require((*g)->tensors()[k].offset == f.tensors()[k].offset);
    }
    Require(tern::gguf::PlanTypeIdRewrite(**g, ids).empty());
  }
}

bool Finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

void CheckDeclarations(const File& f) {
  // The file first, and the key (the reader's own words, or the GGUF accessor's "key '...'").
  const auto named = [](const tern::Status& s) {
    return s.message().rfind("fuzz.gguf: ", 0) == 0 &&
           s.message().find("tern.") != std::string::npos;
  };
  auto t = tern::engine::ReadTrainedWith(f);
  if (!t.ok()) {
    Require(named(t.status()));
  } else {
    for (const auto& s : {t->max_audio_seconds, t->chunk_seconds, t->snap_seconds})
      Require(!s || (*s > 0 && std::isfinite(*s)));
    Require(!t->beam || (*t->beam >= 1 && *t->beam <= 16));
  }
  auto v = tern::engine::ReadVoiceProjection(f);
  if (!v.ok()) {
    Require(named(v.status()));
  } else if (*v) {
    const size_t n = tern::audio::kVoiceFeatureCount;
    const auto& p = **v;
    Require(p.mean.size() == n && p.dims >= 1 && static_cast<size_t>(p.dims) <= n);
    Require(p.projection.size() == n * static_cast<size_t>(p.dims));
    Require(Finite(p.mean) && Finite(p.projection));
    Require(p.link_distance > 0 && p.link_distance <= 2);
    tern::audio::VoiceFeatures zero{};
    Require(Finite(p.Embed(zero)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = File::Parse(size == 0 ? nullptr : data, size, "fuzz.gguf");
  if (!f.ok()) {
    // The message contract: file name first, then where.
    Require(f.status().message().rfind("fuzz.gguf: offset ", 0) == 0);
    return 0;
  }
  Touch(**f);
  CheckRetype(**f, data, size);
  CheckDeclarations(**f);
  return 0;
}
