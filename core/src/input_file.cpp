#include "ddlsim/core/input_file.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"

#include <fstream>
#include <system_error>

namespace ddlsim {

std::string read_input_file(const std::filesystem::path& file, std::string_view what,
                            std::uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  const std::string where = file.string();
  std::error_code error;
  const fs::file_status status = fs::status(file, error); // follows symbolic links
  if (error || !fs::exists(status))
    throw InputError(where, "cannot open " + std::string(what) +
                                ": the file does not exist (check the path)");
  if (fs::is_directory(status))
    throw InputError(where, "is a directory; give " + std::string(what) + " file");
  if (!fs::is_regular_file(status))
    throw InputError(where, "is not a regular file (a FIFO, socket or device); ddlsim reads " +
                                std::string(what) +
                                " only from a regular file, whose size it "
                                "can check first");
  const std::uintmax_t size = fs::file_size(file, error);
  if (error) throw InputError(where, "cannot read its size (" + error.message() + ")");
  if (size > max_bytes)
    throw InputError(where, "the file is " + format_bytes(size) + ", above the limit of " +
                                format_bytes(max_bytes) + " for " + std::string(what) +
                                "; is it the right file?");
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw InputError(where, "cannot open " + std::string(what) + " for reading (permissions?)");
  // Read no more than the limit even if the file grows meanwhile.
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw InputError(where, "read error");
  return text;
}

} // namespace ddlsim
