// RAII for SQLite connections and statements, with errors that name the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <sqlite3.h>
#include <stdexcept>
#include <string>

namespace phantora::profile
{

/// A profile file that cannot be read or written; what() names the file and the problem.
class ProfileError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

class SqliteDb
{
public:
    /// \p readOnly: opened with mode=ro, so any number of processes read at once and a
    /// reader never takes a write lock or creates journal files beside the database.
    SqliteDb(const std::filesystem::path& file, bool readOnly);

    sqlite3* Get() const { return m_db.get(); }
    const std::filesystem::path& File() const { return m_file; }
    void Exec(const std::string& sql);
    [[noreturn]] void Fail(const std::string& what) const;

private:
    struct Close
    {
        void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
    };
    std::filesystem::path m_file;
    std::unique_ptr<sqlite3, Close> m_db;
};

class SqliteStatement
{
public:
    SqliteStatement(const SqliteDb& db, const std::string& sql);

    /// true while a row is available
    bool Step();
    void Reset();
    void Bind(int index, int64_t value);
    void Bind(int index, double value);
    void Bind(int index, const std::string& value);
    int64_t Int(int column) const;
    double Real(int column) const;
    std::string Text(int column) const;
    bool IsNull(int column) const;

private:
    struct Finalize
    {
        void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
    };
    const SqliteDb& m_db;
    std::unique_ptr<sqlite3_stmt, Finalize> m_stmt;
};

} // namespace phantora::profile
