// A profile database opened read-only and held in memory: the bridge looks up every
// simulated launch, so lookups must not touch the file.  Any number of simulations
// (and their ranks) may open one profile at once.
#pragma once

#include "host_time/host_gap_table.h"
#include "op_key.h"
#include "op_stats.h"
#include "sqlite_handle.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace phantora::profile
{

class ProfileReader
{
public:
    /// Throws ProfileError naming the file if it is missing, not a profile, or of
    /// another schema version.
    explicit ProfileReader(const std::filesystem::path& file);
    /// Several databases searched in order (a user's own recording, then a committed
    /// profile): an op, a run or a metadata key is taken from the first file that has it.
    /// Throws ProfileError if the files were measured on different GPU models.
    explicit ProfileReader(const std::vector<std::filesystem::path>& files);

    /// The first file.
    const std::filesystem::path& File() const { return m_file; }
    /// Every file, in search order.
    const std::vector<std::filesystem::path>& Files() const { return m_files; }
    const std::map<std::string, std::string>& Metadata() const { return m_metadata; }
    /// metadata["gpu_model"], e.g. "H200"
    std::string GpuModel() const;

    const OpStats* Find(const OpKey& key) const;
    /// Every measured op of \p kind named \p name (all launch shapes / sizes).
    std::vector<const std::pair<const OpKey, OpStats>*> SameName(OpKind kind,
                                                                 const std::string& name) const;
    const std::map<OpKey, OpStats>& Ops() const { return m_ops; }
    /// run (raw log name) -> the program it measured; empty for files without a runs table.
    const std::map<std::string, std::string>& RunPrograms() const { return m_runPrograms; }

    struct Run
    {
        std::string program;
        std::string command;
        std::optional<double> hostSpeedNs; ///< the recording host's (host_speed.h)
        bool hostGaps{false};              ///< it recorded host time (HostSequences)
        /// When `gpu_profiler forget-host-time` removed its host time ("" if never).
        std::string hostTimeForgotten;
        int ranks{1}; ///< processes its launcher started (LaunchedRanks of the command)
    };
    /// Every run the runs table names.
    const std::map<std::string, Run>& Runs() const { return m_runs; }
    /// The host-time sequences recorded by \p runs (host_gap_table.h), read from the file
    /// on demand: only a simulation of a recorded program needs them.
    std::vector<host_time::Sequence> HostSequences(const std::vector<std::string>& runs) const;

private:
    /// Adds what \p file has and the files read before it lack.
    void Load(const std::filesystem::path& file);
    static std::vector<host_time::Sequence> HostSequencesIn(const std::filesystem::path& file,
                                                            const std::vector<std::string>& runs);
    void ReadProgramMedians(SqliteDb& db, const std::unordered_map<int64_t, OpStats*>& byId);
    static void ReadArgsMedians(SqliteDb& db, const std::unordered_map<int64_t, OpStats*>& byId);

    std::filesystem::path m_file;
    std::vector<std::filesystem::path> m_files;
    std::map<std::string, std::filesystem::path> m_runFile; ///< run -> the file holding it
    std::map<std::string, std::string> m_metadata;
    std::map<OpKey, OpStats> m_ops;
    std::map<std::string, std::string> m_runPrograms;
    std::map<std::string, Run> m_runs;
    std::multimap<std::pair<OpKind, std::string>, const std::pair<const OpKey, OpStats>*> m_byName;
};

} // namespace phantora::profile
