#include "decision/encoder.h"

#include <algorithm>

#include "decision/render.h"

namespace verdict::decision {

namespace {

// "OPTION j: " is tokenized once for j up to this (the default choice limit is 255).
constexpr std::size_t kCachedOptionLabels = 256;

void append(std::vector<TokenId>& dst, const std::vector<TokenId>& src) {
  dst.insert(dst.end(), src.begin(), src.end());
}

}  // namespace

ByteTokenizer::ByteTokenizer(std::vector<std::pair<std::string, TokenId>> specials)
    : specials_(std::move(specials)) {
  specials_.erase(
      std::remove_if(specials_.begin(), specials_.end(), [](const auto& s) { return s.first.empty(); }),
      specials_.end());
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::vector<TokenId> ByteTokenizer::encode(std::string_view piece) const {
  std::vector<TokenId> ids;
  ids.reserve(piece.size());
  std::size_t i = 0;
  while (i < piece.size()) {
    bool matched = false;
    for (const auto& [text, id] : specials_) {
      if (piece.compare(i, text.size(), text) == 0) {
        ids.push_back(id);
        i += text.size();
        matched = true;
        break;
      }
    }
    if (!matched) ids.push_back(static_cast<TokenId>(static_cast<unsigned char>(piece[i++])));
  }
  return ids;
}

std::string prefix_piece() {
  return "<|im_start|>system\n" + std::string(kSystemPrompt) + "<|im_end|>\n<|im_start|>user\nSTATE:\n";
}

std::string option_label_piece(std::size_t j) { return "OPTION " + std::to_string(j) + ": "; }

std::string field_piece(std::size_t i, const Question& question) {
  return "\nFIELD " + std::to_string(i) + "\nID: " + question.id +
         "\nTYPE: " + std::string(question_type_name(question.type)) + "\nINSTRUCTION: ";
}

std::string option_semantics_piece(const Option& option) {
  Value semantics = Value::object();
  semantics.set("option_id", Value::string(option.id));
  if (option.description) semantics.set("description", *option.description);
  return render(semantics);
}

std::vector<Piece> record_pieces(const DecisionRequest& request) {
  std::vector<Piece> pieces;
  pieces.push_back({PieceKind::kPrefix, prefix_piece()});
  pieces.push_back({PieceKind::kState, render(request.state)});
  pieces.push_back({PieceKind::kHeader, std::string(kHeaderPiece)});
  for (std::size_t i = 0; i < request.questions.size(); ++i) {
    const Question& q = request.questions[i];
    pieces.push_back({PieceKind::kField, field_piece(i + 1, q), i});
    pieces.push_back({PieceKind::kInstruction, render(q.instruction), i});
    pieces.push_back({PieceKind::kAllowed, std::string(kAllowedPiece), i});
    for (std::size_t j = 0; j < q.options.size(); ++j) {
      pieces.push_back({PieceKind::kOptionLabel, option_label_piece(j + 1), i, j});
      pieces.push_back({PieceKind::kOptionSemantics, option_semantics_piece(q.options[j]), i, j});
      pieces.push_back({PieceKind::kOptionEnd, std::string(kOptionEndPiece), i, j});
    }
    pieces.push_back({PieceKind::kFieldEnd, std::string(kFieldEndPiece), i});
  }
  pieces.push_back({PieceKind::kSuffix, std::string(kSuffixPiece)});
  return pieces;
}

std::string record_text(const DecisionRequest& request) {
  std::string text;
  for (const Piece& p : record_pieces(request)) text += p.text;
  return text;
}

RecordEncoder::RecordEncoder(const PieceTokenizer& tokenizer) : tok_(tokenizer) {
  prefix_ = tok_.encode(prefix_piece());
  header_ = tok_.encode(kHeaderPiece);
  allowed_ = tok_.encode(kAllowedPiece);
  option_end_ = tok_.encode(kOptionEndPiece);
  field_end_ = tok_.encode(kFieldEndPiece);
  suffix_ = tok_.encode(kSuffixPiece);
  option_labels_.reserve(kCachedOptionLabels);
  for (std::size_t j = 1; j <= kCachedOptionLabels; ++j) {
    option_labels_.push_back(tok_.encode(option_label_piece(j)));
  }
}

const std::vector<TokenId>& RecordEncoder::option_label(std::size_t j, std::vector<TokenId>& scratch) const {
  if (j >= 1 && j <= option_labels_.size()) return option_labels_[j - 1];
  scratch = tok_.encode(option_label_piece(j));
  return scratch;
}

EncodedRecord RecordEncoder::encode(const DecisionRequest& request, std::size_t max_length,
                                    bool truncate) const {
  if (!request.images.empty() || !request.audio.empty() || !request.videos.empty()) {
    throw Error("record encoding: media placeholders are not implemented");
  }
  EncodedRecord rec;
  std::vector<TokenId> schema = header_;
  std::vector<TokenId> scratch;
  for (std::size_t i = 0; i < request.questions.size(); ++i) {
    const Question& q = request.questions[i];
    EncodedQuestion eq;
    eq.question_id = q.id;
    eq.type_id = question_type_id(q.type);
    append(schema, tok_.encode(field_piece(i + 1, q)));
    eq.question_span.begin = schema.size();
    append(schema, tok_.encode(render(q.instruction)));
    eq.question_span.end = schema.size();
    append(schema, allowed_);
    for (std::size_t j = 0; j < q.options.size(); ++j) {
      append(schema, option_label(j + 1, scratch));
      Span span;
      span.begin = schema.size();
      append(schema, tok_.encode(option_semantics_piece(q.options[j])));
      span.end = schema.size();
      eq.option_spans.push_back(span);
      eq.option_ids.push_back(q.options[j].id);
      append(schema, option_end_);
    }
    append(schema, field_end_);
    rec.questions.push_back(std::move(eq));
  }
  std::vector<TokenId> state = tok_.encode(render(request.state));

  rec.prefix_tokens = prefix_.size();
  rec.state_tokens = state.size();
  rec.fixed_tokens = prefix_.size() + schema.size() + suffix_.size();
  const std::size_t needed = rec.fixed_tokens + rec.state_tokens;
  if (!truncate) {
    if (needed > max_length) {
      throw DecisionError(413, "context_length_exceeded",
                          "maximum context length exceeded: request needs " + std::to_string(needed) +
                              " tokens; maximum is " + std::to_string(max_length));
    }
    rec.state_tokens_kept = rec.state_tokens;
  } else {
    if (rec.fixed_tokens > max_length) {
      throw DecisionError(413, "context_length_exceeded",
                          "maximum context length exceeded: schema requires " +
                              std::to_string(rec.fixed_tokens) + " tokens before state; maximum is " +
                              std::to_string(max_length));
    }
    rec.state_tokens_kept = std::min(rec.state_tokens, max_length - rec.fixed_tokens);
  }

  const std::size_t offset = rec.prefix_tokens + rec.state_tokens_kept;
  for (EncodedQuestion& eq : rec.questions) {
    eq.question_span.begin += offset;
    eq.question_span.end += offset;
    for (Span& s : eq.option_spans) {
      s.begin += offset;
      s.end += offset;
    }
  }
  rec.input_ids.reserve(rec.fixed_tokens + rec.state_tokens_kept);
  append(rec.input_ids, prefix_);
  rec.input_ids.insert(rec.input_ids.end(), state.begin(),
                       state.begin() + static_cast<std::ptrdiff_t>(rec.state_tokens_kept));
  append(rec.input_ids, schema);
  append(rec.input_ids, suffix_);
  return rec;
}

std::vector<int64_t> record_seams(const EncodedRecord& record) {
  std::vector<int64_t> seams;
  const auto length = static_cast<int64_t>(record.input_ids.size());
  for (std::size_t end : {record.prefix_tokens, record.prefix_tokens + record.state_tokens_kept}) {
    const auto seam = static_cast<int64_t>(end);
    if (seam > 0 && seam < length && (seams.empty() || seam > seams.back())) seams.push_back(seam);
  }
  return seams;
}

}  // namespace verdict::decision
