// Writes the wire decoder fuzzer's seed corpus: one encoded message of every request and
// reply kind (as the tests send them), each prefixed with the byte that selects its
// direction in wire_decoder_fuzz.cc.
//
// usage: phantora-wire-seeds DIRECTORY
#include "protocol/codec.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

using namespace phantora::wire;

namespace
{

template <class Variant, std::size_t I = 0> void EachKind(const auto& write)
{
    if constexpr (I < std::variant_size_v<Variant>)
    {
        write(Variant{std::in_place_index<I>}, I);
        EachKind<Variant, I + 1>(write);
    }
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::fprintf(stderr, "usage: phantora-wire-seeds DIRECTORY\n");
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    auto save = [&dir](const std::string& name, char direction, const std::string& bytes)
    { std::ofstream(dir / name, std::ios::binary) << direction << bytes; };
    EachKind<Request>(
        [&](Request r, std::size_t kind) {
            save("request-" + std::to_string(kind), '\1', Encode(RequestEnvelope{1, 2, r, 3, 4}));
        });
    EachKind<Reply>(
        [&](Reply r, std::size_t kind) {
            save("reply-" + std::to_string(kind), '\0', Encode(ReplyEnvelope{5, r}));
        });
    // a few with contents: a kernel launch, a collective with values, a P2P group, a Welcome
    save("request-kernel", '\1',
         Encode(RequestEnvelope{
             1, 2,
             KernelLaunch{1, "ampere_sgemm_128x64_nn", {8, 4, 1}, {256, 1, 1}, 1024, "0=1", ""}}));
    save("request-collective", '\1',
         Encode(
             RequestEnvelope{1, 2,
                             NcclCollective{7, CollectiveOp::AllReduce, 16, 3, 0, DataType::Float32,
                                            RedOp::Sum, true, std::string(16, '\1')}}));
    save("request-p2p", '\1',
         Encode(RequestEnvelope{1, 2, NcclP2P{7, 3, {{1, 8, true, true, "12345678"}, {2, 8}}}}));
    Welcome w;
    w.gpuName = "NVIDIA H200";
    w.hostTimeTableBytes = 3 << 20;
    save("reply-welcome", '\0', Encode(ReplyEnvelope{1, w}));
    save("reply-table", '\0', Encode(ReplyEnvelope{2, TableData{std::string(64, 'g')}}));
    return 0;
}
