// The control channel between the coordinator and a rank: a Unix socket pair carrying
// length-prefixed JSON messages ("ready" after warm-up, "result" at the end) from the rank, and
// one "go" byte from the coordinator when every rank is ready.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/real/host_backend.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::real::host {

// Sends one message, blocking; false when the coordinator is gone.
bool send_message(int fd, const Json& message);

// Accumulates bytes read from a rank's control socket and cuts them into messages.
class MessageReader {
public:
  // Reads what is available (non-blocking); false at end of stream or on error.
  bool read_from(int fd);
  std::optional<Json> next();

private:
  std::vector<char> buffer_;
};

Json outcome_to_json(const RankOutcome& outcome);
RankOutcome outcome_from_json(const Json& json, int rank);

} // namespace ddlsim::real::host
