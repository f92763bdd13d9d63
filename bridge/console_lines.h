// The bridge's own console lines (the run summary, the start and failure lines, the
// request statistics): at most kConsoleWidth characters each, so a terminal or a CI log
// shows them whole; what a line leaves out is in the --report JSON.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace phantora
{

inline constexpr std::size_t kConsoleWidth = 160;

/// \p text's lines, each cut into pieces of at most \p width characters: at the last space
/// that fits, or within a word longer than the line (a path); pieces after the first are
/// indented by two spaces more than the line they continue.
std::vector<std::string> WrapLines(const std::string& text, std::size_t width = kConsoleWidth);

/// \p text wrapped (WrapLines), each line ended by a newline, on \p to.
void PrintWrapped(std::FILE* to, const std::string& text, std::size_t width = kConsoleWidth);

} // namespace phantora
