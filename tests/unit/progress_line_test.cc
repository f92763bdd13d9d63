// The progress line: which rank-0 lines count as steps, the line's fields, the interval.
#include "progress_line.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <thread>

using phantora::ProgressLine;

TEST(ProgressLine, CountsRankZerosStepLinesOnly)
{
    EXPECT_TRUE(ProgressLine::IsStepLine("rank 0 step 2 time 158.185 us"));      // CUDA example
    EXPECT_TRUE(ProgressLine::IsStepLine("step 3: 12.345 ms, 1,234 tokens/s")); // train_gpt.py
    EXPECT_TRUE(ProgressLine::IsStepLine("Iteration: 7 | loss 2.1"));
    EXPECT_TRUE(ProgressLine::IsStepLine("[iter 10/100]"));
    EXPECT_FALSE(ProgressLine::IsStepLine("done: 4 ranks, 4194304 floats, 3 steps"));
    EXPECT_FALSE(ProgressLine::IsStepLine("mean step time"));
    EXPECT_FALSE(ProgressLine::IsStepLine("footstep 3")); // a word that ends in "step"
    ProgressLine line(stderr, std::chrono::milliseconds(1000));
    line.OnRankLine(0, "step 1: 10 ms");
    line.OnRankLine(1, "step 1: 10 ms"); // other ranks log the same steps
    line.OnRankLine(0, "step 2: 10 ms");
    EXPECT_EQ(line.Steps(), 2u);
    const std::string text = line.Format(1'500'000'000, 3, 4);
    EXPECT_NE(text.find("simulated 1.500000 s"), std::string::npos) << text;
    EXPECT_NE(text.find("2 steps"), std::string::npos) << text;
    EXPECT_NE(text.find("wall 0:00:00"), std::string::npos) << text;
    EXPECT_NE(text.find("3/4 ranks alive"), std::string::npos) << text;
    EXPECT_LT(text.size(), 160u);
}

TEST(ProgressLine, PrintsAtTheIntervalNotOftener)
{
    std::FILE* out = std::tmpfile();
    ASSERT_NE(out, nullptr);
    ProgressLine line(out, std::chrono::milliseconds(100));
    for (int i = 0; i < 30; ++i) // 300 ms of turns every 10 ms
    {
        line.Tick(i, 1, 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(line.LinesPrinted(), 2u);
    EXPECT_LE(line.LinesPrinted(), 3u);
    std::fclose(out);
    EXPECT_FALSE(ProgressLine::IsTerminal(out = std::tmpfile())); // a file: "auto" stays quiet
    std::fclose(out);
}
