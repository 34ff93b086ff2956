// The two framings of an NRI connection, as bytes (no I/O here):
//
// 1. NRI's multiplexer (containerd/nri pkg/net/multiplex): one unix socket (the "trunk") carries
//    several logical connections. Every frame is an 8-byte header, the connection id and the
//    payload length (both big-endian uint32), then the payload. Connection 1 carries the
//    plugin's service (the runtime calls the plugin), connection 2 the runtime's service (the
//    plugin calls the runtime). A logical connection is a byte stream: one ttrpc message may
//    span several frames. Go's ttrpc reads each frame into a 4096-byte buffer, so podtopo never
//    sends a frame larger than kMuxMaxSendPayload and never puts two messages in one frame.
//
// 2. ttrpc (containerd/ttrpc channel.go) on each logical connection: a 10-byte header, the
//    payload length and the stream id (big-endian uint32), the message type (1 request,
//    2 response, 3 data) and flags, then the payload (a ttrpc Request or Response protobuf).
//    Clients use odd stream ids, from 1 up. Messages over 4 MiB are refused.
//
// Both decoders take bytes as they arrive and hand back complete frames / messages; a
// malformed input is an error naming what is wrong (the length, the type, the connection),
// after which the decoder stays failed (the connection must be closed), never a crash.
//
// Example:
//   MuxDecoder mux;
//   mux.Feed(bytes);                       // from read(2)
//   while (auto f = mux.Next()) { ... }    // absl::StatusOr<std::optional<MuxFrame>>
#ifndef PODTOPO_NRI_TTRPC_H_
#define PODTOPO_NRI_TTRPC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace podtopo::nri {

inline constexpr uint32_t kPluginServiceConn = 1;   // runtime -> plugin requests
inline constexpr uint32_t kRuntimeServiceConn = 2;  // plugin -> runtime requests

inline constexpr size_t kMuxHeaderLength = 8;
inline constexpr size_t kTtrpcHeaderLength = 10;
inline constexpr size_t kTtrpcMaxMessage = 4u << 20;  // ttrpc's messageLengthMax
// The largest payload of a frame the multiplexer accepts (a whole ttrpc message).
inline constexpr size_t kMuxMaxPayload = kTtrpcHeaderLength + kTtrpcMaxMessage;
// The largest frame podtopo sends (Go's ttrpc reads through a 4096-byte bufio.Reader).
inline constexpr size_t kMuxMaxSendPayload = 4096;

enum class MessageType : uint8_t { kRequest = 1, kResponse = 2, kData = 3 };

struct MuxFrame {
  uint32_t conn = 0;
  std::string payload;
};

struct TtrpcMessage {
  uint32_t stream_id = 0;
  MessageType type = MessageType::kRequest;
  uint8_t flags = 0;
  std::string payload;
};

// The frames that carry `bytes` on logical connection `conn`: as many as needed, each at most
// `max_payload` bytes (REQUIRES: max_payload > 0), concatenated.
std::string EncodeMuxFrames(uint32_t conn, std::string_view bytes,
                            size_t max_payload = kMuxMaxSendPayload);

// One ttrpc message: header and payload. Errors: a payload over kTtrpcMaxMessage.
absl::StatusOr<std::string> EncodeTtrpcMessage(const TtrpcMessage& message);

class MuxDecoder {
 public:
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete frame, nullopt when more bytes are needed. Errors (sticky):
  // connection id 0 (reserved) or a payload length over kMuxMaxPayload.
  absl::StatusOr<std::optional<MuxFrame>> Next();
  // Bytes received but not yet returned (a partial frame at EOF is truncation).
  size_t Pending() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  size_t offset_ = 0;
  absl::Status error_;
};

class TtrpcDecoder {
 public:
  explicit TtrpcDecoder(std::string name) : name_(std::move(name)) {}
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete message, nullopt when more bytes are needed. Errors (sticky): a length
  // over kTtrpcMaxMessage, an unknown message type; messages name the connection.
  absl::StatusOr<std::optional<TtrpcMessage>> Next();
  size_t Pending() const { return buffer_.size() - offset_; }

 private:
  std::string name_;
  std::string buffer_;
  size_t offset_ = 0;
  absl::Status error_;
};

}  // namespace podtopo::nri

#endif  // PODTOPO_NRI_TTRPC_H_
