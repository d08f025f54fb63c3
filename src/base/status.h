// Status / Result live in the public API (include/tern/status.h): the library reports
// errors to its users with the same type it uses inside.
#pragma once

#include "tern/status.h"
