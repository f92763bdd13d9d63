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
ReplyEnvelope DecodeReply(std::string_view bytes);

} // namespace phantora::wire
