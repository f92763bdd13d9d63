// The scenario's GPU as the launcher gives it to processes that are no rank
// (protocol/device_description.h): what the rank's Welcome says, and clear errors.
#include "protocol/device_description.h"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

using namespace phantora::wire;

TEST(DeviceDescription, RoundTripsTheWelcomesDeviceFields)
{
    Welcome w;
    w.gpuName = "NVIDIA H200; test=1";
    w.gpuMemoryBytes = 150754820096ULL;
    w.deviceCount = 4;
    w.smCount = 132;
    w.ccMajor = 9;
    w.ccMinor = 0;
    const std::string text = EncodeDeviceDescription(w);
    EXPECT_EQ(text, "count=4;sms=132;cc=9.0;memory=150754820096;name=NVIDIA H200; test=1");
    const Welcome back = DecodeDeviceDescription(text);
    EXPECT_EQ(back.gpuName, w.gpuName);
    EXPECT_EQ(back.gpuMemoryBytes, w.gpuMemoryBytes);
    EXPECT_EQ(back.deviceCount, 4);
    EXPECT_EQ(back.smCount, 132);
    EXPECT_EQ(back.ccMajor, 9);
    EXPECT_EQ(back.ccMinor, 0);
}

TEST(DeviceDescription, NamesTheFieldThatIsMissingOrNotANumber)
{
    auto error = [](const std::string& text)
    {
        try
        {
            (void)DecodeDeviceDescription(text);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_NE(error("count=4;cc=9.0;memory=1;name=X").find("'sms='"), std::string::npos);
    EXPECT_NE(error("count=4;sms=x;cc=9.0;memory=1;name=X").find("sms='x'"), std::string::npos);
    EXPECT_NE(error("count=4;sms=1;cc=9;memory=1;name=X").find("cc=MAJOR.MINOR"),
              std::string::npos);
    EXPECT_NE(error("count=0;sms=1;cc=9.0;memory=1;name=X").find("count"), std::string::npos);
    EXPECT_NE(error("count=4;sms=1;cc=9.0;memory=1").find("'name='"), std::string::npos);
}
