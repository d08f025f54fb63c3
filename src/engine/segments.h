// Reading the model's JSON answer into segments.
//
// In its JSON form the model answers `[{"Start":0,"End":12.24,"Speaker":0,"Content":"..."}]`
// (the 7B model's keys "Start time", "End time", "Speaker ID" are accepted too). Model output
// is not always valid JSON: the parser tolerates whitespace anywhere, a ```json fence,
// escapes (\" \\ \n \uXXXX with surrogate pairs), numbers given as strings, unknown keys,
// and a truncated last item (an object cut off inside its Content keeps what was written).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tern/tern.h"

namespace tern::engine {

// Returns true and fills `segments` when `text` (after trimming) holds a JSON array of
// segment objects with at least one Content; false otherwise (the caller then treats the
// text as one plain segment).
bool ParseJsonSegments(std::string_view text, std::vector<Segment>* segments);

// `s` without leading and trailing spaces, tabs and line breaks.
std::string TrimText(std::string_view s);

}  // namespace tern::engine
