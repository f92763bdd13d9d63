#include "sqlite_handle.h"

#include <fmt/format.h>

namespace phantora::profile
{

SqliteDb::SqliteDb(const std::filesystem::path& file, bool readOnly) : m_file(file)
{
    if (readOnly && !std::filesystem::exists(file))
    {
        throw ProfileError(fmt::format("profile {}: no such file", file.string()));
    }
    sqlite3* raw = nullptr;
    const int flags =
        readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const int rc = sqlite3_open_v2(file.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    m_db.reset(raw);
    if (rc != SQLITE_OK)
    {
        Fail("cannot open");
    }
    // Ranks of several simulations may read while gpu_profiler merges new measurements:
    // wait for the writer's short transaction instead of failing.
    sqlite3_busy_timeout(raw, 10000);
    if (readOnly)
    {
        sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
        sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
        sqlite3_limit(raw, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
        Exec("PRAGMA cell_size_check = ON");
    }
}

bool SqliteDb::HasTable(const std::string& table) const
{
    SqliteStatement q(*this, "SELECT type, sql FROM sqlite_master WHERE name = ?1");
    q.Bind(1, table);
    if (!q.Step())
    {
        return false;
    }
    const std::string type = q.Text(0);
    if (type != "table" || q.Text(1).rfind("CREATE TABLE", 0) != 0)
    {
        throw ProfileError(fmt::format("profile {}: \"{}\" is a {} (\"{}\"), expected a table: a "
                                       "profile holds tables only",
                                       m_file.string(), table,
                                       type == "table" ? "virtual table" : type,
                                       q.Text(1).substr(0, 80)));
    }
    return true;
}

void SqliteDb::Exec(const std::string& sql)
{
    char* err = nullptr;
    if (sqlite3_exec(m_db.get(), sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK)
    {
        std::string msg = err ? err : "unknown error";
        sqlite3_free(err);
        throw ProfileError(fmt::format("profile {}: {} (in: {})", m_file.string(), msg, sql));
    }
}

void SqliteDb::Fail(const std::string& what) const
{
    throw ProfileError(fmt::format("profile {}: {}: {}", m_file.string(), what,
                                   m_db ? sqlite3_errmsg(m_db.get()) : "out of memory"));
}

SqliteStatement::SqliteStatement(const SqliteDb& db, const std::string& sql) : m_db(db)
{
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db.Get(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK)
    {
        db.Fail(fmt::format("cannot prepare \"{}\"", sql));
    }
    m_stmt.reset(raw);
}

bool SqliteStatement::Step()
{
    const int rc = sqlite3_step(m_stmt.get());
    if (rc == SQLITE_ROW)
    {
        return true;
    }
    if (rc != SQLITE_DONE)
    {
        m_db.Fail("query failed");
    }
    return false;
}

void SqliteStatement::Reset()
{
    sqlite3_reset(m_stmt.get());
    sqlite3_clear_bindings(m_stmt.get());
}

void SqliteStatement::Bind(int index, int64_t value)
{
    sqlite3_bind_int64(m_stmt.get(), index, value);
}

void SqliteStatement::Bind(int index, double value)
{
    sqlite3_bind_double(m_stmt.get(), index, value);
}

void SqliteStatement::Bind(int index, const std::string& value)
{
    sqlite3_bind_text(m_stmt.get(), index, value.data(), static_cast<int>(value.size()),
                      SQLITE_TRANSIENT);
}

int64_t SqliteStatement::Int(int column) const
{
    return sqlite3_column_int64(m_stmt.get(), column);
}

double SqliteStatement::Real(int column) const
{
    return sqlite3_column_double(m_stmt.get(), column);
}

std::string SqliteStatement::Text(int column) const
{
    const unsigned char* t = sqlite3_column_text(m_stmt.get(), column);
    return t ? reinterpret_cast<const char*>(t) : "";
}

std::string SqliteStatement::Name(int column) const
{
    const char* name = sqlite3_column_name(m_stmt.get(), column);
    return name ? name : "";
}

bool SqliteStatement::IsNull(int column) const
{
    return sqlite3_column_type(m_stmt.get(), column) == SQLITE_NULL;
}

} // namespace phantora::profile
