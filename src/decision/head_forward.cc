// JointSchemaHead forward for one record (clef-decision.md §6.4).
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/scratch.h"
#include "decision/head.h"
#include "decision/head_math.h"
#include "decision/head_weights.h"

namespace verdict::decision {

namespace {

using head_math::Mat;

void check_input(const HeadConfig& c, const HeadInput& in) {
  const std::size_t len = in.input_ids.size();
  if (len == 0) throw Error("joint head: empty record");
  if (in.hidden.size() != len * c.hidden_size) {
    throw Error("joint head: " + std::to_string(in.hidden.size()) + " hidden values for " +
                std::to_string(len) + " tokens of hidden size " + std::to_string(c.hidden_size));
  }
  if (!in.lexical) throw Error("joint head: no lexical table");
  auto check_span = [&](const Span& s, const std::string& what) {
    if (s.begin >= s.end || s.end > len) {
      throw Error("joint head: " + what + " [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
                  ") is empty or outside the record of " + std::to_string(len) + " tokens");
    }
  };
  for (const EncodedQuestion& q : in.questions) {
    if (q.type_id < 0 || q.type_id > 2) throw Error("joint head: type id " + std::to_string(q.type_id));
    if (q.option_spans.empty()) throw Error("joint head: question '" + q.question_id + "' has no options");
    check_span(q.question_span, "question span of '" + q.question_id + "'");
    for (const Span& s : q.option_spans) check_span(s, "option span of '" + q.question_id + "'");
  }
}

// Arithmetic mean of rows [begin, end) of x, accumulated in double.
template <class T>
void span_mean(const Mat<T>& x, const Span& s, T* out) {
  std::vector<double> acc(x.cols, 0.0);
  for (std::size_t t = s.begin; t < s.end; ++t) {
    const T* r = x.row(t);
    for (std::size_t k = 0; k < x.cols; ++k) acc[k] += static_cast<double>(r[k]);
  }
  for (std::size_t k = 0; k < x.cols; ++k) out[k] = static_cast<T>(acc[k] / static_cast<double>(s.size()));
}

template <class T>
QuestionLogits run(const HeadConfig& c, const HeadWeights& w, const HeadInput& in) {
  using namespace head_math;
  const std::size_t len = in.input_ids.size();
  const std::size_t hs = c.hidden_size;
  const std::size_t width = c.width;
  const std::size_t nq = in.questions.size();
  if (nq == 0) return {};

  Mat<T> x(len, hs);
  for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<T>(in.hidden[i]);
  layer_norm(x, w.hidden_norm);
  const Mat<T> memory = linear(x, w.memory_projection);
  Mat<T> g(1, hs);
  std::copy(x.row(len - 1), x.row(len - 1) + hs, g.row(0));

  // Span means: questions, option contexts, option lexical vectors.
  std::size_t n_opt = 0;
  for (const EncodedQuestion& q : in.questions) n_opt += q.option_spans.size();
  Mat<T> qv(nq, hs), cv(n_opt, hs), lv(n_opt, hs);
  std::vector<std::size_t> owner(n_opt);
  std::vector<float> lex_row(hs);
  std::vector<double> lex_acc(hs);
  for (std::size_t i = 0, o = 0; i < nq; ++i) {
    const EncodedQuestion& q = in.questions[i];
    span_mean(x, q.question_span, qv.row(i));
    for (const Span& s : q.option_spans) {
      owner[o] = i;
      span_mean(x, s, cv.row(o));
      std::fill(lex_acc.begin(), lex_acc.end(), 0.0);
      for (std::size_t t = s.begin; t < s.end; ++t) {
        in.lexical(in.input_ids[t], lex_row);
        for (std::size_t k = 0; k < hs; ++k) lex_acc[k] += static_cast<double>(lex_row[k]);
      }
      for (std::size_t k = 0; k < hs; ++k)
        lv.row(o)[k] = static_cast<T>(lex_acc[k] / static_cast<double>(s.size()));
      ++o;
    }
  }

  // Option queries and evidence routing.
  Mat<T> y = linear(cv, w.option_context_projection);
  add_in_place(y, linear(lv, w.option_lexical_projection));
  const Mat<T> oq = linear(qv, w.option_question_projection);
  for (std::size_t o = 0; o < n_opt; ++o) {
    for (std::size_t k = 0; k < width; ++k) y.row(o)[k] += oq.row(owner[o])[k];
  }
  for (const EvidenceLayerWeights& e : w.evidence_layers) {
    const Mat<T> mem_n = layer_normed(memory, e.memory_norm);
    add_in_place(y, attention(layer_normed(y, e.query_norm), mem_n, e.attention, c.heads));
    Mat<T> h = linear(layer_normed(y, e.feedforward_norm), e.feedforward0);
    gelu(h);
    add_in_place(y, linear(h, e.feedforward3));
  }

  // Per-question option summary and field vectors.
  const Mat<T> b = linear(qv, w.question_projection);
  const Mat<T> gp = linear(g, w.global_projection);
  Mat<T> summary(nq, width);
  const T inv_sqrt_w = T(1) / std::sqrt(static_cast<T>(width));
  for (std::size_t i = 0, o0 = 0; i < nq; ++i) {
    const std::size_t n = in.questions[i].option_spans.size();
    std::vector<T> a(n);
    T max = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < n; ++j) {
      a[j] = dot(y.row(o0 + j), b.row(i), width) * inv_sqrt_w;
      max = std::max(max, a[j]);
    }
    T sum = 0;
    for (T& v : a) {
      v = std::exp(v - max);
      sum += v;
    }
    for (std::size_t j = 0; j < n; ++j) {
      const T aj = a[j] / sum;
      for (std::size_t k = 0; k < width; ++k) summary.row(i)[k] += aj * y.row(o0 + j)[k];
    }
    o0 += n;
  }
  layer_norm(summary, w.option_summary_norm);
  Mat<T> fields(nq, width);
  for (std::size_t i = 0; i < nq; ++i) {
    const float* type_row =
        w.type_embedding.data() + static_cast<std::size_t>(in.questions[i].type_id) * width;
    for (std::size_t k = 0; k < width; ++k) {
      fields.row(i)[k] = ((b.row(i)[k] + summary.row(i)[k]) + gp.row(0)[k]) + static_cast<T>(type_row[k]);
    }
  }
  for (const FieldLayerWeights& l : w.layers) {
    const Mat<T> n1 = layer_normed(fields, l.norm1);
    add_in_place(fields, attention(n1, n1, l.self_attn, c.heads));
    add_in_place(fields, attention(layer_normed(fields, l.norm2), memory, l.multihead_attn, c.heads));
    Mat<T> h = linear(layer_normed(fields, l.norm3), l.linear1);
    gelu(h);
    add_in_place(fields, linear(h, l.linear2));
  }
  layer_norm(fields, w.field_norm);
  const Mat<T> opts = layer_normed(y, w.option_norm);

  // Residual scorer on [f ; o ; f⊙o ; |f−o|].
  Mat<T> feats(n_opt, 4 * width);
  for (std::size_t o = 0; o < n_opt; ++o) {
    const T* f = fields.row(owner[o]);
    const T* op = opts.row(o);
    T* z = feats.row(o);
    for (std::size_t k = 0; k < width; ++k) {
      z[k] = f[k];
      z[width + k] = op[k];
      z[2 * width + k] = f[k] * op[k];
      z[3 * width + k] = std::abs(f[k] - op[k]);
    }
  }
  Mat<T> r1 = linear(feats, w.residual_scorer0);
  gelu(r1);
  const Mat<T> resid = linear(r1, w.residual_scorer3);

  const T ln100 = std::log(T(100));
  const T prior_scale = std::exp(std::min(static_cast<T>(w.prior_logit_scale), ln100));
  const T joint_scale = std::exp(std::min(static_cast<T>(w.joint_logit_scale), ln100));
  const T gate = T(1) / (T(1) + std::exp(-static_cast<T>(w.residual_gate)));

  QuestionLogits logits(nq);
  std::vector<T> qg(hs);
  for (std::size_t i = 0, o = 0; i < nq; ++i) {
    for (std::size_t k = 0; k < hs; ++k) qg[k] = qv.row(i)[k] + g.row(0)[k];
    const std::vector<T> qg_n = normalized(qg.data(), hs, static_cast<T>(1e-12));
    const std::vector<T> f_n = normalized(fields.row(i), width, static_cast<T>(1e-8));
    for (std::size_t j = 0; j < in.questions[i].option_spans.size(); ++j, ++o) {
      const std::vector<T> l_n = normalized(lv.row(o), hs, static_cast<T>(1e-12));
      const std::vector<T> o_n = normalized(opts.row(o), width, static_cast<T>(1e-8));
      const T prior = prior_scale * dot(l_n.data(), qg_n.data(), hs);
      const T cosv = dot(f_n.data(), o_n.data(), width);
      const T joint = joint_scale * cosv + resid.row(o)[0];
      logits[i].push_back(static_cast<double>(prior + gate * joint));
    }
  }
  return logits;
}

// The heads' matrices (head_math.h) come from arenas lent for the call: a 342-token record's take 8 MiB, which
// the heap of a server thread faulted in afresh on most decisions (docs/performance.md, "The joint head's
// matrices in lent arenas"). Up to 4 idle arenas stay, each keeping up to 64 MiB (records of ~4,000 tokens; a
// longer one's arena gives its memory back when the call ends).
ScratchArenaPool& head_arenas() {
  static ScratchArenaPool& pool = *new ScratchArenaPool(4, std::size_t{64} << 20);  // never destroyed: a request
  return pool;                                                                       // thread may outlive main()
}

}  // namespace

QuestionLogits JointHead::forward(const HeadInput& input, HeadPrecision precision) const {
  check_input(config_, input);
  ScratchArenaPool::Lease lease(head_arenas());
  const ScratchArena::Use use(lease.arena());
  if (precision == HeadPrecision::kF64) return run<double>(config_, *weights_, input);
  return run<float>(config_, *weights_, input);
}

}  // namespace verdict::decision
