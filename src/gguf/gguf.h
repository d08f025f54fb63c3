// GGUF v3 reader: a bounds-checked view over a memory-mapped file.
//
// File layout (all little-endian):
//   magic "GGUF" (u32 0x46554747) | version u32 (3; 2 accepted) | n_tensors u64 | n_kv u64
//   n_kv times:       key (string) | value type u32 | value
//   n_tensors times:  name (string) | n_dims u32 (1..4) | ne[n_dims] u64 | type u32 | offset u64
//   padding to `general.alignment` (a u32 KV; 32 when absent), then the data section.
//   string = u64 length + bytes (no terminator); array = elem type u32 + count u64 + elems.
//   v2 has the same layout as v3 (v1, with u32 counts, is rejected).
//   Value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string, 9 array,
//                10 u64, 11 i64, 12 f64.
// A tensor's bytes start at data_start + offset; offsets must be multiples of the
// alignment. Sizes come from the type (tensor/dtype.h StoredBytes), which for I8_S/I2_S
// include the 32-byte in-band scale tail: do not assume rows are packed back to back.
//
// Type ids: 0 F32, 1 F16, 8 Q8_0, 14 Q6_K, 30 BF16; I2_S = 36 and I8_S = 37 as published
// by VibeASR, or 43 / 42 after audio.cpp's renumbering. 38/39 (TL1/TL2 in the VibeASR fork,
// MXFP4 in mainline ggml) and every other id are rejected with an error naming the tensor.
//
// Every malformed input yields a Status naming the file, the byte offset and what is wrong;
// no length field is trusted before it is checked against the bytes that remain. What the
// parser enforces (kFormat unless noted):
//   * magic "GGUF"; version 2 or 3 (1 and future versions: kUnsupported);
//   * counts and lengths fit in the remaining bytes (so nothing is allocated for a lying
//     length); arrays nest at most kMaxArrayDepth deep and hold at most
//     kMaxKvArrayElements elements in all (kUnsupported); bools are 0 or 1;
//   * keys and tensor names are non-empty, valid UTF-8 without NUL, and unique;
//   * general.alignment, when present, is a u32 power of two in [8, 65536] (tensor data
//     is used in place, so floats must stay naturally aligned);
//   * n_dims in 1..4; every dim >= 1; the element count stays below 2^60;
//   * ne[0] is a multiple of the type's block size (I2_S: 128, Q8_0: 32, Q6_K: 256);
//   * type ids are known (kUnsupported otherwise, naming the tensor);
//   * offsets are multiples of the alignment, each tensor's StoredBytes lie inside the
//     file, and no two tensors overlap.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "base/status.h"
#include "tensor/dtype.h"

namespace tern::gguf {

enum class ValueType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};
const char* ValueTypeName(ValueType t);

// Which numbering a file uses for I2_S / I8_S.
enum class TypeIds { kPublished, kRemapped };  // 36/37 vs 43/42
inline constexpr uint32_t kPublishedI2S = 36, kPublishedI8S = 37;
inline constexpr uint32_t kRemappedI2S = 43, kRemappedI8S = 42;

inline constexpr int kMaxArrayDepth = 8;  // arrays of arrays of ... (8 levels)
// Array elements over all KVs. Each costs a ~100-byte Value in memory for as little as one
// byte on disk, so the count is capped (kUnsupported beyond): a Qwen2 vocabulary with its
// merges, scores and token types is ~0.6 M elements.
inline constexpr uint64_t kMaxKvArrayElements = uint64_t{1} << 22;
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr uint64_t kMinAlignment = 8, kMaxAlignment = 65536;

// GGUF type id <-> DType. An unknown id is an error.
Result<DType> DTypeFromGgufId(uint32_t id);
uint32_t GgufIdFromDType(DType t, TypeIds ids = TypeIds::kPublished);

// One KV value. Scalars are widened into the matching field; arrays keep their element type.
// Build values with the helpers below (Value::U32(7), Value::Array(kString, {...})).
struct Value {
  ValueType type = ValueType::kU8;
  uint64_t u = 0;                        // unsigned integers and bool
  int64_t i = 0;                         // signed integers
  double f = 0;                          // f32 / f64
  std::string s;                         // string
  ValueType elem_type = ValueType::kU8;  // arrays
  std::vector<Value> arr;                // arrays (nested arrays allowed)

  static Value U8(uint8_t v) { return Unsigned(ValueType::kU8, v); }
  static Value U16(uint16_t v) { return Unsigned(ValueType::kU16, v); }
  static Value U32(uint32_t v) { return Unsigned(ValueType::kU32, v); }
  static Value U64(uint64_t v) { return Unsigned(ValueType::kU64, v); }
  static Value I8(int8_t v) { return Signed(ValueType::kI8, v); }
  static Value I16(int16_t v) { return Signed(ValueType::kI16, v); }
  static Value I32(int32_t v) { return Signed(ValueType::kI32, v); }
  static Value I64(int64_t v) { return Signed(ValueType::kI64, v); }
  static Value F32(float v) { return Float(ValueType::kF32, v); }
  static Value F64(double v) { return Float(ValueType::kF64, v); }
  static Value Bool(bool v) { return Unsigned(ValueType::kBool, v ? 1 : 0); }
  static Value String(std::string v);
  // Every element must have type `elem` (the writer checks).
  static Value Array(ValueType elem, std::vector<Value> elems);

  static Value Unsigned(ValueType t, uint64_t v);
  static Value Signed(ValueType t, int64_t v);
  static Value Float(ValueType t, double v);
};

// Structural equality (type, payload, element type, elements).
bool operator==(const Value& a, const Value& b);

// Human-readable text for `tern-dev inspect`: scalars as values, strings quoted (long ones cut),
// arrays as "[u32 x 7] 3, 3, 3, ..." with at most `max_elems` elements shown.
std::string FormatValue(const Value& v, size_t max_elems = 6);

struct TensorInfo {
  std::string name;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the contiguous dimension (ggml order)
  DType type = DType::kF32;
  uint32_t type_id = 0;            // the id as written in the file
  uint64_t offset = 0;             // relative to the data section
  uint64_t info_offset = 0;        // absolute byte offset of this tensor info's record
  uint64_t type_field_offset = 0;  // absolute byte offset of its u32 type field
  int64_t n_elements = 0;
  uint64_t n_bytes = 0;           // StoredBytes(type, n_elements)
  const uint8_t* data = nullptr;  // into the mapping

  // Bytes from the start of the data section to the end of this tensor's stored bytes.
  uint64_t end_offset() const { return offset + n_bytes; }
};

class File {
 public:
  // Opens and validates `path`. Everything checked here need not be re-checked by users.
  static Result<std::unique_ptr<File>> Open(const std::string& path);
  // Parses a file already in memory (fuzzing, tests). `name` is used in messages; the
  // bytes must outlive the File. A null `data` is allowed when size is 0.
  static Result<std::unique_ptr<File>> Parse(const uint8_t* data, size_t size,
                                             const std::string& name);

  const std::string& path() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  size_t file_size() const { return size_; }

  // KV pairs in file order.
  const std::vector<std::pair<std::string, Value>>& kv() const { return kv_; }
  const Value* Find(std::string_view key) const;

  // Typed getters: NotFound if absent, Format error naming the file, the key and its
  // offset if the type differs.
  // Integer getters accept any integer type whose value fits.
  Result<std::string> GetString(std::string_view key) const;
  Result<uint64_t> GetU64(std::string_view key) const;
  Result<int64_t> GetI64(std::string_view key) const;
  Result<double> GetF64(std::string_view key) const;  // any float or integer type
  Result<std::vector<std::string>> GetStringArray(std::string_view key) const;
  Result<std::vector<int64_t>> GetIntArray(std::string_view key) const;
  Result<std::vector<double>> GetFloatArray(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;

  // For a tensor now held in a packed/converted copy: drops its whole pages from the
  // process when the file is memory-mapped (Open); a no-op for Parse'd bytes, which
  // belong to the caller. The tensor's bytes remain readable either way.
  void ReleasePages(const TensorInfo& t) const;
  void ReleasePages(const uint8_t* p, size_t n) const;  // a byte range inside the file

 private:
  File() = default;
  std::unique_ptr<MappedFile> map_;
  std::string name_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, Value>> kv_;
  std::map<std::string, size_t, std::less<>> kv_index_;
  std::vector<uint64_t> kv_offsets_;  // byte offset of each KV record, for messages
  // "file: key 'k' at offset N" for getter errors.
  std::string KeyWhere(std::string_view key) const;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
  friend class Parser;
};

}  // namespace tern::gguf
