// The page GET / serves (static/index.html: plain HTML and JavaScript, no build step),
// compiled in by static/embed.cmake so the server needs no files at run time.
#pragma once

namespace tern::server {
extern const char kIndexHtml[];
}  // namespace tern::server
