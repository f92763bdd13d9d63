// Byte encoding of the wire messages (cereal, portable binary) with a magic and a
// version in front, so that a foreign or stale peer is rejected with a reason
// instead of being misread.
#pragma once

#include "messages.h"

#include <stdexcept>
#include <string>
#include <string_view>

namespace phantora::wire
{

class DecodeError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

std::string Encode(const RequestEnvelope& m);
std::string Encode(const ReplyEnvelope& m);
RequestEnvelope DecodeRequest(std::string_view bytes);
/// The longest encoding of a request (reply) of kind \p kind, its index in Request (Reply),
/// envelope included: what DecodeRequest (DecodeReply) accepts of that kind; 0 for no kind.
std::size_t MaxRequestBytes(std::size_t kind);
std::size_t MaxReplyBytes(std::size_t kind);
ReplyEnvelope DecodeReply(std::string_view bytes);

} // namespace phantora::wire
