// KV pairs added to an existing GGUF (tern-dev convert --set-*): a new header, the same tensors.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "gguf/writer.h"

namespace tern::gguf {

Status RewriteWithKvs(const std::string& input, const std::string& output,
                      const std::vector<std::pair<std::string, Value>>& set) {
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<File> in, File::Open(input));
  TypeIds ids = TypeIds::kPublished;
  for (const TensorInfo& t : in->tensors()) {
    if ((t.type == DType::kI2_S || t.type == DType::kI8_S) &&
        t.type_id == GgufIdFromDType(t.type, TypeIds::kRemapped)) {
      ids = TypeIds::kRemapped;
    }
  }
  if (in->alignment() > UINT32_MAX)
    return UnsupportedError("%s: alignment too large", input.c_str());
  Writer w(ids, static_cast<uint32_t>(in->alignment()));
  for (const auto& [key, value] : in->kv()) w.SetValue(key, value);
  for (const auto& [key, value] : set) w.SetValue(key, value);
  for (const TensorInfo& t : in->tensors()) {
    TERN_RETURN_IF_ERROR(w.AddTensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims),
                                     std::vector<uint8_t>(t.data, t.data + t.n_bytes)));
  }
  struct stat st;
  if (::stat(input.c_str(), &st) != 0)
    return IoError("%s: cannot stat: %s", input.c_str(), std::strerror(errno));
  // Replace what a symlink points to, not the link itself.
  std::string dest = output;
  if (char* real = ::realpath(output.c_str(), nullptr)) {
    dest = real;
    std::free(real);
  }
  const std::string tmp = dest + ".tmp." + std::to_string(::getpid());
  auto fail = [&tmp](Status s) {
    ::unlink(tmp.c_str());
    return s;
  };
  Status s = w.WriteTo(tmp);
  if (!s.ok()) return fail(s);
  if (::chmod(tmp.c_str(), st.st_mode & 07777) != 0)
    return fail(IoError("%s: cannot set its mode: %s", tmp.c_str(), std::strerror(errno)));
  // The copy must hold the same tensors, byte for byte, and the new values.
  Result<std::unique_ptr<File>> out = File::Open(tmp);
  if (!out.ok()) return fail(out.status().WithPrefix("the rewritten copy does not parse"));
  if ((*out)->tensors().size() != in->tensors().size())
    return fail(InternalError("%s: the rewritten copy has a different tensor count", tmp.c_str()));
  for (size_t k = 0; k < in->tensors().size(); ++k) {
    const TensorInfo& a = in->tensors()[k];
    const TensorInfo& b = (*out)->tensors()[k];
    if (a.name != b.name || a.type_id != b.type_id || a.n_bytes != b.n_bytes ||
        std::memcmp(a.data, b.data, a.n_bytes) != 0) {
      return fail(InternalError("%s: tensor '%s' changed in the rewritten copy", tmp.c_str(),
                                a.name.c_str()));
    }
  }
  for (const auto& [key, value] : set) {
    const Value* v = (*out)->Find(key);
    if (v == nullptr || !(*v == value))
      return fail(
          InternalError("%s: key '%s' did not come out as written", tmp.c_str(), key.c_str()));
  }
  out->reset();
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    return fail(IoError("%s: cannot rename %s over it: %s", dest.c_str(), tmp.c_str(),
                        std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace tern::gguf
