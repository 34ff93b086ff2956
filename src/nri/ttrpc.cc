#include "nri/ttrpc.h"

#include "fmt/format.h"

namespace podtopo::nri {
namespace {

void PutU32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>((v >> 24) & 0xff));
  out.push_back(static_cast<char>((v >> 16) & 0xff));
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

uint32_t GetU32(const char* p) {
  auto b = [p](int i) { return static_cast<uint32_t>(static_cast<unsigned char>(p[i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

// Drops consumed bytes once they dominate the buffer.
void Compact(std::string& buffer, size_t& offset) {
  if (offset > 0 && offset * 2 >= buffer.size()) {
    buffer.erase(0, offset);
    offset = 0;
  }
}

}  // namespace

std::string EncodeMuxFrames(uint32_t conn, std::string_view bytes, size_t max_payload) {
  std::string out;
  out.reserve(bytes.size() + (bytes.size() / max_payload + 1) * kMuxHeaderLength);
  size_t pos = 0;
  do {
    size_t n = std::min(max_payload, bytes.size() - pos);
    PutU32(out, conn);
    PutU32(out, static_cast<uint32_t>(n));
    out.append(bytes.substr(pos, n));
    pos += n;
  } while (pos < bytes.size());
  return out;
}

absl::StatusOr<std::string> EncodeTtrpcMessage(const TtrpcMessage& m) {
  if (m.payload.size() > kTtrpcMaxMessage) {
    return absl::ResourceExhaustedError(
        fmt::format("ttrpc message of {} bytes exceeds the maximum of {} bytes", m.payload.size(),
                    kTtrpcMaxMessage));
  }
  std::string out;
  out.reserve(kTtrpcHeaderLength + m.payload.size());
  PutU32(out, static_cast<uint32_t>(m.payload.size()));
  PutU32(out, m.stream_id);
  out.push_back(static_cast<char>(m.type));
  out.push_back(static_cast<char>(m.flags));
  out.append(m.payload);
  return out;
}

absl::StatusOr<std::optional<MuxFrame>> MuxDecoder::Next() {
  if (!error_.ok()) return error_;
  if (Pending() < kMuxHeaderLength) return std::nullopt;
  const char* p = buffer_.data() + offset_;
  uint32_t conn = GetU32(p);
  uint32_t length = GetU32(p + 4);
  if (conn == 0) {
    error_ = absl::DataLossError(
        "NRI multiplexer: frame for connection 0 (reserved); not an NRI peer?");
    return error_;
  }
  if (length > kMuxMaxPayload) {
    error_ = absl::DataLossError(fmt::format(
        "NRI multiplexer: frame of {} bytes on connection {} exceeds the maximum of {} bytes",
        length, conn, kMuxMaxPayload));
    return error_;
  }
  if (Pending() < kMuxHeaderLength + length) return std::nullopt;
  MuxFrame f;
  f.conn = conn;
  f.payload.assign(p + kMuxHeaderLength, length);
  offset_ += kMuxHeaderLength + length;
  Compact(buffer_, offset_);
  return f;
}

absl::StatusOr<std::optional<TtrpcMessage>> TtrpcDecoder::Next() {
  if (!error_.ok()) return error_;
  if (Pending() < kTtrpcHeaderLength) return std::nullopt;
  const char* p = buffer_.data() + offset_;
  uint32_t length = GetU32(p);
  uint32_t stream = GetU32(p + 4);
  uint8_t type = static_cast<uint8_t>(p[8]);
  if (length > kTtrpcMaxMessage) {
    error_ = absl::DataLossError(fmt::format(
        "ttrpc on {}: message of {} bytes on stream {} exceeds the maximum of {} bytes", name_,
        length, stream, kTtrpcMaxMessage));
    return error_;
  }
  if (type < 1 || type > 3) {
    error_ = absl::DataLossError(fmt::format(
        "ttrpc on {}: unknown message type {} on stream {} (1 request, 2 response, 3 data)",
        name_, type, stream));
    return error_;
  }
  if (Pending() < kTtrpcHeaderLength + length) return std::nullopt;
  TtrpcMessage m;
  m.stream_id = stream;
  m.type = static_cast<MessageType>(type);
  m.flags = static_cast<uint8_t>(p[9]);
  m.payload.assign(p + kTtrpcHeaderLength, length);
  offset_ += kTtrpcHeaderLength + length;
  Compact(buffer_, offset_);
  return m;
}

}  // namespace podtopo::nri
