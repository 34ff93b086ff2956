#include "nri/ttrpc.h"

#include <string>

#include "gtest/gtest.h"
#include "testing/property.h"

namespace podtopo::nri {
namespace {

std::string Bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

TEST(MuxFrames, HeaderIsConnectionIdThenLengthBigEndian) {
  std::string f = EncodeMuxFrames(2, "abc");
  EXPECT_EQ(f, Bytes({0, 0, 0, 2, 0, 0, 0, 3}) + "abc");
}

TEST(MuxFrames, LargePayloadIsSplitIntoFramesOfAtMost4096Bytes) {
  std::string payload(10000, 'x');
  std::string f = EncodeMuxFrames(1, payload);
  MuxDecoder d;
  d.Feed(f);
  std::vector<size_t> sizes;
  std::string joined;
  for (;;) {
    auto fr = d.Next();
    ASSERT_TRUE(fr.ok()) << fr.status();
    if (!fr->has_value()) break;
    EXPECT_EQ((*fr)->conn, 1u);
    sizes.push_back((*fr)->payload.size());
    joined += (*fr)->payload;
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{4096, 4096, 1808}));
  EXPECT_EQ(joined, payload);
  EXPECT_EQ(d.Pending(), 0u);
}

TEST(MuxFrames, EmptyPayloadIsOneEmptyFrame) {
  EXPECT_EQ(EncodeMuxFrames(1, ""), Bytes({0, 0, 0, 1, 0, 0, 0, 0}));
}

TEST(MuxDecoder, WaitsForCompleteFrames) {
  std::string f = EncodeMuxFrames(1, "hello");
  MuxDecoder d;
  for (size_t i = 0; i + 1 < f.size(); ++i) {
    d.Feed(f.substr(i, 1));
    auto fr = d.Next();
    ASSERT_TRUE(fr.ok());
    EXPECT_FALSE(fr->has_value()) << "after " << i + 1 << " bytes";
  }
  d.Feed(f.substr(f.size() - 1));
  auto fr = d.Next();
  ASSERT_TRUE(fr.ok() && fr->has_value());
  EXPECT_EQ((*fr)->payload, "hello");
}

TEST(MuxDecoder, ReservedConnectionZeroIsAnErrorAndSticks) {
  MuxDecoder d;
  d.Feed(Bytes({0, 0, 0, 0, 0, 0, 0, 1}) + "x");
  auto fr = d.Next();
  ASSERT_FALSE(fr.ok());
  EXPECT_NE(fr.status().message().find("connection 0"), std::string::npos) << fr.status();
  d.Feed(EncodeMuxFrames(1, "ok"));
  EXPECT_FALSE(d.Next().ok()) << "a failed decoder stays failed";
}

TEST(MuxDecoder, OversizedFrameIsAnErrorNamingTheLength) {
  MuxDecoder d;
  d.Feed(Bytes({0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}));
  auto fr = d.Next();
  ASSERT_FALSE(fr.ok());
  EXPECT_NE(fr.status().message().find("2147483647 bytes on connection 1"), std::string::npos)
      << fr.status();
}

TEST(Ttrpc, MessageHeaderLayout) {
  TtrpcMessage m;
  m.stream_id = 3;
  m.type = MessageType::kResponse;
  m.flags = 0;
  m.payload = "pq";
  auto b = EncodeTtrpcMessage(m);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, Bytes({0, 0, 0, 2, 0, 0, 0, 3, 2, 0}) + "pq");
}

TEST(Ttrpc, OversizedMessageIsRefusedOnBothSides) {
  TtrpcMessage m;
  m.payload.assign(kTtrpcMaxMessage + 1, 'a');
  EXPECT_EQ(EncodeTtrpcMessage(m).status().code(), absl::StatusCode::kResourceExhausted);
  TtrpcDecoder d("test");
  d.Feed(Bytes({0x00, 0x40, 0x00, 0x01, 0, 0, 0, 1, 1, 0}));
  auto r = d.Next();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("4194305 bytes on stream 1"), std::string::npos) << r.status();
}

TEST(Ttrpc, UnknownMessageTypeIsAnError) {
  TtrpcDecoder d("conn 1");
  d.Feed(Bytes({0, 0, 0, 0, 0, 0, 0, 1, 9, 0}));
  auto r = d.Next();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown message type 9"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("conn 1"), std::string::npos) << r.status();
}

// Messages split across mux frames at arbitrary points come back whole and in order.
PODTOPO_PROPERTY(TtrpcOverMux, AnySplitRoundTrips, (std::vector<std::string> payloads, size_t chunk)) {
  size_t max = 1 + chunk % 50;
  std::string stream;
  for (size_t i = 0; i < payloads.size(); ++i) {
    TtrpcMessage m;
    m.stream_id = static_cast<uint32_t>(2 * i + 1);
    m.type = MessageType::kRequest;
    m.payload = payloads[i];
    stream += EncodeMuxFrames(kPluginServiceConn, EncodeTtrpcMessage(m).value(), max);
  }
  MuxDecoder mux;
  TtrpcDecoder dec("p");
  std::vector<std::string> got;
  for (size_t off = 0; off < stream.size(); off += 7) {
    mux.Feed(std::string_view(stream).substr(off, 7));
    for (;;) {
      auto fr = mux.Next();
      RC_ASSERT(fr.ok());
      if (!fr->has_value()) break;
      dec.Feed((*fr)->payload);
      for (;;) {
        auto m = dec.Next();
        RC_ASSERT(m.ok());
        if (!m->has_value()) break;
        RC_ASSERT((*m)->stream_id == 2 * got.size() + 1);
        got.push_back((*m)->payload);
      }
    }
  }
  RC_ASSERT(got == payloads);
}

// Arbitrary bytes never crash the decoders: each either waits, decodes or fails cleanly.
PODTOPO_PROPERTY(TtrpcOverMux, GarbageNeverCrashes, (std::string bytes)) {
  MuxDecoder mux;
  mux.Feed(bytes);
  TtrpcDecoder dec("g");
  dec.Feed(bytes);
  for (int i = 0; i < 64; ++i) {
    auto fr = mux.Next();
    if (!fr.ok() || !fr->has_value()) break;
  }
  for (int i = 0; i < 64; ++i) {
    auto m = dec.Next();
    if (!m.ok() || !m->has_value()) break;
  }
  RC_SUCCEED("no crash");
}

}  // namespace
}  // namespace podtopo::nri
