// Record encoding (clef-decision.md §4): the literal pieces of one Clef record, each tokenized on
// its own through a PieceTokenizer, the question and option spans, and the length budget with the
// refuse / truncate policies of §4.10.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "decision/request.h"

namespace verdict::decision {

using TokenId = int32_t;

// Text -> ids for one piece, special-token text parsed, no BOS/EOS (§3).
class PieceTokenizer {
 public:
  virtual ~PieceTokenizer() = default;
  virtual std::vector<TokenId> encode(std::string_view piece) const = 0;
};

// Ids = the UTF-8 bytes of the piece (0–255), except that each occurrence of one of `specials`
// (scanned left to right, longest match first) becomes its id. With no specials this is the byte
// mode of judge-clef's fixture; with the Qwen specials it is the `byte_special` tokenizer of the
// clef-systemone fixture.
class ByteTokenizer final : public PieceTokenizer {
 public:
  ByteTokenizer() = default;
  explicit ByteTokenizer(std::vector<std::pair<std::string, TokenId>> specials);
  std::vector<TokenId> encode(std::string_view piece) const override;

 private:
  std::vector<std::pair<std::string, TokenId>> specials_;  // longest first
};

// The constants of §4.2.
inline constexpr std::string_view kSystemPrompt =
    "Read the complete state and schema. Decide every field jointly. Each answer must be exactly one "
    "of that field's allowed options.";
std::string prefix_piece();  // P
inline constexpr std::string_view kHeaderPiece = "\n\nSCHEMA FIELDS:\n";
inline constexpr std::string_view kAllowedPiece = "\nALLOWED OPTIONS:\n";
inline constexpr std::string_view kOptionEndPiece = "\n";
inline constexpr std::string_view kFieldEndPiece = "END FIELD\n";
inline constexpr std::string_view kSuffixPiece =
    "\n<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nJOINT SCHEMA DECISIONS:";

enum class PieceKind {
  kPrefix,           // P
  kState,            // S (uncut)
  kHeader,           // H
  kField,            // F_i
  kInstruction,      // I_i (question span)
  kAllowed,          // A
  kOptionLabel,      // O_j
  kOptionSemantics,  // D_ij (option span)
  kOptionEnd,        // E
  kFieldEnd,         // Z
  kSuffix,           // X
};

struct Piece {
  PieceKind kind;
  std::string text;
  std::size_t question = 0;  // 0-based, for field pieces
  std::size_t option = 0;    // 0-based, for option pieces
};

// Every piece in record order [P, S, H, F1, I1, A, O1, D11, E, …, Z, F2, …, X] (no media).
std::vector<Piece> record_pieces(const DecisionRequest& request);
// The concatenated pieces (state uncut): the record as text, for --explain.
std::string record_text(const DecisionRequest& request);

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const Span&) const = default;
};

struct EncodedQuestion {
  std::string question_id;
  int type_id = 0;
  Span question_span;
  std::vector<Span> option_spans;       // head order (§4.5)
  std::vector<std::string> option_ids;  // same order
};

struct EncodedRecord {
  std::vector<TokenId> input_ids;
  std::vector<EncodedQuestion> questions;  // request order
  std::size_t prefix_tokens = 0;           // len(P) + len(M)
  std::size_t state_tokens = 0;            // len(S) before any cut
  std::size_t state_tokens_kept = 0;
  std::size_t fixed_tokens = 0;  // len(P) + len(M) + len(schema) + len(X)

  std::size_t needed_tokens() const { return fixed_tokens + state_tokens; }
  std::size_t dropped_tokens() const { return state_tokens - state_tokens_kept; }
};

// Where a record's backbone prefill restarts its chunk grid, ascending and inside the record: the end
// of the prefix (P, and M for media) and the end of the kept state, where the schema starts. The
// prefix is the same in every text record of a tokenizer and the state is often sent again with other
// questions: a prefix cache resumes records at these seams (clef-decision.md §5, "Prefix cache").
std::vector<int64_t> record_seams(const EncodedRecord& record);

// Encodes records with one tokenizer; the constant pieces are tokenized once (§3). Thread-safe
// for concurrent encode() calls if the tokenizer is. The tokenizer must outlive the encoder.
class RecordEncoder {
 public:
  explicit RecordEncoder(const PieceTokenizer& tokenizer);

  // Encodes `request` for a model of `max_length` tokens. Refuse mode (truncate = false): a record
  // longer than max_length is refused (413 "maximum context length exceeded: request needs …").
  // Truncate mode: the state's tail is cut; a schema that alone exceeds max_length is refused
  // (413 "… schema requires …"). Media is not implemented here: requests carrying media throw.
  EncodedRecord encode(const DecisionRequest& request, std::size_t max_length, bool truncate) const;

  const PieceTokenizer& tokenizer() const { return tok_; }

 private:
  const std::vector<TokenId>& option_label(std::size_t j, std::vector<TokenId>& scratch) const;

  const PieceTokenizer& tok_;
  std::vector<TokenId> prefix_, header_, allowed_, option_end_, field_end_, suffix_;
  std::vector<std::vector<TokenId>> option_labels_;  // "OPTION j: " for j = 1..size()
};

// "OPTION j: " (j 1-based).
std::string option_label_piece(std::size_t j);
// "\nFIELD i\nID: …\nTYPE: …\nINSTRUCTION: " (i 1-based).
std::string field_piece(std::size_t i, const Question& question);
// render({"option_id": id, "description": …}) (§4.5).
std::string option_semantics_piece(const Option& option);

}  // namespace verdict::decision
