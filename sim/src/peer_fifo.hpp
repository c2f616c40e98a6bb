// Rule 2 of step.hpp matches the k-th send from rank a to rank b on a channel with the k-th
// receive at b from a. An engine keeps, per program, the started sends to it that found no
// receive yet and its started receives that found no send yet, each first-in first-out per peer.
// Usually a list holds zero or one entry, so the first sits inline in the program's hot state and
// the rest in a vector kept apart; these two functions work on that split list.
#pragma once

#include <cstdint>
#include <vector>

namespace ddlsim::sim::detail {

// Appends `entry` to the list of `count` entries (`first`, then `rest`).
template <typename Entry>
void put_posted(std::uint32_t& count, Entry& first, std::vector<Entry>& rest, const Entry& entry) {
  if (count++ == 0)
    first = entry;
  else
    rest.push_back(entry);
}

// Removes the first entry from `peer` (Entry::peer) into `found`; false if there is none.
template <typename Entry>
bool take_posted(std::uint32_t& count, Entry& first, std::vector<Entry>& rest, std::int32_t peer,
                 Entry& found) {
  if (count == 0) return false;
  if (first.peer == peer) {
    found = first;
    if (--count != 0) {
      first = rest.front();
      rest.erase(rest.begin());
    }
    return true;
  }
  for (auto it = rest.begin(); it != rest.end(); ++it) {
    if (it->peer != peer) continue;
    found = *it;
    rest.erase(it);
    --count;
    return true;
  }
  return false;
}

} // namespace ddlsim::sim::detail
