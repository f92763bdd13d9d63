// The bridge's console lines: wrapped at spaces within the width, words longer than a
// line (paths) cut, continuations indented.
#include "console_lines.h"

#include <gtest/gtest.h>

using phantora::WrapLines;

TEST(ConsoleLines, AShortLineIsLeftAlone)
{
    EXPECT_EQ(WrapLines("wall time 1.000 s"), (std::vector<std::string>{"wall time 1.000 s"}));
}

TEST(ConsoleLines, ALongLineBreaksAtTheLastSpaceThatFitsAndContinuesIndented)
{
    EXPECT_EQ(WrapLines("aaaa bbbb cccc dddd", 12),
              (std::vector<std::string>{"aaaa bbbb", "  cccc dddd"}));
}

TEST(ConsoleLines, AWordLongerThanTheLineIsCutAndNoPieceIsWider)
{
    const std::string path = "/" + std::string(300, 'p');
    const auto lines = WrapLines("trace: 12 spans in " + path, 160);
    ASSERT_GE(lines.size(), 2u);
    std::string joined;
    for (const auto& l : lines)
    {
        EXPECT_LE(l.size(), 160u) << l;
        joined += l;
    }
    // every character of the path is printed
    EXPECT_NE(joined.find(std::string(100, 'p')), std::string::npos);
    std::size_t ps = 0;
    for (char c : joined)
    {
        ps += c == 'p' ? 1 : 0;
    }
    EXPECT_EQ(ps, 300u + 1u); // the path's, and "spans"'
}

TEST(ConsoleLines, EachLineOfATextIsWrappedKeepingItsIndent)
{
    EXPECT_EQ(WrapLines("first\n    aaaa bbbb cccc\n", 16),
              (std::vector<std::string>{"first", "    aaaa bbbb", "      cccc"}));
}
