// Tests: a GGUF built with a Writer, serialized and parsed back as "m.gguf", so a reader of
// KV pairs can be tried on exactly the keys a test sets.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "gguf/gguf.h"
#include "gguf/writer.h"

namespace tern::gguf {

struct Parsed {
  std::string bytes;  // the file's bytes, which `file` refers to
  std::unique_ptr<File> file;
};

inline Parsed ParseWritten(const Writer& w) {
  Parsed p;
  p.bytes = w.Serialize();
  Result<std::unique_ptr<File>> f =
      File::Parse(reinterpret_cast<const uint8_t*>(p.bytes.data()), p.bytes.size(), "m.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (f.ok()) p.file = std::move(*f);
  return p;
}

}  // namespace tern::gguf
