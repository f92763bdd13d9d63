// The error band a simulated time carries.  Each GPU op was priced by one source (the
// profile's measurement, or an estimator: gpu_model/kernel_cost_table.h) and each host gap
// by one (the program's recording, the host-time model, this machine's clock:
// host_time_profile.h); how far each is from real measurements was measured by leaving
// what it prices out (profiles/error_bands.tsv, written by bench/error_bands.py): the
// estimates by op class (gpu_model/op_class.h), from how far each class's time was off in
// programs the profile did not hold.  A run is as uncertain as the mix that priced it:
// within the GPU's time and within the host's, the errors weighted by the share each
// priced; a step is about the longer of the two (they overlap), so the band is how far
// that longer part can move.
#pragma once

#include "gpu_model/kernel_cost_table.h"
#include "host_time_profile.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace phantora
{

/// The measured errors of the pricing sources, by GPU model (profiles/error_bands.tsv).
class ErrorBandTable
{
public:
    /// Throws std::runtime_error naming the file and line of a malformed row.
    static ErrorBandTable Read(const std::filesystem::path& file);
    /// The |relative error| of \p cls on \p gpu, if measured ("gpu": "measured", "default"
    /// or an op class's name for its estimates, OpClassName; "host": "recording", "model",
    /// "measured").
    std::optional<double> Error(const std::string& gpu, const std::string& part,
                                const std::string& cls) const;
    bool Empty() const { return m_errors.empty(); }
    const std::filesystem::path& File() const { return m_file; }

private:
    std::filesystem::path m_file;
    std::map<std::tuple<std::string, std::string, std::string>, double> m_errors;
};

struct ErrorBand
{
    struct Part
    {
        std::string part;     ///< "gpu" or "host"
        std::string cls;      ///< the source's name
        double share{0};      ///< of the time the band weighs
        double error{0};      ///< its mean |relative error|
        bool measured{false}; ///< the table had it (else counted at kUnmeasuredError)
    };
    std::vector<Part> parts;
    double relative{0};

    /// One line: "error band: ±8.8 % of each simulated time (GPU 64 %: ...; host 36 %: ...)".
    std::string Describe() const;
};

/// A source with no measured error counts at this (its figure could be anything).
inline constexpr double kUnmeasuredError = 1.0;

/// The band of a run whose GPU ops \p kernels priced on \p gpu and whose host time the
/// ranks were charged as \p charged from \p host.  Host gaps measured here with a table (a
/// thread's start-up work past its budget, once) do not weigh: no step repeats them.
ErrorBand ComputeErrorBand(const KernelCostTable& kernels, const std::string& gpu,
                           const HostTimeProfile& host, const HostTimeProfile::Charged& charged,
                           const ErrorBandTable& table);

} // namespace phantora
