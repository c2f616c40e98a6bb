// Rule 2 of step.hpp matches the k-th send from rank a to rank b on a channel with the k-th
// receive at b from a. An engine keeps, per program, the started sends to it that found no
// receive yet and its started receives that found no send yet, each first-in first-out per peer.
// Usually a list holds zero or one entry, so the first sits inline in the program's hot state
// (count and first) and the rest in a PostedRest kept apart.
#pragma once

#include "ring_window.hpp"

#include <cstdint>

namespace ddlsim::sim::detail {

// The entries after the first: a ring, because a program often runs several steps ahead of its
// peer and the list is then consumed from the front.
template <typename Entry> using PostedRest = RingWindow<Entry>;

// The rarer halves of put_posted and take_posted, out of line so that their common cases (an
// empty list, a list of one) inline into an engine's inner loop.
template <typename Entry>
[[gnu::noinline]] void put_posted_rest(PostedRest<Entry>& rest, const Entry& entry) {
  rest.push_back(entry);
}
template <typename Entry>
[[gnu::noinline]] void take_posted_first(Entry& first, PostedRest<Entry>& rest) {
  first = rest.front();
  rest.pop_front();
}
template <typename Entry>
[[gnu::noinline]] bool take_posted_rest(PostedRest<Entry>& rest, std::int32_t peer, Entry& found) {
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i].peer != peer) continue;
    found = rest[i];
    rest.erase(i);
    return true;
  }
  return false;
}

// Appends `entry` (from Entry::peer) to the list of `count` entries (`first`, then `rest`).
template <typename Entry>
[[gnu::always_inline]] inline void put_posted(std::uint32_t& count, Entry& first,
                                              PostedRest<Entry>& rest, const Entry& entry) {
  if (count++ == 0)
    first = entry;
  else
    put_posted_rest(rest, entry);
}

// Removes the first entry from `peer` into `found`; false if there is none.
template <typename Entry>
[[gnu::always_inline]] inline bool take_posted(std::uint32_t& count, Entry& first,
                                               PostedRest<Entry>& rest, std::int32_t peer,
                                               Entry& found) {
  if (count == 0) return false;
  if (first.peer == peer) {
    found = first;
    if (--count != 0) take_posted_first(first, rest);
    return true;
  }
  if (count == 1 || !take_posted_rest(rest, peer, found)) return false;
  --count;
  return true;
}

} // namespace ddlsim::sim::detail
