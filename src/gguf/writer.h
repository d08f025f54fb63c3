// GGUF v3 writer, used by tests and tools (tern synth, tern convert) to make checkpoints.
// Writes exactly the layout documented in gguf/gguf.h: KV pairs and tensor infos in the
// order added, data section aligned to `alignment`, each tensor's offset padded to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace tern::gguf {

class Writer {
 public:
  explicit Writer(TypeIds ids = TypeIds::kPublished, uint32_t alignment = 32);

  void SetString(const std::string& key, const std::string& v);
  void SetU32(const std::string& key, uint32_t v);
  void SetI32(const std::string& key, int32_t v);
  void SetU64(const std::string& key, uint64_t v);
  void SetF32(const std::string& key, float v);
  void SetBool(const std::string& key, bool v);
  void SetStringArray(const std::string& key, const std::vector<std::string>& v);
  void SetI32Array(const std::string& key, const std::vector<int32_t>& v);
  void SetF32Array(const std::string& key, const std::vector<float>& v);
  // Any value, including nested arrays (tests).
  void SetValue(const std::string& key, const Value& v);

  // Adds a tensor; `bytes` must be StoredBytes(type, prod(ne)) long (checked: error).
  Status AddTensor(const std::string& name, DType type, const std::vector<int64_t>& ne,
                   std::vector<uint8_t> bytes);

  // The complete file image.
  std::string Serialize() const;
  Status WriteTo(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> bytes;
  };
  TypeIds ids_;
  uint32_t alignment_;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace tern::gguf
