#include "curve_keys.h"

#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <zmq.h>

namespace phantora::wire
{

namespace
{

constexpr std::size_t kZ85KeyChars = 40;

std::string ReadKey(const std::filesystem::path& file)
{
    std::ifstream in(file);
    if (!in)
    {
        throw std::runtime_error(file.string() + ": cannot read the CURVE key");
    }
    std::string key;
    in >> key;
    if (key.size() != kZ85KeyChars)
    {
        throw std::runtime_error(file.string() + ": not a Z85 CURVE key (expected " +
                                 std::to_string(kZ85KeyChars) + " characters, found " +
                                 std::to_string(key.size()) + ")");
    }
    return key;
}

void WriteKey(const std::filesystem::path& file, const std::string& key, bool secret)
{
    {
        std::ofstream out(file);
        out << key << "\n";
        if (!out)
        {
            throw std::runtime_error(file.string() + ": cannot write the CURVE key");
        }
    }
    if (secret)
    {
        chmod(file.c_str(), 0600);
    }
}

} // namespace

std::pair<std::string, std::string> NewCurveKeyPair()
{
    if (!zmq_has("curve"))
    {
        throw std::runtime_error("this libzmq was built without CURVE (libsodium): --keys is "
                                 "not available");
    }
    char pub[kZ85KeyChars + 1];
    char sec[kZ85KeyChars + 1];
    if (zmq_curve_keypair(pub, sec) != 0)
    {
        throw std::runtime_error(std::string("zmq_curve_keypair: ") + zmq_strerror(zmq_errno()));
    }
    return {pub, sec};
}

CurveKeys LoadOrCreateCurveKeys(const std::filesystem::path& dir)
{
    if (!std::filesystem::exists(dir / "server.secret"))
    {
        std::filesystem::create_directories(dir);
        const auto [sp, ss] = NewCurveKeyPair();
        const auto [cp, cs] = NewCurveKeyPair();
        WriteKey(dir / "server.pub", sp, false);
        WriteKey(dir / "server.secret", ss, true);
        WriteKey(dir / "client.pub", cp, false);
        WriteKey(dir / "client.secret", cs, true);
    }
    CurveKeys k = LoadRankCurveKeys(dir);
    k.serverSecret = ReadKey(dir / "server.secret");
    return k;
}

CurveKeys LoadRankCurveKeys(const std::filesystem::path& dir)
{
    if (!zmq_has("curve"))
    {
        throw std::runtime_error("this libzmq was built without CURVE (libsodium): --keys is "
                                 "not available");
    }
    CurveKeys k;
    k.serverPublic = ReadKey(dir / "server.pub");
    k.clientPublic = ReadKey(dir / "client.pub");
    k.clientSecret = ReadKey(dir / "client.secret");
    return k;
}

} // namespace phantora::wire
