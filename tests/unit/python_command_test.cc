// Which rank commands the fork server (phantora-cluster --fork-server) can start.
#include "launch/python_command.h"

#include <gtest/gtest.h>

using phantora::ParsePythonCommand;

TEST(PythonCommand, AScriptWithInterpreterOptionsSplitsIntoInterpreterOptionsAndProgram)
{
    const auto c = ParsePythonCommand(
        {"/venv/bin/python3.11", "-u", "-X", "dev", "-Wignore", "train.py", "--steps", "-m"});
    ASSERT_TRUE(c);
    EXPECT_EQ(c->interpreter, "/venv/bin/python3.11");
    EXPECT_EQ(c->options, (std::vector<std::string>{"-u", "-X", "dev", "-Wignore"}));
    // everything after the script is the script's, "-m" included
    EXPECT_EQ(c->program, (std::vector<std::string>{"train.py", "--steps", "-m"}));
}

TEST(PythonCommand, AModuleKeepsItsMinusM)
{
    const auto c = ParsePythonCommand({"python", "-m", "pkg.train", "--lr", "1"});
    ASSERT_TRUE(c);
    EXPECT_TRUE(c->options.empty());
    EXPECT_EQ(c->program, (std::vector<std::string>{"-m", "pkg.train", "--lr", "1"}));
}

TEST(PythonCommand, OtherCommandsAreRefusedWithAReason)
{
    std::string why;
    EXPECT_FALSE(ParsePythonCommand({"torchrun", "--nproc_per_node", "2", "train.py"}, &why));
    EXPECT_NE(why.find("not a Python interpreter"), std::string::npos) << why;
    EXPECT_FALSE(ParsePythonCommand({"python", "-c", "print(1)"}, &why));
    EXPECT_NE(why.find("'-c'"), std::string::npos) << why;
    EXPECT_FALSE(ParsePythonCommand({"python", "-"}, &why));
    EXPECT_FALSE(ParsePythonCommand({"python", "-u"}, &why));
    EXPECT_NE(why.find("no script"), std::string::npos) << why;
    EXPECT_FALSE(ParsePythonCommand({"python", "-m"}, &why));
    EXPECT_FALSE(ParsePythonCommand({"bash", "-c", "python train.py"}, &why));
    EXPECT_FALSE(ParsePythonCommand({"pythonic", "train.py"}, &why));
    EXPECT_FALSE(ParsePythonCommand({}, &why));
}
