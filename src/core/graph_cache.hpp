// The cache of replayable work a CUDA context keeps (CUDA graphs of whole dense calls), as a
// host-only class: keys, least-recently-used order, eviction. The executables are opaque
// handles destroyed by a function the owner gives, so this compiles and is tested without
// CUDA (tests/test_graph_replay.cpp). src/cuda/graph_replay.cu captures, instantiates,
// updates and launches; src/core/graph_replay.hpp builds the keys.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <list>

namespace gpuqr::detail {

/// Everything a captured call's work depends on. `shape` holds the values that decide which
/// work is enqueued (operation, precision, sizes, leading dimensions, block sizes, knobs);
/// `addresses` the memory and streams it runs on (operands, workspaces, streams). Two calls
/// with equal keys enqueue the same work on the same memory; equal shapes but other
/// addresses enqueue the same work elsewhere (cudaGraphExecUpdate can retarget a graph).
/// Unused slots stay zero.
struct GraphKey {
  static constexpr int kShapeSlots = 24;
  static constexpr int kAddressSlots = 24;
  std::array<std::int64_t, kShapeSlots> shape{};
  std::array<std::uintptr_t, kAddressSlots> addresses{};
  int shape_used = 0;
  int addresses_used = 0;

  /// Appends a value; throws std::length_error when the slots are full (a programming error).
  void add_shape(std::int64_t value);
  void add_address(const void* p);
  bool same_shape(const GraphKey& other) const { return shape == other.shape; }
  bool operator==(const GraphKey& other) const {
    return shape == other.shape && addresses == other.addresses;
  }
};

/// Counts of what the graph path did on a context (Context::graph_stats).
struct GraphCounters {
  std::int64_t launches = 0;   // graph launches (each a replayed call)
  std::int64_t captures = 0;   // captures that became a launched graph
  std::int64_t updates = 0;    // of those, applied to an existing executable by an update
  std::int64_t fallbacks = 0;  // calls that ran the direct path after a failed capture
  std::int64_t first_calls = 0;  // calls that ran directly as their key's first (default mode)
};

/// A bounded map GraphKey -> executable (an opaque handle), least recently used first out.
/// A null handle marks a key whose capture failed (`failures` times).
class GraphCache {
 public:
  using Destroy = std::function<void(void*)>;

  /// `destroy` frees one executable (never called with null); `capacity` >= 1.
  GraphCache(std::size_t capacity, Destroy destroy);
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  struct Entry {
    GraphKey key;
    void* exec = nullptr;
    int failures = 0;  // failed captures of this key (exec is null; 0 and null: seen once)
  };

  /// The entry with this exact key (made the most recent), or null.
  Entry* find(const GraphKey& key);
  /// The most recent entry with the same shape and a non-null executable, or null: the one
  /// an update would retarget.
  Entry* find_same_shape(const GraphKey& key);
  /// Gives `entry` (from find_same_shape) a new key after its executable was updated; an
  /// entry that already had that key is dropped. Makes it the most recent.
  void rekey(Entry* entry, const GraphKey& key);
  /// Records a failed capture of `key` (an entry with a null executable, made the most
  /// recent; an executable it had is destroyed) and returns how many there were.
  int note_failure(const GraphKey& key);
  /// Records the first call of `key` (an entry with a null executable and no failure, made
  /// the most recent), so that its next call is captured; an entry it had is replaced.
  void note_seen(const GraphKey& key);
  /// Removes `entry`, destroying its executable.
  void erase(Entry* entry);
  /// Adds (or replaces) the entry for `key`; evicts the least recent entries beyond the
  /// capacity, destroying their executables.
  void insert(const GraphKey& key, void* exec);
  /// Destroys every executable.
  void clear();

  std::size_t size() const { return entries_.size(); }
  /// Entries with an executable (size() less the failed and seen-once keys).
  std::size_t executables() const;
  std::size_t capacity() const { return capacity_; }
  GraphCounters counters;

 private:
  void drop(std::list<Entry>::iterator it);
  std::size_t capacity_;
  Destroy destroy_;
  std::list<Entry> entries_;  // most recent first
};

}  // namespace gpuqr::detail
