// The GGUF byte parser behind File::Parse. Layout and the rules enforced: gguf/gguf.h.
//
// Reading discipline: every read goes through Need(), which compares against the bytes
// that remain, so a length field is never trusted (nor anything allocated for it) before
// it has been checked. Errors carry the absolute byte offset of the field at fault.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "gguf/gguf.h"

namespace tern::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;             // "GGUF" read as little-endian u32
constexpr int64_t kMaxElements = int64_t{1} << 60;  // keeps every byte count in int64

// Smallest encoding of one value of type `t` (for count-vs-remaining checks).
uint64_t MinValueBytes(ValueType t) {
  switch (t) {
    case ValueType::kU8:
    case ValueType::kI8:
    case ValueType::kBool:
      return 1;
    case ValueType::kU16:
    case ValueType::kI16:
      return 2;
    case ValueType::kU32:
    case ValueType::kI32:
    case ValueType::kF32:
      return 4;
    case ValueType::kU64:
    case ValueType::kI64:
    case ValueType::kF64:
      return 8;
    case ValueType::kString:
      return 8;  // length only
    case ValueType::kArray:
      return 12;  // elem type + count
  }
  return 1;
}

bool KnownValueType(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::kF64); }

// Returns the index of the first byte that breaks UTF-8 (or NUL), or -1 if `s` is valid.
int64_t FirstBadUtf8(const uint8_t* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t c = s[i];
    if (c == 0) return static_cast<int64_t>(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else
      return static_cast<int64_t>(i);
    if (n - i < len) return static_cast<int64_t>(i);
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return static_cast<int64_t>(i);
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return static_cast<int64_t>(i);  // overlong, out of range or a surrogate
    }
    i += len;
  }
  return -1;
}

}  // namespace

class Parser {
 public:
  Parser(File* f, const uint8_t* data, size_t size) : f_(f), p_(data), size_(size) {}
  Status Run();

 private:
  template <typename... Args>
  Status Fail(ErrorCode code, uint64_t at, const char* fmt, Args... args) {
    std::string what;
    if constexpr (sizeof...(Args) == 0)
      what = fmt;
    else
      what = StrFormat(fmt, args...);
    return Status(code, StrFormat("%s: offset %llu: %s", f_->name_.c_str(),
                                  static_cast<unsigned long long>(at), what.c_str()));
  }
  uint64_t Remaining() const { return size_ - pos_; }
  Status Need(uint64_t n, const char* what) {
    if (n > Remaining()) {
      return Fail(ErrorCode::kFormat, pos_, "truncated: %s needs %llu bytes, %llu remain", what,
                  static_cast<unsigned long long>(n), static_cast<unsigned long long>(Remaining()));
    }
    return Status::Ok();
  }
  template <typename T>
  Status Read(T* v, const char* what) {
    TERN_RETURN_IF_ERROR(Need(sizeof(T), what));
    std::memcpy(v, p_ + pos_, sizeof(T));  // the format is little-endian, as is every target
    pos_ += sizeof(T);
    return Status::Ok();
  }
  Status ReadString(std::string* s, const char* what);
  // A key or tensor name: a string that is non-empty, valid UTF-8 and NUL-free.
  Status ReadName(std::string* s, const char* what);
  Status ReadValue(ValueType t, Value* v, int depth);
  Status ReadHeader(uint64_t* n_tensors, uint64_t* n_kv);
  Status ReadKvs(uint64_t n_kv);
  Status ReadTensorInfo(TensorInfo* t);
  Status CheckTensorPlacement();

  File* f_;
  const uint8_t* p_;
  size_t size_;
  uint64_t pos_ = 0;
  uint64_t alignment_value_offset_ = 0;
  uint64_t kv_array_elements_ = 0;
};

Status Parser::ReadString(std::string* s, const char* what) {
  const uint64_t at = pos_;
  uint64_t len = 0;
  TERN_RETURN_IF_ERROR(Read(&len, what));
  if (len > Remaining()) {
    return Fail(ErrorCode::kFormat, at, "%s length %llu exceeds the %llu bytes that remain", what,
                static_cast<unsigned long long>(len), static_cast<unsigned long long>(Remaining()));
  }
  s->assign(reinterpret_cast<const char*>(p_ + pos_), len);
  pos_ += len;
  return Status::Ok();
}

Status Parser::ReadName(std::string* s, const char* what) {
  const uint64_t at = pos_;
  TERN_RETURN_IF_ERROR(ReadString(s, what));
  if (s->empty()) return Fail(ErrorCode::kFormat, at, "empty %s", what);
  const int64_t bad = FirstBadUtf8(reinterpret_cast<const uint8_t*>(s->data()), s->size());
  if (bad >= 0) {
    return Fail(ErrorCode::kFormat, at, "%s is not valid UTF-8 (byte %lld of %zu is 0x%02x)", what,
                static_cast<long long>(bad), s->size(),
                static_cast<unsigned char>((*s)[static_cast<size_t>(bad)]));
  }
  return Status::Ok();
}

Status Parser::ReadValue(ValueType t, Value* v, int depth) {
  v->type = t;
  const uint64_t at = pos_;
  switch (t) {
    case ValueType::kU8: {
      uint8_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "u8 value"));
      v->u = x;
      break;
    }
    case ValueType::kU16: {
      uint16_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "u16 value"));
      v->u = x;
      break;
    }
    case ValueType::kU32: {
      uint32_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "u32 value"));
      v->u = x;
      break;
    }
    case ValueType::kU64: {
      uint64_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "u64 value"));
      v->u = x;
      break;
    }
    case ValueType::kI8: {
      int8_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "i8 value"));
      v->i = x;  // NOLINT(bugprone-signed-char-misuse): a signed GGUF i8, sign-extended on purpose
      break;
    }
    case ValueType::kI16: {
      int16_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "i16 value"));
      v->i = x;
      break;
    }
    case ValueType::kI32: {
      int32_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "i32 value"));
      v->i = x;
      break;
    }
    case ValueType::kI64: {
      int64_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "i64 value"));
      v->i = x;
      break;
    }
    case ValueType::kF32: {
      float x;
      TERN_RETURN_IF_ERROR(Read(&x, "f32 value"));
      v->f = x;
      break;
    }
    case ValueType::kF64: {
      double x;
      TERN_RETURN_IF_ERROR(Read(&x, "f64 value"));
      v->f = x;
      break;
    }
    case ValueType::kBool: {
      uint8_t x;
      TERN_RETURN_IF_ERROR(Read(&x, "bool value"));
      if (x > 1) return Fail(ErrorCode::kFormat, at, "bool value %u is neither 0 nor 1", x);
      v->u = x;
      break;
    }
    case ValueType::kString:
      return ReadString(&v->s, "string value");
    case ValueType::kArray: {
      if (depth >= kMaxArrayDepth) {
        return Fail(ErrorCode::kFormat, at, "arrays nested deeper than %d levels", kMaxArrayDepth);
      }
      uint32_t et = 0;
      TERN_RETURN_IF_ERROR(Read(&et, "array element type"));
      if (!KnownValueType(et)) {
        return Fail(ErrorCode::kFormat, at, "unknown array element type %u", et);
      }
      v->elem_type = static_cast<ValueType>(et);
      const uint64_t count_at = pos_;
      uint64_t count = 0;
      TERN_RETURN_IF_ERROR(Read(&count, "array count"));
      if (count > Remaining() / MinValueBytes(v->elem_type)) {
        return Fail(ErrorCode::kFormat, count_at,
                    "array of %llu %s elements cannot fit in the %llu bytes that remain",
                    static_cast<unsigned long long>(count), ValueTypeName(v->elem_type),
                    static_cast<unsigned long long>(Remaining()));
      }
      kv_array_elements_ += count;
      if (kv_array_elements_ > kMaxKvArrayElements) {
        return Fail(ErrorCode::kUnsupported, count_at,
                    "more than %llu KV array elements in the file (tern's limit)",
                    static_cast<unsigned long long>(kMaxKvArrayElements));
      }
      v->arr.resize(count);
      for (uint64_t k = 0; k < count; ++k) {
        TERN_RETURN_IF_ERROR(ReadValue(v->elem_type, &v->arr[k], depth + 1));
      }
      break;
    }
  }
  return Status::Ok();
}

Status Parser::ReadHeader(uint64_t* n_tensors, uint64_t* n_kv) {
  uint32_t magic = 0, version = 0;
  TERN_RETURN_IF_ERROR(Read(&magic, "magic"));
  if (magic != kMagic) {
    return Fail(ErrorCode::kFormat, 0, "bad magic 0x%08x (not a GGUF file)", magic);
  }
  TERN_RETURN_IF_ERROR(Read(&version, "version"));
  if (version == 2 || version == 3) {
    f_->version_ = version;
  } else if (version == 0x02000000 || version == 0x03000000) {
    return Fail(ErrorCode::kUnsupported, 4, "big-endian GGUF files are not supported");
  } else if (version == 1 || (version > 3 && version < 256)) {
    return Fail(ErrorCode::kUnsupported, 4, "GGUF version %u is not supported (2 and 3 are)",
                version);
  } else {
    return Fail(ErrorCode::kFormat, 4, "bad GGUF version %u", version);
  }
  TERN_RETURN_IF_ERROR(Read(n_tensors, "tensor count"));
  TERN_RETURN_IF_ERROR(Read(n_kv, "KV count"));
  // Each KV needs >= 13 bytes (key length, type, 1-byte value) and each tensor info >= 32
  // (name length, n_dims, one dim, type, offset): refuse counts the file cannot hold.
  const uint64_t rem = Remaining();
  if (*n_kv > rem / 13) {
    return Fail(ErrorCode::kFormat, 16, "KV count %llu cannot fit in the %llu remaining bytes",
                static_cast<unsigned long long>(*n_kv), static_cast<unsigned long long>(rem));
  }
  if (*n_tensors > rem / 32 || *n_kv * 13 + *n_tensors * 32 > rem) {
    return Fail(ErrorCode::kFormat, 8,
                "tensor count %llu (with %llu KVs) cannot fit in the %llu remaining bytes",
                static_cast<unsigned long long>(*n_tensors), static_cast<unsigned long long>(*n_kv),
                static_cast<unsigned long long>(rem));
  }
  return Status::Ok();
}

Status Parser::ReadKvs(uint64_t n_kv) {
  f_->kv_.reserve(n_kv);
  for (uint64_t k = 0; k < n_kv; ++k) {
    const uint64_t key_at = pos_;
    std::string key;
    TERN_RETURN_IF_ERROR(ReadName(&key, "key"));
    if (f_->kv_index_.count(key)) {
      return Fail(ErrorCode::kFormat, key_at, "duplicate key '%s'", key.c_str());
    }
    const uint64_t type_at = pos_;
    uint32_t type = 0;
    TERN_RETURN_IF_ERROR(Read(&type, "value type"));
    if (!KnownValueType(type)) {
      return Fail(ErrorCode::kFormat, type_at, "key '%s': unknown value type %u", key.c_str(),
                  type);
    }
    const uint64_t value_at = pos_;
    Value v;
    Status s = ReadValue(static_cast<ValueType>(type), &v, 0);
    if (!s.ok()) {
      // Keep the parser's "file: offset N: what" and add which key it was reading.
      return Status(s.code(), s.message() + StrFormat(" (in the value of key '%s')", key.c_str()));
    }
    if (key == "general.alignment") alignment_value_offset_ = value_at;
    f_->kv_index_.emplace(key, f_->kv_.size());
    f_->kv_offsets_.push_back(key_at);
    f_->kv_.emplace_back(std::move(key), std::move(v));
  }
  if (const Value* a = f_->Find("general.alignment")) {
    const uint64_t at = alignment_value_offset_;
    if (a->type != ValueType::kU32) {
      return Fail(ErrorCode::kFormat, at, "general.alignment must be u32, got %s",
                  ValueTypeName(a->type));
    }
    if (a->u < kMinAlignment || a->u > kMaxAlignment || (a->u & (a->u - 1)) != 0) {
      return Fail(
          ErrorCode::kFormat, at, "general.alignment %llu is not a power of two in [%llu, %llu]",
          static_cast<unsigned long long>(a->u), static_cast<unsigned long long>(kMinAlignment),
          static_cast<unsigned long long>(kMaxAlignment));
    }
    f_->alignment_ = a->u;
  }
  return Status::Ok();
}

Status Parser::ReadTensorInfo(TensorInfo* t) {
  t->info_offset = pos_;
  TERN_RETURN_IF_ERROR(ReadName(&t->name, "tensor name"));
  const char* name = t->name.c_str();
  if (f_->tensor_index_.count(t->name)) {
    return Fail(ErrorCode::kFormat, t->info_offset, "duplicate tensor name '%s'", name);
  }
  const uint64_t dims_at = pos_;
  uint32_t n_dims = 0;
  TERN_RETURN_IF_ERROR(Read(&n_dims, "n_dims"));
  if (n_dims < 1 || n_dims > 4) {
    return Fail(ErrorCode::kFormat, dims_at, "tensor '%s': n_dims %u is not in 1..4", name, n_dims);
  }
  t->n_dims = static_cast<int>(n_dims);
  int64_t n = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t at = pos_;
    uint64_t ne = 0;
    TERN_RETURN_IF_ERROR(Read(&ne, "dimension"));
    if (ne == 0 || ne > static_cast<uint64_t>(kMaxElements)) {
      return Fail(ErrorCode::kFormat, at, "tensor '%s': ne[%u] = %llu is out of range [1, 2^60]",
                  name, d, static_cast<unsigned long long>(ne));
    }
    t->ne[d] = static_cast<int64_t>(ne);
    if (__builtin_mul_overflow(n, t->ne[d], &n) || n > kMaxElements) {
      return Fail(ErrorCode::kFormat, at, "tensor '%s': element count overflows (over 2^60)", name);
    }
  }
  t->n_elements = n;
  const uint64_t type_at = pos_;
  t->type_field_offset = type_at;
  TERN_RETURN_IF_ERROR(Read(&t->type_id, "tensor type"));
  Result<DType> type = DTypeFromGgufId(t->type_id);
  if (!type.ok()) {
    return Fail(type.status().code(), type_at, "tensor '%s': %s", name,
                type.status().message().c_str());
  }
  t->type = *type;
  if (!RowLengthValid(t->type, t->ne[0])) {
    return Fail(ErrorCode::kFormat, dims_at,
                "tensor '%s': row length ne[0] = %lld is not a multiple of %s's block of %lld",
                name, static_cast<long long>(t->ne[0]), DTypeName(t->type),
                static_cast<long long>(Traits(t->type).block_elems));
  }
  t->n_bytes = static_cast<uint64_t>(StoredBytes(t->type, n));
  TERN_RETURN_IF_ERROR(Read(&t->offset, "tensor data offset"));
  return Status::Ok();
}

// Offsets aligned, bytes inside the file, no two tensors sharing a byte.
Status Parser::CheckTensorPlacement() {
  std::vector<TensorInfo>& ts = f_->tensors_;
  const uint64_t data_size = size_ - f_->data_offset_;
  for (TensorInfo& t : ts) {
    const uint64_t at = t.type_field_offset + 4;  // the offset field
    if (t.offset % f_->alignment_ != 0) {
      return Fail(ErrorCode::kFormat, at,
                  "tensor '%s': data offset %llu is not a multiple of "
                  "the alignment %llu",
                  t.name.c_str(), static_cast<unsigned long long>(t.offset),
                  static_cast<unsigned long long>(f_->alignment_));
    }
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      return Fail(ErrorCode::kFormat, at,
                  "tensor '%s' (%s, %lld elements, %llu bytes) at data offset %llu runs past the "
                  "end of the file (data section holds %llu bytes)",
                  t.name.c_str(), DTypeName(t.type), static_cast<long long>(t.n_elements),
                  static_cast<unsigned long long>(t.n_bytes),
                  static_cast<unsigned long long>(t.offset),
                  static_cast<unsigned long long>(data_size));
    }
    t.data = p_ + f_->data_offset_ + t.offset;
  }
  std::vector<size_t> order(ts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ts[a].offset < ts[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& a = ts[order[k - 1]];
    const TensorInfo& b = ts[order[k]];
    if (a.end_offset() > b.offset) {
      return Fail(ErrorCode::kFormat, b.type_field_offset + 4,
                  "tensor '%s' data [%llu, %llu) overlaps tensor '%s' data [%llu, %llu)",
                  b.name.c_str(), static_cast<unsigned long long>(b.offset),
                  static_cast<unsigned long long>(b.end_offset()), a.name.c_str(),
                  static_cast<unsigned long long>(a.offset),
                  static_cast<unsigned long long>(a.end_offset()));
    }
  }
  return Status::Ok();
}

Status Parser::Run() {
  uint64_t n_tensors = 0, n_kv = 0;
  TERN_RETURN_IF_ERROR(ReadHeader(&n_tensors, &n_kv));
  TERN_RETURN_IF_ERROR(ReadKvs(n_kv));
  f_->tensors_.reserve(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    TensorInfo t;
    TERN_RETURN_IF_ERROR(ReadTensorInfo(&t));
    f_->tensor_index_.emplace(t.name, f_->tensors_.size());
    f_->tensors_.push_back(std::move(t));
  }
  const uint64_t a = f_->alignment_;
  const uint64_t data_offset = (pos_ + a - 1) / a * a;  // pos_ <= size_, so no overflow
  if (data_offset > size_) {
    return Fail(ErrorCode::kFormat, pos_,
                "truncated: the data section would start at offset %llu, past the end of the "
                "file (%zu bytes)",
                static_cast<unsigned long long>(data_offset), size_);
  }
  f_->data_offset_ = data_offset;
  return CheckTensorPlacement();
}

Result<std::unique_ptr<File>> File::Parse(const uint8_t* data, size_t size,
                                          const std::string& name) {
  std::unique_ptr<File> f(new File());
  f->name_ = name;
  f->base_ = data;
  f->size_ = size;
  if (data == nullptr && size != 0) return InvalidArgumentError("%s: null data", name.c_str());
  Parser parser(f.get(), data, size);
  TERN_RETURN_IF_ERROR(parser.Run());
  return f;
}

}  // namespace tern::gguf
