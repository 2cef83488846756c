#include "tokenizer/bpe.h"

#include <algorithm>
#include <functional>

#include "tokenizer/json_fields.h"
#include "core/utf8.h"

namespace verdict::tokenizer {

namespace {

using detail::fail;

// Ids must be dense enough to index tables: a file with an id beyond this is rejected.
constexpr int64_t kMaxTokenId = (int64_t{1} << 24) - 1;

struct Symbol {
  TokenId id;
  int32_t prev;
  int32_t next;
  bool removed;
};

struct Candidate {
  uint32_t rank;
  uint32_t pos;
  TokenId merged;
};

// Heap order: the lowest rank on top, the leftmost position on ties.
struct CandidateLess {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

struct MergeScratch {
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string piece;
};

MergeScratch& merge_scratch() {
  thread_local MergeScratch scratch;
  return scratch;
}

std::size_t shard_of(std::string_view word, std::size_t shards) {
  const auto first = static_cast<unsigned char>(word.front());
  const auto last = static_cast<unsigned char>(word.back());
  return (word.size() * 31u + first * 7u + last) % shards;
}

}  // namespace

std::size_t StringHash::operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }

void MergeTable::reserve(std::size_t n) {
  std::size_t capacity = 16;
  int bits = 4;
  while (capacity < n * 2) {
    capacity <<= 1;
    ++bits;
  }
  slots_.assign(capacity, Entry{kEmpty, 0, 0});
  shift_ = 64 - bits;
  size_ = 0;
}

void MergeTable::insert(TokenId a, TokenId b, uint32_t rank, TokenId merged) {
  if (slots_.empty() || (size_ + 1) * 2 > slots_.size()) {
    std::vector<Entry> old = std::move(slots_);
    reserve(std::max<std::size_t>(16, (size_ + 1) * 2));
    for (const Entry& e : old)
      if (e.key != kEmpty) insert(static_cast<TokenId>(e.key >> 32), static_cast<TokenId>(e.key & 0xFFFFFFFFu), e.rank, e.merged);
  }
  const uint64_t key = key_of(a, b);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = slot_of(key);; i = (i + 1) & mask) {
    Entry& e = slots_[i];
    if (e.key == kEmpty) {
      e = Entry{key, rank, merged};
      ++size_;
      return;
    }
    if (e.key == key) {
      e.rank = rank;
      e.merged = merged;
      return;
    }
  }
}

const MergeTable::Entry* MergeTable::find(TokenId a, TokenId b) const {
  if (slots_.empty()) return nullptr;
  const uint64_t key = key_of(a, b);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = slot_of(key);; i = (i + 1) & mask) {
    const Entry& e = slots_[i];
    if (e.key == key) return &e;
    if (e.key == kEmpty) return nullptr;
  }
}

std::unique_ptr<BpeModel> BpeModel::from_json(const Json& spec, ModelTables&& tables, const std::string& where) {
  detail::require_object(spec, where);
  std::unique_ptr<BpeModel> m(new BpeModel());
  if (const Json* type = detail::member(spec, "type")) {
    if (!type->is_string() || type->get<std::string>() != "BPE")
      fail(where, "unsupported model type " + detail::show(*type) + " (only BPE is implemented)");
  } else if (detail::member(spec, "merges") == nullptr && !tables.has_merges) {
    fail(where, "missing \"type\" (only BPE models are supported)");
  }
  if (const Json* dropout = detail::member(spec, "dropout")) {
    if (!dropout->is_number() || dropout->get<double>() != 0.0)
      fail(where, "BPE dropout " + detail::show(*dropout) + " is not supported (must be null)");
  }
  m->load_vocab(spec, tables, where);

  // Flags.
  m->continuing_subword_prefix_ = detail::get_optional_string(spec, "continuing_subword_prefix", where);
  m->end_of_word_suffix_ = detail::get_optional_string(spec, "end_of_word_suffix", where);
  m->fuse_unk_ = detail::get_bool(spec, "fuse_unk", false, where);
  m->byte_fallback_ = detail::get_bool(spec, "byte_fallback", false, where);
  m->ignore_merges_ = detail::get_bool(spec, "ignore_merges", false, where);
  const std::string unk = detail::get_optional_string(spec, "unk_token", where);
  if (detail::member(spec, "unk_token") != nullptr) {
    auto id = m->token_to_id(unk);
    if (!id) fail(where, "unk_token '" + unk + "' is not in the vocabulary");
    m->unk_id_ = id;
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
    m->byte_fallback_ids_[static_cast<std::size_t>(b)] = m->token_to_id(name).value_or(-1);
  }

  m->load_merges(spec, tables, where);
  m->cache_ = std::make_unique<CacheShard[]>(kCacheShards);
  return m;
}

void BpeModel::load_vocab(const Json& spec, ModelTables& tables, const std::string& where) {
  if (!tables.vocab_error.empty()) fail(where, tables.vocab_error);
  if (!tables.has_vocab) {  // small files built in memory keep it in the tree
    const Json* vocab = detail::member(spec, "vocab");
    if (vocab == nullptr || !vocab->is_object()) fail(where, "BPE needs a \"vocab\" object");
    for (auto it = vocab->begin(); it != vocab->end(); ++it) {
      if (!it.value().is_number_integer())
        fail(where, "vocab entry '" + it.key() + "' has invalid id " + detail::show(it.value()));
      tables.vocab.emplace_back(it.key(), it.value().get<int64_t>());
    }
  }
  vocab_.reserve(tables.vocab.size());
  TokenId max_id = -1;
  for (auto& [token, raw_id] : tables.vocab) {
    if (raw_id < 0 || raw_id > kMaxTokenId)
      fail(where, "vocab entry '" + token + "' has invalid id " + std::to_string(raw_id));
    const auto id = static_cast<TokenId>(raw_id);
    vocab_.insert_or_assign(std::move(token), id);
    max_id = std::max(max_id, id);
  }
  tables.vocab.clear();
  tables.vocab.shrink_to_fit();
  id_to_token_.resize(static_cast<std::size_t>(max_id + 1));
  has_token_.assign(static_cast<std::size_t>(max_id + 1), 0);
  for (const auto& [token, id] : vocab_) {
    id_to_token_[static_cast<std::size_t>(id)] = token;
    has_token_[static_cast<std::size_t>(id)] = 1;
  }
}

void BpeModel::load_merges(const Json& spec, ModelTables& tables, const std::string& where) {
  // [["a", "b"], ...] or the legacy ["a b", ...]; rank = position.
  if (!tables.merges_error.empty()) fail(where, tables.merges_error);
  if (!tables.has_merges) {
    if (const Json* merges = detail::member(spec, "merges")) {
      if (!merges->is_array()) fail(where, "\"merges\" must be an array");
      for (std::size_t rank = 0; rank < merges->size(); ++rank) {
        const Json& entry = (*merges)[rank];
        if (entry.is_string()) {
          const std::string& line = entry.get_ref<const std::string&>();
          const std::size_t space = line.find(' ');
          if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
            fail(where, "merge " + std::to_string(rank) + " " + detail::show(entry) +
                            " is not two tokens separated by one space");
          tables.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
        } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
          tables.merges.emplace_back(entry[0].get<std::string>(), entry[1].get<std::string>());
        } else {
          fail(where, "merge " + std::to_string(rank) + " must be [\"a\", \"b\"] or \"a b\", got " + detail::show(entry));
        }
      }
    }
  }
  const std::size_t prefix_len = continuing_subword_prefix_.size();
  merges_.reserve(tables.merges.size());
  std::string merged;
  for (std::size_t rank = 0; rank < tables.merges.size(); ++rank) {
    const auto& [a, b] = tables.merges[rank];
    const auto a_id = token_to_id(a);
    const auto b_id = token_to_id(b);
    if (!a_id) fail(where, "merge " + std::to_string(rank) + " uses '" + a + "', which is not in the vocabulary");
    if (!b_id) fail(where, "merge " + std::to_string(rank) + " uses '" + b + "', which is not in the vocabulary");
    if (b.size() < prefix_len)
      fail(where, "merge " + std::to_string(rank) + ": '" + b + "' is shorter than continuing_subword_prefix");
    merged.assign(a).append(b, prefix_len);
    const auto merged_id = token_to_id(merged);
    if (!merged_id)
      fail(where, "merge " + std::to_string(rank) + " gives '" + merged + "', which is not in the vocabulary");
    merges_.insert(*a_id, *b_id, static_cast<uint32_t>(rank), *merged_id);
  }
  tables.merges.clear();
  tables.merges.shrink_to_fit();
}

std::optional<TokenId> BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size() || !has_token_[static_cast<std::size_t>(id)])
    return nullptr;
  return &id_to_token_[static_cast<std::size_t>(id)];
}

std::optional<TokenId> BpeModel::lookup_piece(std::string_view piece, bool first, bool last,
                                              std::string& scratch) const {
  const bool with_prefix = !first && !continuing_subword_prefix_.empty();
  const bool with_suffix = last && !end_of_word_suffix_.empty();
  if (!with_prefix && !with_suffix) return token_to_id(piece);
  scratch.clear();
  if (with_prefix) scratch.append(continuing_subword_prefix_);
  scratch.append(piece);
  if (with_suffix) scratch.append(end_of_word_suffix_);
  return token_to_id(scratch);
}

void BpeModel::tokenize(std::string_view word, std::vector<TokenId>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = token_to_id(word)) {
      out.push_back(*id);
      return;
    }
  }
  if (word.size() > kMaxCachedWordBytes) {
    merge_word(word, out);
    return;
  }
  CacheShard& shard = cache_[shard_of(word, kCacheShards)];
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.words.find(word);
    if (it != shard.words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const std::size_t mark = out.size();
  merge_word(word, out);
  std::vector<TokenId> ids(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end());
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (shard.words.size() >= kCacheEntriesPerShard) shard.words.clear();
  shard.words.emplace(std::string(word), std::move(ids));
}

void BpeModel::merge_word(std::string_view word, std::vector<TokenId>& out) const {
  MergeScratch& scratch = merge_scratch();
  std::vector<Symbol>& symbols = scratch.symbols;
  symbols.clear();
  auto add = [&](TokenId id) {
    const auto pos = static_cast<int32_t>(symbols.size());
    if (pos > 0) symbols.back().next = pos;
    symbols.push_back(Symbol{id, pos - 1, -1, false});
  };

  // Initial symbols: one per character (with prefix / suffix), unknown characters as in Hugging Face.
  TokenId pending_unk = -1;  // an unknown run not yet added (-1: none)
  const std::size_t n = word.size();
  for (std::size_t i = 0; i < n;) {
    const std::size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(word[i])), n - i);
    const std::string_view piece = word.substr(i, len);
    const bool first = i == 0;
    i += len;
    const bool last = i == n;
    if (auto id = lookup_piece(piece, first, last, scratch.piece)) {
      if (pending_unk >= 0) {
        add(pending_unk);
        pending_unk = -1;
      }
      add(*id);
      continue;
    }
    if (byte_fallback_) {
      std::string bytes;
      if (!first) bytes.append(continuing_subword_prefix_);
      bytes.append(piece);
      if (last) bytes.append(end_of_word_suffix_);
      const bool all = std::all_of(bytes.begin(), bytes.end(), [&](char c) {
        return byte_fallback_ids_[static_cast<unsigned char>(c)] >= 0;
      });
      if (all) {
        for (char c : bytes) add(byte_fallback_ids_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk >= 0 && !fuse_unk_) add(pending_unk);
      pending_unk = *unk_id_;
    }
  }
  if (pending_unk >= 0) add(pending_unk);
  if (symbols.empty()) return;

  // Merge loop: lowest rank first, leftmost on ties; stale heap entries are skipped.
  std::vector<Candidate>& heap = scratch.heap;
  heap.clear();
  const CandidateLess less;
  for (std::size_t p = 0; p + 1 < symbols.size(); ++p) {
    if (const MergeTable::Entry* e = merges_.find(symbols[p].id, symbols[p + 1].id))
      heap.push_back(Candidate{e->rank, static_cast<uint32_t>(p), e->merged});
  }
  std::make_heap(heap.begin(), heap.end(), less);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), less);
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.pos];
    if (left.removed || left.next < 0) continue;
    Symbol& right = symbols[static_cast<std::size_t>(left.next)];
    const MergeTable::Entry* current = merges_.find(left.id, right.id);
    if (current == nullptr || current->merged != top.merged) continue;
    left.id = top.merged;
    right.removed = true;
    left.next = right.next;
    if (left.next >= 0) symbols[static_cast<std::size_t>(left.next)].prev = static_cast<int32_t>(top.pos);
    if (left.prev >= 0) {
      const Symbol& before = symbols[static_cast<std::size_t>(left.prev)];
      if (const MergeTable::Entry* e = merges_.find(before.id, left.id)) {
        heap.push_back(Candidate{e->rank, static_cast<uint32_t>(left.prev), e->merged});
        std::push_heap(heap.begin(), heap.end(), less);
      }
    }
    if (left.next >= 0) {
      const Symbol& after = symbols[static_cast<std::size_t>(left.next)];
      if (const MergeTable::Entry* e = merges_.find(left.id, after.id)) {
        heap.push_back(Candidate{e->rank, top.pos, e->merged});
        std::push_heap(heap.begin(), heap.end(), less);
      }
    }
  }
  for (const Symbol& s : symbols)
    if (!s.removed) out.push_back(s.id);
  // Do not keep the memory of a huge word around in this thread.
  constexpr std::size_t kKeep = 1 << 16;
  if (symbols.capacity() > kKeep) std::vector<Symbol>().swap(symbols);
  if (heap.capacity() > kKeep) std::vector<Candidate>().swap(heap);
}

}  // namespace verdict::tokenizer
