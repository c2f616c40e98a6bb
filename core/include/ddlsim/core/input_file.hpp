// Reading an input file whole, with bounds checked before a byte is read.
//
// Every file ddlsim reads (scenario, include, calibration, nccl-tests log, layer profile,
// schedule dump, plan cache entry) goes through read_input_file: a FIFO, device or directory
// given as a file would otherwise be read without end (`ddlsim run /dev/zero` used to grow
// until the kernel killed it), and a file larger than any real input is refused with its size
// and the limit instead of exhausting memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ddlsim {

// Limits per kind of input, far above any real one (the largest bundled scenario is ~10 KB,
// the largest corpus log ~40 KB; a torch.profiler Chrome trace of a large model runs to a few
// hundred MB).
inline constexpr std::uintmax_t kMaxJsonInputBytes = std::uintmax_t{64} << 20;   // 64 MiB
inline constexpr std::uintmax_t kMaxLogInputBytes = std::uintmax_t{256} << 20;   // 256 MiB
inline constexpr std::uintmax_t kMaxTraceInputBytes = std::uintmax_t{2} << 30;   // 2 GiB
inline constexpr std::uintmax_t kMaxScheduleDumpBytes = std::uintmax_t{2} << 30; // 2 GiB

// The contents of `file`. Throws InputError naming the file when it does not exist, is not a
// regular file (a directory, FIFO, socket or device), is larger than `max_bytes` (the message
// names `what`, e.g. "a scenario", its size and the limit), or cannot be read.
std::string read_input_file(const std::filesystem::path& file, std::string_view what,
                            std::uintmax_t max_bytes);

} // namespace ddlsim
