// multipart/form-data bodies (RFC 7578), as browsers and OpenAI's SDKs send transcription
// forms. The parts are views into the body: the body must outlive them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tern/tern.h"

namespace tern::server {

struct FormPart {
  std::string name;      // Content-Disposition's name
  std::string filename;  // and filename, empty when absent
  std::string_view content;
};

// The boundary of a Content-Type header such as `multipart/form-data; boundary=xyz`
// (quoted or not); an InvalidArgument error when the type is not multipart/form-data or
// names no boundary.
Result<std::string> MultipartBoundary(std::string_view content_type);

// Splits a body into its parts. At most max_parts parts; a missing closing boundary, a part
// without a Content-Disposition name or headers over 8 KiB are errors that say which.
Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary,
                                             size_t max_parts = 256);

}  // namespace tern::server
