// The BPE model of tokenizer.json ("model": {"type": "BPE"}): vocabulary, ranked merges and the flags
// unk_token, continuing_subword_prefix, end_of_word_suffix, fuse_unk, byte_fallback, ignore_merges
// (dropout must be null or 0). Words are merged lowest rank first, leftmost on ties, as Hugging Face does;
// results are kept in a bounded, thread-safe word cache.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/json.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_file.h"

namespace verdict::tokenizer {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept;
};

using StringIdMap = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

// Open-addressing map (id a, id b) -> (rank, merged id).
class MergeTable {
 public:
  struct Entry {
    uint64_t key;
    uint32_t rank;
    TokenId merged;
  };
  void reserve(std::size_t n);
  // Inserts or overwrites (a later duplicate merge wins, as in Hugging Face's HashMap).
  void insert(TokenId a, TokenId b, uint32_t rank, TokenId merged);
  const Entry* find(TokenId a, TokenId b) const;
  std::size_t size() const { return size_; }

 private:
  static uint64_t key_of(TokenId a, TokenId b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  std::size_t slot_of(uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  static constexpr uint64_t kEmpty = ~0ull;
  std::vector<Entry> slots_;
  int shift_ = 64;
  std::size_t size_ = 0;
};

class BpeModel {
 public:
  // Builds the model from the "model" object, whose vocab / merges may have been read into `tables`
  // (see tokenizer_file.h); throws verdict::Error("<where>: ...").
  static std::unique_ptr<BpeModel> from_json(const Json& spec, ModelTables&& tables, const std::string& where);

  // Appends the ids of one pre-tokenized word (non-empty valid UTF-8).
  void tokenize(std::string_view word, std::vector<TokenId>& out) const;

  std::optional<TokenId> token_to_id(std::string_view token) const;
  // nullptr when no vocabulary entry has this id.
  const std::string* id_to_token(TokenId id) const;
  std::size_t vocab_size() const { return vocab_.size(); }
  // Largest id in the vocabulary, -1 when empty.
  TokenId max_id() const { return static_cast<TokenId>(id_to_token_.size()) - 1; }

 private:
  BpeModel() = default;
  void merge_word(std::string_view word, std::vector<TokenId>& out) const;
  void load_vocab(const Json& spec, ModelTables& tables, const std::string& where);
  void load_merges(const Json& spec, ModelTables& tables, const std::string& where);
  std::optional<TokenId> lookup_piece(std::string_view piece, bool first, bool last, std::string& scratch) const;

  StringIdMap vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<uint8_t> has_token_;
  MergeTable merges_;
  std::optional<TokenId> unk_id_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::array<TokenId, 256> byte_fallback_ids_{};  // <0xXX> tokens, -1 when absent

  // Word cache, sharded to keep lock contention low when many threads encode at once.
  static constexpr std::size_t kCacheShards = 16;
  static constexpr std::size_t kCacheEntriesPerShard = 4096;
  static constexpr std::size_t kMaxCachedWordBytes = 256;
  struct CacheShard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<TokenId>, StringHash, std::equal_to<>> words;
  };
  mutable std::unique_ptr<CacheShard[]> cache_;
};

}  // namespace verdict::tokenizer
