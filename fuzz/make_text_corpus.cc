// Writes the seed corpora of segments_fuzz and tokenizer_fuzz: short model answers (valid
// JSON, fenced, escaped, truncated, the 7B keys) and short texts (English, digits,
// contractions, whitespace runs, multi-byte characters, one invalid byte).
// Usage: make_text_corpus SEGMENTS_DIR TOKENIZER_DIR
#include <cstdio>
#include <string>
#include <vector>

namespace {

bool Save(const std::string& dir, const std::vector<std::string>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string path = dir + "/seed-" + std::to_string(i);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      std::perror(path.c_str());
      return false;
    }
    const bool ok = std::fwrite(items[i].data(), 1, items[i].size(), f) == items[i].size();
    if (std::fclose(f) != 0 || !ok) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_text_corpus SEGMENTS_DIR TOKENIZER_DIR\n");
    return 2;
  }
  const std::vector<std::string> segments = {
      R"([{"Start":0,"End":12.24,"Speaker":0,"Content":"Hello there."}])",
      R"([{"Start":0,"End":1.5,"Speaker":0,"Content":"a"},{"Start":1.5,"End":3,"Speaker":1,"Content":"b"}])",
      "```json\n[{\"Start\":0,\"End\":2,\"Content\":\"fenced\"}]\n```",
      R"([{"Start time":"0.00","End time":"4.10","Speaker ID":"1","Content":"seven b"}])",
      R"([{"Start":0,"Content":"esc \" \\ \n \u00e9 \ud83d\ude00 \ud800 x"}])",
      R"([{"Start":0,"End":1,"Content":"cut off in the mid)",
      R"([{"Start":0,"Content":"a"},{"Start":1,"End")",
      R"([ { "start" : 1e2 , "end" : -1 , "speaker" : 2 , "text" : "" , "extra" : [1,{"x":[]}] } ])",
      "Concord returned to its place.",
      "[]",
  };
  const std::vector<std::string> texts = {
      "system\nYou are a helpful assistant that transcribes audio input into text output in "
      "JSON format.",
      "\nThis is a 11.00 seconds audio, please transcribe it.",
      "I'm sure they'll say it's 12345 or 1,000,000.",
      "  leading\t\ttabs \r\n\n\n trailing   ",
      "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80!! <|endoftext|> $x+y<=z^2|~",
      "\xE2\x80\x83\xC2\xA0non-ASCII spaces\xE3\x80\x80",
      "bad \xC3 byte",
  };
  const bool ok = Save(argv[1], segments) && Save(argv[2], texts);
  if (!ok) return 1;
  std::printf("make_text_corpus: wrote %zu + %zu seeds\n", segments.size(), texts.size());
  return 0;
}
