#include "forget_host_time.h"

#include "profile_writer.h"
#include "sqlite_handle.h"

#include <fmt/format.h>
#include <set>

namespace phantora::profile
{

namespace
{

/// SQL LIKE as SQLite applies it, so the pattern means what it does in sqlite3.
bool Like(const SqliteDb& memory, const std::string& pattern, const std::string& text)
{
    SqliteStatement q(memory, "SELECT ?2 LIKE ?1");
    q.Bind(1, pattern);
    q.Bind(2, text);
    return q.Step() && q.Int(0) != 0;
}

std::string Listing(const std::map<std::string, std::pair<int64_t, int64_t>>& withHostTime)
{
    if (withHostTime.empty())
    {
        return "no run in it holds host time";
    }
    std::string out = "the runs that hold host time:";
    for (const auto& [run, counts] : withHostTime)
    {
        out +=
            fmt::format("\n  {} ({} gaps, {} read-back values)", run, counts.first, counts.second);
    }
    return out;
}

} // namespace

ForgetHostTimeResult ForgetHostTime(const std::filesystem::path& db,
                                    const std::vector<std::string>& runs,
                                    const std::vector<std::string>& likePatterns, bool dryRun)
{
    if (!std::filesystem::is_regular_file(db))
    {
        // ProfileWriter would create it.
        throw ProfileError(fmt::format("profile {}: no such file", db.string()));
    }
    ProfileWriter w(db);
    const auto withHostTime = w.RunsWithHostTime();
    std::set<std::string> chosen;
    for (const std::string& run : runs)
    {
        if (withHostTime.count(run))
        {
            chosen.insert(run);
            continue;
        }
        const auto row = w.FindRun(run);
        const std::string why =
            !row ? "is not a run of this profile"
            : !row->hostTimeForgotten.empty()
                ? fmt::format("holds no host time (forgotten at {})", row->hostTimeForgotten)
                : "holds no host time (its kernel samples only)";
        throw ProfileError(fmt::format("profile {}: run \"{}\" {}; {}", db.string(), run, why,
                                       Listing(withHostTime)));
    }
    const SqliteDb memory(":memory:", false); // for Like: no file touched
    for (const std::string& pattern : likePatterns)
    {
        bool any = false;
        for (const auto& [run, counts] : withHostTime)
        {
            if (Like(memory, pattern, run))
            {
                chosen.insert(run);
                any = true;
            }
        }
        if (!any)
        {
            throw ProfileError(fmt::format(
                "profile {}: --like \"{}\" matches no run that holds host time (SQL LIKE: '%' "
                "any text, '_' one character); {}",
                db.string(), pattern, Listing(withHostTime)));
        }
    }
    ForgetHostTimeResult result;
    for (const std::string& run : chosen)
    {
        const auto [gaps, readbacks] = w.ForgetHostTime(run);
        result.runs.push_back({run, gaps, readbacks});
    }
    result.labelsDropped = w.DropUnusedHostLabels();
    if (!dryRun)
    {
        w.Commit();
    }
    // A dry run's changes are rolled back as the writer goes (ProfileWriter's destructor).
    return result;
}

} // namespace phantora::profile
