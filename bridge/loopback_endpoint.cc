#include "loopback_endpoint.h"

#include <arpa/inet.h>
#include <string>

namespace phantora
{

bool IsLoopbackHost(std::string_view host)
{
    if (host == "localhost" || host == "::1" || host == "[::1]")
    {
        return true;
    }
    in_addr v4{};
    const std::string text(host);
    // inet_pton takes only the dotted quad: no "127.1", no leading zeros read as octal
    return inet_pton(AF_INET, text.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

bool IsLoopbackEndpoint(std::string_view endpoint)
{
    if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0)
    {
        return true;
    }
    constexpr std::string_view kTcp = "tcp://";
    if (endpoint.rfind(kTcp, 0) != 0)
    {
        return false;
    }
    std::string_view address = endpoint.substr(kTcp.size());
    // ZeroMQ's "tcp://SOURCE;HOST:PORT" connects from SOURCE: the host bound is after it
    if (const auto semicolon = address.find(';'); semicolon != std::string_view::npos)
    {
        address = address.substr(semicolon + 1);
    }
    const auto colon = address.rfind(':');
    return colon != std::string_view::npos && IsLoopbackHost(address.substr(0, colon));
}

} // namespace phantora
