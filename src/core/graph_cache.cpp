// GraphCache (src/core/graph_cache.hpp): a short list, most recent first. Sixteen entries are
// searched linearly faster than any map would be hashed.
#include "src/core/graph_cache.hpp"

#include <stdexcept>
#include <utility>

namespace gpuqr::detail {

void GraphKey::add_shape(std::int64_t value) {
  if (shape_used >= kShapeSlots) throw std::length_error("GraphKey: too many shape values");
  shape[static_cast<std::size_t>(shape_used++)] = value;
}

void GraphKey::add_address(const void* p) {
  if (addresses_used >= kAddressSlots) throw std::length_error("GraphKey: too many addresses");
  addresses[static_cast<std::size_t>(addresses_used++)] = reinterpret_cast<std::uintptr_t>(p);
}

GraphCache::GraphCache(std::size_t capacity, Destroy destroy)
    : capacity_(capacity < 1 ? 1 : capacity), destroy_(std::move(destroy)) {}

GraphCache::~GraphCache() { clear(); }

GraphCache::Entry* GraphCache::find(const GraphKey& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return &entries_.front();
    }
  }
  return nullptr;
}

GraphCache::Entry* GraphCache::find_same_shape(const GraphKey& key) {
  for (Entry& e : entries_) {
    if (e.exec != nullptr && e.key.same_shape(key)) return &e;
  }
  return nullptr;
}

void GraphCache::rekey(Entry* entry, const GraphKey& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (&*it != entry && it->key == key) {
      drop(it);
      break;
    }
  }
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (&*it == entry) {
      it->key = key;
      entries_.splice(entries_.begin(), entries_, it);
      return;
    }
  }
}

int GraphCache::note_failure(const GraphKey& key) {
  int failures = 1;
  if (Entry* e = find(key)) failures = e->exec == nullptr ? e->failures + 1 : 1;
  insert(key, nullptr);
  entries_.front().failures = failures;
  return failures;
}

void GraphCache::note_seen(const GraphKey& key) { insert(key, nullptr); }

std::size_t GraphCache::executables() const {
  std::size_t n = 0;
  for (const Entry& e : entries_) n += e.exec != nullptr ? 1 : 0;
  return n;
}

void GraphCache::erase(Entry* entry) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (&*it == entry) {
      drop(it);
      return;
    }
  }
}

void GraphCache::insert(const GraphKey& key, void* exec) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      drop(it);
      break;
    }
  }
  entries_.push_front(Entry{key, exec});
  while (entries_.size() > capacity_) drop(std::prev(entries_.end()));
}

void GraphCache::clear() {
  while (!entries_.empty()) drop(entries_.begin());
}

void GraphCache::drop(std::list<Entry>::iterator it) {
  void* exec = it->exec;
  entries_.erase(it);
  if (exec != nullptr && destroy_) destroy_(exec);
}

}  // namespace gpuqr::detail
