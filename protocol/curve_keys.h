// ZeroMQ CURVE keys of a networked run (phantora-cluster --serve --keys DIR): the
// bridge's key pair and the one key pair every rank presents.  Keys are Z85 text
// (40 characters), one per file: server.pub, server.secret, client.pub,
// client.secret.  The whole folder is copied to the rank hosts; a rank whose
// client key is not DIR's is refused by the bridge.
#pragma once

#include <filesystem>
#include <string>

namespace phantora::wire
{

struct CurveKeys
{
    std::string serverPublic;
    std::string serverSecret; ///< empty on a rank's side (not needed there)
    std::string clientPublic;
    std::string clientSecret;
};

/// Reads DIR's four keys, or creates them (mode 0600 for the secrets) if DIR has none.
/// Throws std::runtime_error naming the file that is missing or malformed.
CurveKeys LoadOrCreateCurveKeys(const std::filesystem::path& dir);

/// Reads what a rank needs (server.pub, client.pub, client.secret); throws
/// std::runtime_error naming the file that is missing or malformed.
CurveKeys LoadRankCurveKeys(const std::filesystem::path& dir);

/// A fresh Z85 key pair (public, secret); throws if libzmq lacks CURVE.
std::pair<std::string, std::string> NewCurveKeyPair();

} // namespace phantora::wire
