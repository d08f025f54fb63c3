// GGUF v3 writer, used by tests and tools (tern-dev synth, tern-dev convert) to make checkpoints.
// Writes exactly the layout documented in gguf/gguf.h: KV pairs and tensor infos in the
// order added, data section aligned to `alignment`, each tensor's offset padded to it
// (padding bytes are zero). When alignment != 32 the constructor records it as the u32 KV
// `general.alignment` (first KV), as readers need it; the layout always uses the
// constructor's value, so a test may overwrite the KV to produce an inconsistent file.
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

  // Setting an existing key replaces its value in place (keys stay unique).
  void SetString(const std::string& key, const std::string& v);
  void SetU32(const std::string& key, uint32_t v);
  void SetI32(const std::string& key, int32_t v);
  void SetU64(const std::string& key, uint64_t v);
  void SetF32(const std::string& key, float v);
  void SetBool(const std::string& key, bool v);
  void SetStringArray(const std::string& key, const std::vector<std::string>& v);
  void SetI32Array(const std::string& key, const std::vector<int32_t>& v);
  void SetF32Array(const std::string& key, const std::vector<float>& v);
  // Any value, including nested arrays (tests). Build with Value::U8(..), Value::Array(..).
  void SetValue(const std::string& key, const Value& v);

  // Adds a tensor; `bytes` must be StoredBytes(type, prod(ne)) long, ne 1..4 dims each
  // >= 1, ne[0] a multiple of the type's block, the name new and non-empty (else
  // InvalidArgument naming the tensor).
  Status AddTensor(const std::string& name, DType type, const std::vector<int64_t>& ne,
                   std::vector<uint8_t> bytes);

  size_t n_tensors() const { return tensors_.size(); }

  // The complete file image.
  std::string Serialize() const;
  // Writes the file (streams the tensor bytes; does not build the image in memory).
  Status WriteTo(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    DType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> bytes;
  };
  // Header, KVs, tensor infos and the padding up to the data section.
  std::string Header() const;
  TypeIds ids_;
  uint32_t alignment_;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Tensor> tensors_;
};

// One 4-byte type-id field to patch (tern-dev convert): absolute offset, old and new id.
struct TypeIdPatch {
  std::string tensor;
  uint64_t field_offset = 0;
  uint32_t old_id = 0;
  uint32_t new_id = 0;
};

// The patches that make every I2_S / I8_S tensor of `f` use the `target` numbering
// (empty when it already does). Nothing else in the file changes: payload bytes, offsets
// and KVs stay byte-identical.
std::vector<TypeIdPatch> PlanTypeIdRewrite(const File& f, TypeIds target);
// Applies patches to an in-memory image (bounds-checked: InvalidArgument if out of range).
Status ApplyTypeIdPatches(const std::vector<TypeIdPatch>& patches, uint8_t* data, size_t size);
// Copies `input` to `output` with every I2_S/I8_S type field rewritten to `target`. When
// output == input the file is replaced atomically (temporary file in the same directory,
// fsync, rename); the result is re-parsed before it replaces anything. Returns the number
// of fields changed.
Result<size_t> RewriteTypeIds(const std::string& input, const std::string& output, TypeIds target);

// Copies `input` to `output` with the KV pairs `set` added after the file's own (a key the
// file has keeps its place and takes the new value). Everything else is the input's: its
// type-id numbering, alignment, KV order, tensor infos and tensor bytes (the data section
// is byte-identical; only its start moves with the header). The copy is re-read and its
// tensor bytes compared before it replaces `output` (a temporary file in the same
// directory, then a rename), so output == input is safe. Holds the tensors in memory.
Status RewriteWithKvs(const std::string& input, const std::string& output,
                      const std::vector<std::pair<std::string, Value>>& set);

}  // namespace tern::gguf
