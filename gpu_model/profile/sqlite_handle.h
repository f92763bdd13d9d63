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
    /// reader never takes a write lock or creates journal files beside the database.  A
    /// file read may come from anyone (a user's own recording): it is read defensively,
    /// as SQLite advises for untrusted databases (defensive mode, no trusted schema, cell
    /// size checks, strings and blobs within kMaxValueBytes).
    SqliteDb(const std::filesystem::path& file, bool readOnly);

    /// The longest string or blob a database read here may hold.
    static constexpr int kMaxValueBytes = 64 << 20;

    sqlite3* Get() const { return m_db.get(); }
    const std::filesystem::path& File() const { return m_file; }
    void Exec(const std::string& sql);
    /// Whether \p table is one of the file's tables; throws ProfileError if the name is a
    /// view or a virtual table, which a profile never holds and whose query could run
    /// unbounded (a recursive view) or reach a virtual table module's code.
    bool HasTable(const std::string& table) const;
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
    /// The name of result column \p column.
    std::string Name(int column) const;

private:
    struct Finalize
    {
        void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
    };
    const SqliteDb& m_db;
    std::unique_ptr<sqlite3_stmt, Finalize> m_stmt;
};

} // namespace phantora::profile
