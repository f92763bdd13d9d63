// ns-3 ships test suites as libraries and runs them from its own test-runner; the
// Debian package has no runner, so the module carries this one for ctest.
#include "ns3/test.h"

int main(int argc, char** argv)
{
    return ns3::TestRunner::Run(argc, argv);
}
