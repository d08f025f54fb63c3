#include "multipart.h"

#include <gtest/gtest.h>

namespace tern::server {
namespace {

TEST(Multipart, Boundary) {
  EXPECT_EQ(*MultipartBoundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(*MultipartBoundary("Multipart/Form-Data;boundary=\"a b;c\""), "a b;c");
  EXPECT_FALSE(MultipartBoundary("application/x-www-form-urlencoded").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/form-data").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary=").ok());
}

TEST(Multipart, PartsAndTheirBytes) {
  static const char kBody[] =
      "preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
      "Content-Type: audio/wav\r\n\r\nRIFF\r\n--X\0y\r\n--XyZ\r\ncontent-disposition: form-data; "
      "name=response_format\r\n\r\ntext\r\n--XyZ--\r\n";
  const std::string with_nul(kBody, sizeof kBody - 1);
  Result<std::vector<FormPart>> parts = ParseMultipart(with_nul, "XyZ");
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "file");
  EXPECT_EQ((*parts)[0].filename, "a.wav");
  EXPECT_EQ((*parts)[0].content,
            std::string_view("RIFF\r\n--X\0y", 11));  // a near-boundary inside content stays
  EXPECT_EQ((*parts)[1].name, "response_format");
  EXPECT_EQ((*parts)[1].content, "text");
}

TEST(Multipart, MalformedBodiesSayWhy) {
  auto err = [](const std::string& body) {
    Result<std::vector<FormPart>> r = ParseMultipart(body, "b");
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(err("no boundary here").find("no boundary"), std::string::npos);
  EXPECT_NE(err("--b\r\nContent-Disposition: form-data; name=x\r\n\r\nvalue").find("closing"),
            std::string::npos);
  EXPECT_NE(err("--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--").find("name"),
            std::string::npos);
  EXPECT_NE(
      err("--b\r\nContent-Disposition: form-data; name=x" + std::string(9000, ' ')).find("8 KiB"),
      std::string::npos);
  std::string many;
  for (int i = 0; i < 5; ++i) many += "--b\r\nContent-Disposition: form-data; name=x\r\n\r\nv\r\n";
  many += "--b--";
  Result<std::vector<FormPart>> r = ParseMultipart(many, "b", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than 4 parts"), std::string::npos);
  EXPECT_EQ(ParseMultipart(many, "b", 5)->size(), 5u);
}

}  // namespace
}  // namespace tern::server
