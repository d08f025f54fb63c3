#include "multipart.h"

#include <algorithm>
#include <cctype>

namespace tern::server {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The value of `key=` in a header's `; key=value` parameters (quotes removed), if present.
bool Param(std::string_view header, std::string_view key, std::string* out) {
  size_t at = 0;
  while ((at = header.find(';', at)) != std::string_view::npos) {
    std::string_view rest = Trim(header.substr(at + 1));
    at += 1;
    const size_t eq = rest.find('=');
    if (eq == std::string_view::npos || Lower(Trim(rest.substr(0, eq))) != key) continue;
    std::string_view v = Trim(rest.substr(eq + 1));
    if (!v.empty() && v.front() == '"') {
      // a quoted string: up to the next unescaped quote
      std::string s;
      for (size_t i = 1; i < v.size() && v[i] != '"'; ++i) {
        if (v[i] == '\\' && i + 1 < v.size()) ++i;
        s.push_back(v[i]);
      }
      *out = std::move(s);
    } else {
      *out = std::string(v.substr(0, v.find(';')));
      while (!out->empty() && (out->back() == ' ' || out->back() == '\t')) out->pop_back();
    }
    return true;
  }
  return false;
}

}  // namespace

Result<std::string> MultipartBoundary(std::string_view content_type) {
  const std::string type = Lower(Trim(content_type.substr(0, content_type.find(';'))));
  if (type != "multipart/form-data")
    return InvalidArgumentError("expected a multipart/form-data body with a 'file' field");
  std::string boundary;
  if (!Param(content_type, "boundary", &boundary) || boundary.empty() || boundary.size() > 200)
    return InvalidArgumentError("the multipart/form-data Content-Type names no boundary");
  return boundary;
}

Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary,
                                             size_t max_parts) {
  const std::string delim = "--" + std::string(boundary);
  const std::string next = "\r\n" + delim;
  std::vector<FormPart> parts;
  // The preamble before the first boundary is ignored (RFC 2046).
  size_t at;
  if (body.substr(0, delim.size()) == delim)
    at = delim.size();
  else {
    at = body.find(next);
    if (at == std::string_view::npos)
      return InvalidArgumentError("the multipart body has no boundary '%.80s'", delim.c_str());
    at += next.size();
  }
  for (;;) {
    // After a boundary: "--" ends the body, CRLF starts a part.
    if (body.substr(at, 2) == "--") return parts;
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.substr(at, 2) != "\r\n")
      return InvalidArgumentError("the multipart body is malformed after a boundary");
    at += 2;
    if (parts.size() == max_parts)
      return InvalidArgumentError("the multipart body has more than %zu parts", max_parts);
    const size_t headers_end = body.find("\r\n\r\n", at);
    if (headers_end == std::string_view::npos || headers_end - at > 8192)
      return InvalidArgumentError("a multipart part's headers do not end (or exceed 8 KiB)");
    FormPart part;
    bool named = false;
    std::string_view headers = body.substr(at, headers_end - at);
    while (!headers.empty()) {
      const size_t eol = headers.find("\r\n");
      const std::string_view line = headers.substr(0, eol);
      headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      if (Lower(Trim(line.substr(0, colon))) != "content-disposition") continue;
      const std::string_view value = line.substr(colon + 1);
      named = Param(value, "name", &part.name);
      Param(value, "filename", &part.filename);
    }
    if (!named) return InvalidArgumentError("a multipart part has no Content-Disposition name");
    const size_t content_begin = headers_end + 4;
    const size_t content_end = body.find(next, content_begin);
    if (content_end == std::string_view::npos)
      return InvalidArgumentError("the multipart body ends without its closing boundary");
    part.content = body.substr(content_begin, content_end - content_begin);
    parts.push_back(std::move(part));
    at = content_end + next.size();
  }
}

}  // namespace tern::server
