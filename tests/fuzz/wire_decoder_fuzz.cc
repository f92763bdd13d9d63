// libFuzzer target for the wire decoder, both directions: any bytes either decode or are
// refused with DecodeError (never another exception, a crash or an unbounded allocation),
// and what decodes encodes again to bytes that decode.  The first byte picks the
// direction: a rank's request as the bridge reads it, or a reply as a rank reads it.
#include "protocol/codec.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace phantora::wire;

namespace
{

template <class Envelope> void RoundTrip(const Envelope& m, Envelope (*decode)(std::string_view))
{
    const std::string again = Encode(m);
    (void)decode(again); // throws (and the fuzzer reports it) if our own bytes are refused
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    if (size == 0)
    {
        return 0;
    }
    const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    try
    {
        if (data[0] & 1)
        {
            RoundTrip(DecodeRequest(bytes), &DecodeRequest);
        }
        else
        {
            RoundTrip(DecodeReply(bytes), &DecodeReply);
        }
    }
    catch (const DecodeError&)
    {
        // refused with a reason: what the decoder must do with bytes that are not ours
    }
    return 0;
}
