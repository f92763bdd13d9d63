// Creates or extends a profile database.  Every sample is kept, so measurements of
// one op from several recordings and replays merge into one set of statistics.
#pragma once

#include "host_time/host_gap_table.h"
#include "op_key.h"
#include "sqlite_handle.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace phantora::profile
{

class ProfileWriter
{
public:
    explicit ProfileWriter(const std::filesystem::path& file);
    ~ProfileWriter();
    ProfileWriter(const ProfileWriter&) = delete;
    ProfileWriter& operator=(const ProfileWriter&) = delete;

    /// Refuses (ProfileError) a value that contradicts one already stored for a key
    /// that identifies the hardware (GPU name), so two GPUs never share one file.
    void SetMetadata(const std::string& key, const std::string& value);
    /// \p args: each sample's launch arguments (kernel_params.h ArgFacts), in order; none
    /// (or "") where unknown.
    void AddSamples(const OpKey& key, const std::vector<int64_t>& durationsNs,
                    const std::string& run, const std::string& source,
                    const std::vector<std::string>& args = {});
    /// Names the program that \p run measured (program_name.h), so that a simulation of
    /// that program can prefer its samples; \p command is kept for the record.
    void AddRun(const std::string& run, const std::string& program, const std::string& command);
    /// The recording host's speed (host_speed.h) for \p run, added with AddRun.
    void SetRunHostSpeed(const std::string& run, double nsPerRound);
    /// \p run's host-time sequences (host_gap_table.h), replacing any it had.
    void SetHostGaps(const std::string& run,
                     const std::map<std::string, host_time::Sequence>& threads);
    /// Every run that holds host time -> its host gaps and read-back values.
    std::map<std::string, std::pair<int64_t, int64_t>> RunsWithHostTime();
    struct RunRow
    {
        std::string program;
        std::string hostTimeForgotten; ///< when ForgetHostTime removed its host time, or ""
    };
    /// \p run's row of the runs table, if it has one.
    std::optional<RunRow> FindRun(const std::string& run);
    /// Removes \p run's host gaps and read-back values and its host speed (the host-time
    /// pass's), marking the run as forgotten (runs.host_time_forgotten), so a re-import of
    /// its raw log leaves them out; its kernel samples and its runs row stay.  Returns the
    /// gaps and read-back values removed.
    std::pair<int64_t, int64_t> ForgetHostTime(const std::string& run);
    /// Removes the boundary labels no host gap refers to any more; returns how many.
    int64_t DropUnusedHostLabels();
    /// Every program of the runs table -> its runs, in name order.
    std::map<std::string, std::vector<std::string>> RunsByProgram();
    struct RemovedRun
    {
        int64_t samples{0};    ///< kernel samples removed
        int64_t gaps{0};       ///< host_gaps rows removed
        int64_t readbacks{0};  ///< host_readbacks rows removed
        std::set<int64_t> ops; ///< the ops that lost samples (RestatOp them)
    };
    /// Removes every trace of \p run: its kernel samples, host gaps, read-back values and
    /// runs row.  The ops it measured keep their old statistics until RestatOp.
    RemovedRun RemoveRun(const std::string& run);
    struct Restated
    {
        bool kept{false}; ///< false: no sample was left and the op is gone
        double medianBeforeNs{0};
        double medianAfterNs{0};
    };
    /// Recomputes op \p opId's statistics from the samples it has left (after RemoveRun),
    /// as AddSamples computes them, keeping its source; deletes the op if none are left.
    Restated RestatOp(int64_t opId);
    /// The ops the profile holds.
    int64_t OpCount();
    /// Makes everything added so far visible to readers at once.
    void Commit();

private:
    std::vector<int64_t> SamplesOf(int64_t opId);
    /// Sets op \p opId's statistics (OpStats::FromSamples) and source.
    void WriteStats(int64_t opId, std::vector<int64_t> samples, const std::string& source);

    SqliteDb m_db;
    bool m_open{false};
};

} // namespace phantora::profile
