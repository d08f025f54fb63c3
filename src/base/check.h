// TERN_CHECK: aborts on a broken internal invariant (a programmer error, never user input).
// Anything a user or a file can cause returns a Status instead (base/status.h).
#pragma once

#include <cstdio>
#include <cstdlib>

#define TERN_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: TERN_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

#ifdef NDEBUG
#define TERN_DCHECK(cond) ((void)0)
#else
#define TERN_DCHECK(cond) TERN_CHECK(cond)
#endif
