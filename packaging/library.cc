// libtern.so's own translation unit. Everything in the library comes from the engine's
// static layers, linked whole (packaging/CMakeLists.txt); tern.map decides what is visible.
// CMake needs a source to make a shared library, and this one checks that the public header
// compiles on its own, with nothing but the standard library before it.
#include "tern/tern.h"
