// The host-time model of a profile (host_time/host_time_model.h) learned from the runs it
// recorded: what the bridge charges a program the profile holds no recording of, and
// what `phantora-host-model-accuracy` checks program by program, each left out in turn.
#pragma once

#include "host_time/host_gap_table.h"
#include "profile_reader.h"

#include <cstddef>
#include <set>
#include <string>

namespace phantora::profile
{

/// The median measured host speed (host_time/host_speed.h) of every run in \p profile that
/// has one: the host each recorded gap is scaled to before programs are compared; 0 if no
/// run has one.
double ReferenceHostNs(const ProfileReader& profile);

/// \p run's gaps multiply by this to be the reference host's: 1 where either speed is
/// unknown.
double ToReferenceHost(const ProfileReader::Run& run, double referenceHostNs);

struct LearnedHostModel
{
    host_time::GapTable table; ///< empty: nothing recorded to learn from
    std::size_t programs{0};
    std::size_t runs{0};
    std::size_t gaps{0};
};

/// The model of every program \p profile recorded host time of but those in \p leaveOut,
/// each run scaled to \p referenceHostNs (0: unscaled).  Reads the runs' gaps from the file.
LearnedHostModel LearnHostModel(const ProfileReader& profile, host_time::GapStatistic statistic,
                                double referenceHostNs, const std::set<std::string>& leaveOut = {});

} // namespace phantora::profile
