#include "control.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sys/socket.h>

namespace ddlsim::real::host {

bool send_message(int fd, const Json& message) {
  const std::string text = message.dump();
  const auto length = static_cast<std::uint32_t>(text.size());
  std::string frame(sizeof length, '\0');
  std::memcpy(frame.data(), &length, sizeof length);
  frame += text;
  std::size_t done = 0;
  while (done < frame.size()) {
    const ssize_t n = ::send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += std::size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

bool MessageReader::read_from(int fd) {
  char chunk[1 << 16];
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      buffer_.insert(buffer_.end(), chunk, chunk + n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    return false;
  }
  return true;
}

std::optional<Json> MessageReader::next() {
  std::uint32_t length = 0;
  if (buffer_.size() < sizeof length) return std::nullopt;
  std::memcpy(&length, buffer_.data(), sizeof length);
  if (buffer_.size() < sizeof length + length) return std::nullopt;
  Json message = Json::parse(buffer_.begin() + sizeof length,
                             buffer_.begin() + std::ptrdiff_t(sizeof length + length));
  buffer_.erase(buffer_.begin(), buffer_.begin() + std::ptrdiff_t(sizeof length + length));
  return message;
}

Json outcome_to_json(const RankOutcome& outcome) {
  Json timeline = Json::array();
  for (const StepTiming& t : outcome.timeline)
    timeline.push_back(
        {t.channel, t.index, static_cast<int>(t.kind), t.peer, t.bytes, t.start_ns, t.end_ns});
  return {{"type", "result"},
          {"finished", outcome.finished},
          {"error", outcome.error},
          {"seconds", outcome.seconds},
          {"wrong", outcome.wrong},
          {"steps", outcome.steps},
          {"bytes_sent", outcome.bytes_sent},
          {"timeline", std::move(timeline)}};
}

RankOutcome outcome_from_json(const Json& json, int rank) {
  RankOutcome outcome;
  outcome.rank = rank;
  outcome.finished = json.at("finished").get<bool>();
  outcome.error = json.at("error").get<std::string>();
  outcome.seconds = json.at("seconds").get<double>();
  outcome.wrong = json.at("wrong").get<std::uint64_t>();
  outcome.steps = json.at("steps").get<std::uint64_t>();
  outcome.bytes_sent = json.at("bytes_sent").get<std::uint64_t>();
  for (const Json& t : json.at("timeline"))
    outcome.timeline.push_back({t[0].get<std::uint16_t>(), t[1].get<std::uint32_t>(),
                                static_cast<coll::StepKind>(t[2].get<int>()),
                                t[3].get<std::int32_t>(), t[4].get<std::uint64_t>(),
                                t[5].get<std::int64_t>(), t[6].get<std::int64_t>()});
  return outcome;
}

} // namespace ddlsim::real::host
