// Whether a ZeroMQ endpoint the bridge listens on can be reached only from this host.
// Anything else is across the network, where a rank must be authenticated (CURVE keys):
// a launched run's token or a served run's bare hello would travel in clear text there.
#pragma once

#include <string_view>

namespace phantora
{

/// True for a loopback host: "localhost", an IPv4 address of 127.0.0.0/8, "::1" ("[::1]").
/// A wildcard ("*", "0.0.0.0"), an interface name or any other address is not one.
bool IsLoopbackHost(std::string_view host);

/// True for "tcp://HOST:PORT" with a loopback HOST, and for ipc:// and inproc://
/// endpoints, which never leave the host.
bool IsLoopbackEndpoint(std::string_view endpoint);

} // namespace phantora
