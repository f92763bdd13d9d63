#include "leave_out.h"

#include "profile_writer.h"
#include "sqlite_handle.h"

#include <fmt/format.h>
#include <map>
#include <set>
#include <system_error>

namespace phantora::profile
{

namespace
{

std::string Listing(const std::map<std::string, std::vector<std::string>>& byProgram)
{
    if (byProgram.empty())
    {
        return "it names no program (a profile imported before the runs table: gpu_profiler "
               "label-runs names them)";
    }
    std::string out = "its programs:";
    for (const auto& [program, runs] : byProgram)
    {
        out += fmt::format("\n  {} ({} run{})", program, runs.size(), runs.size() == 1 ? "" : "s");
    }
    return out;
}

/// Removes the unfinished copy unless Keep() is called: a failed leave-out leaves no file
/// that looks like a profile.
class RemoveUnlessKept
{
public:
    explicit RemoveUnlessKept(std::filesystem::path file) : m_file(std::move(file)) {}
    ~RemoveUnlessKept()
    {
        if (!m_kept)
        {
            std::error_code ec;
            std::filesystem::remove(m_file, ec);
        }
    }
    RemoveUnlessKept(const RemoveUnlessKept&) = delete;
    RemoveUnlessKept& operator=(const RemoveUnlessKept&) = delete;
    void Keep() { m_kept = true; }

private:
    std::filesystem::path m_file;
    bool m_kept{false};
};

} // namespace

LeaveOutResult LeaveOut(const std::filesystem::path& in, const std::filesystem::path& out,
                        const std::vector<std::string>& programs)
{
    if (!std::filesystem::is_regular_file(in))
    {
        throw ProfileError(fmt::format("profile {}: no such file", in.string()));
    }
    std::error_code ec;
    if (std::filesystem::equivalent(in, out, ec))
    {
        throw ProfileError(fmt::format("profile {}: --out names the same file; leave-out "
                                       "writes a copy and never changes its input",
                                       in.string()));
    }
    if (programs.empty())
    {
        throw ProfileError(fmt::format("profile {}: name a program to leave out", in.string()));
    }
    // The copy is written beside \p out and renamed over it when complete, so a reader of
    // \p out never sees half a profile.
    std::filesystem::path partial = out;
    partial += ".partial";
    std::filesystem::remove(partial);
    RemoveUnlessKept cleanup(partial);
    {
        // A consistent snapshot whatever journal mode \p in uses, and read-only on it.
        const SqliteDb source(in, true);
        SqliteStatement copy(source, "VACUUM INTO ?1");
        copy.Bind(1, partial.string());
        copy.Step();
    }

    LeaveOutResult result;
    {
        ProfileWriter w(partial);
        const auto byProgram = w.RunsByProgram();
        const std::set<std::string> chosen(programs.begin(), programs.end());
        for (const std::string& program : chosen)
        {
            if (!byProgram.count(program))
            {
                throw ProfileError(fmt::format("profile {}: no run of program \"{}\" (the runs "
                                               "table's program column); {}",
                                               in.string(), program, Listing(byProgram)));
            }
        }
        std::set<int64_t> touched;
        for (const std::string& program : chosen)
        {
            for (const std::string& run : byProgram.at(program))
            {
                const auto removed = w.RemoveRun(run);
                result.runs.push_back(
                    {run, program, removed.samples, removed.gaps, removed.readbacks});
                touched.insert(removed.ops.begin(), removed.ops.end());
            }
        }
        for (int64_t op : touched)
        {
            const auto r = w.RestatOp(op);
            if (!r.kept)
            {
                ++result.opsDropped;
                continue;
            }
            ++result.opsRecomputed;
            result.opsMedianChanged += r.medianAfterNs != r.medianBeforeNs ? 1 : 0;
        }
        result.labelsDropped = w.DropUnusedHostLabels();
        w.SetMetadata("left_out_programs", fmt::format("{}", fmt::join(chosen, " ")));
        result.opsKept = w.OpCount();
        w.Commit();
    }
    std::filesystem::rename(partial, out);
    cleanup.Keep();
    return result;
}

} // namespace phantora::profile
