// The profile database's tables (profiles/README.md documents them for readers).
#pragma once

#include <string>
#include <string_view>

namespace phantora::profile
{

// Version 1 files written before the runs table, samples.args, runs.host_speed_ns,
// runs.host_time_forgotten or the host-time tables existed still read (without them); a
// writer adds what is missing.
inline constexpr int kSchemaVersion = 1;

/// The ops table's columns and constraints.  Files written before cuDNN ops existed
/// check kind against the first four kinds only: a writer rebuilds their ops table with
/// these (profile_writer.cc), keeping every row and id.
inline constexpr std::string_view kOpsColumnsSql = R"sql((
    id         INTEGER PRIMARY KEY,
    kind       TEXT NOT NULL CHECK(kind IN ('kernel','gemm','memcpy','memset','cudnn')),
    name       TEXT NOT NULL,
    grid_x     INTEGER NOT NULL DEFAULT 0,
    grid_y     INTEGER NOT NULL DEFAULT 0,
    grid_z     INTEGER NOT NULL DEFAULT 0,
    block_x    INTEGER NOT NULL DEFAULT 0,
    block_y    INTEGER NOT NULL DEFAULT 0,
    block_z    INTEGER NOT NULL DEFAULT 0,
    shared_mem INTEGER NOT NULL DEFAULT 0,
    bytes      INTEGER NOT NULL DEFAULT 0,
    samples    INTEGER NOT NULL CHECK(samples > 0),
    median_ns  REAL NOT NULL,
    p10_ns     REAL NOT NULL,
    p90_ns     REAL NOT NULL,
    mean_ns    REAL NOT NULL,
    stddev_ns  REAL NOT NULL,
    source     TEXT NOT NULL,
    UNIQUE(kind, name, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem, bytes)))sql";

inline std::string SchemaSql()
{
    return std::string(R"sql(
CREATE TABLE IF NOT EXISTS metadata(
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ops)sql") +
           std::string(kOpsColumnsSql) + R"sql(;
CREATE TABLE IF NOT EXISTS samples(
    op_id       INTEGER NOT NULL REFERENCES ops(id),
    duration_ns INTEGER NOT NULL,
    run         TEXT NOT NULL,
    args        TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS samples_by_op ON samples(op_id);
CREATE TABLE IF NOT EXISTS runs(
    run     TEXT PRIMARY KEY NOT NULL,
    program TEXT NOT NULL,
    command TEXT NOT NULL,
    host_speed_ns REAL,
    host_time_forgotten TEXT);
CREATE TABLE IF NOT EXISTS host_labels(
    id   INTEGER PRIMARY KEY,
    text TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS host_gaps(
    run     TEXT NOT NULL,
    thread  TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    label   INTEGER NOT NULL REFERENCES host_labels(id),
    gap_ns  INTEGER NOT NULL,
    call_ns INTEGER NOT NULL DEFAULT -1,
    PRIMARY KEY(run, thread, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS host_readbacks(
    run   TEXT NOT NULL,
    thread TEXT NOT NULL,
    seq   INTEGER NOT NULL,
    bytes TEXT NOT NULL,
    PRIMARY KEY(run, thread, seq)) WITHOUT ROWID;
)sql";
}

} // namespace phantora::profile
