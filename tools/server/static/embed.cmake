# Writes OUT, a source file defining kIndexHtml (static_page.h) as IN's text.
file(READ "${IN}" content)
file(WRITE "${OUT}.tmp" "// Generated from tools/server/static/index.html by static/embed.cmake.\n#include \"static_page.h\"\nnamespace tern::server {\nconst char kIndexHtml[] = R\"tern_page(${content})tern_page\";\n}  // namespace tern::server\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
