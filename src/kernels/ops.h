// The public op table of verdict's compute kernels.
//
// Every op here dispatches at run time to the best implementation this CPU supports (AVX-512, AVX2,
// or portable scalar code; see isa.h) and, for the large ones, spreads the work over the kernel
// thread pool (thread_pool.h). Each optimized op has a plain scalar twin in kernels/ref/ref.h, the
// definition of correct, and a test comparing the two.
//
// Conventions: activations are fp32 and row-major; a weight matrix is [rows, cols] = PyTorch
// [out, in], applied as y = W·x; accumulation is fp32 (never lower).
#pragma once
#include <cstdint>
#include <span>

namespace verdict::kernels {

enum class WeightType : uint8_t {
  F32,        // fp32 values
  BF16,       // bfloat16 values, upcast exactly inside the kernel
  MlxAffine,  // MLX affine quantization: W[r, c] = scale[r, c/gs] · q[r, c] + bias[r, c/gs]
  // ggml block types: raw row-major block data in WeightMatrix::blocks (row r at blocks + r · row_bytes()),
  // dequantized exactly as ggml's dequantize_row_* (fp32 arithmetic in ggml's order, no fused multiply-add).
  F16,   // IEEE half values, 2 bytes each (little-endian)
  Q8_0,  // 32-value blocks of 34 bytes {f16 d; int8 q[32]}: W = q · d
  Q4_0,  // 32-value blocks of 18 bytes {f16 d; uint8 qs[16]}: element i < 16 is the low nibble of qs[i],
         // i ≥ 16 the high nibble of qs[i − 16]; W = (q − 8) · d
  Q4_K,  // 256-value super-blocks of 144 bytes, ggml's block_q4_K {f16 d; f16 dmin; uint8 scales[12];
         // uint8 qs[128]}: 8 sub-blocks of 32 with 6-bit scale/min (get_scale_min_k4); W = (d·sc)·q − dmin·m
  Q6_K,  // 256-value super-blocks of 210 bytes, ggml's block_q6_K {uint8 ql[128]; uint8 qh[64];
         // int8 scales[16]; f16 d}: W = (d · scale) · (q − 32)
  Q5_K,  // 256-value super-blocks of 176 bytes, ggml's block_q5_K {f16 d; f16 dmin; uint8 scales[12];
         // uint8 qh[32]; uint8 qs[128]}: Q4_K's scales and nibbles, plus bit j of qh[l] as bit 4 of value l
         // of sub-block j; W = (d·sc)·q − dmin·m, q ∈ [0, 31]
  Q3_K,  // 256-value super-blocks of 110 bytes, ggml's block_q3_K {uint8 hmask[32]; uint8 qs[64];
         // uint8 scales[12]; f16 d}: value e's low 2 bits at bits 2·((e % 128) / 32) of qs[32·(e / 128) + e % 32],
         // its high bit at bit e / 32 of hmask[e % 32] (q = low + 4 · high ∈ [0, 7]); 16 6-bit scales sc;
         // W = (d · (sc − 32)) · (q − 4)
  IQ4_NL,  // 32-value blocks of 18 bytes, ggml's block_iq4_nl {f16 d; uint8 qs[16]}: Q4_0's nibble layout, but
           // each nibble n picks a value of the non-linear table kIq4Values (below); W = d · kIq4Values[n]
  IQ4_XS,  // 256-value super-blocks of 136 bytes, ggml's block_iq4_xs {f16 d; uint16 scales_h; uint8 scales_l[4];
           // uint8 qs[128]}: 8 sub-blocks of 32, each with IQ4_NL's nibble layout in qs[16 · j ..] and a 6-bit
           // scale ls (low 4 bits: nibble j % 2 of scales_l[j / 2], high 2: bits 2j of scales_h);
           // W = (d · (ls − 32)) · kIq4Values[n]
  Q4_1,  // 32-value blocks of 20 bytes, ggml's block_q4_1 {f16 d; f16 m; uint8 qs[16]}: Q4_0's nibble layout;
         // W = q · d + m
  Q5_0,  // 32-value blocks of 22 bytes, ggml's block_q5_0 {f16 d; uint8 qh[4]; uint8 qs[16]}: Q4_0's nibbles as
         // the low 4 bits, bit i of the little-endian 32-bit qh as bit 4 of element i; W = (q − 16) · d
  Q5_1,  // 32-value blocks of 24 bytes, ggml's block_q5_1 {f16 d; f16 m; uint8 qh[4]; uint8 qs[16]}: Q5_0's
         // values; W = q · d + m
  Q2_K,  // 256-value super-blocks of 84 bytes, ggml's block_q2_K {uint8 scales[16]; uint8 qs[64]; f16 d;
         // f16 dmin}: value e's 2 bits at bits 2·((e % 128) / 32) of qs[32·(e / 128) + e % 32] (Q3_K's low bits),
         // q ∈ [0, 3]; sub-block i = e / 16 has a 4-bit scale sc (low nibble of scales[i]) and a 4-bit min m
         // (high nibble); W = (d · sc) · q − dmin · m
};

// The 16 values of IQ4_NL and IQ4_XS nibbles (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Values per block of a ggml block type (1 for F16 and the non-ggml types).
constexpr int64_t block_values(WeightType t) {
  switch (t) {
    case WeightType::Q8_0:
    case WeightType::Q4_0:
    case WeightType::Q4_1:
    case WeightType::Q5_0:
    case WeightType::Q5_1:
    case WeightType::IQ4_NL:
      return 32;
    case WeightType::IQ4_XS:
    case WeightType::Q2_K:
    case WeightType::Q3_K:
    case WeightType::Q4_K:
    case WeightType::Q5_K:
    case WeightType::Q6_K:
      return 256;
    default:
      return 1;
  }
}

// Bytes per block of a ggml block type (F16: 2 per value; 0 for the non-ggml types).
constexpr int64_t block_bytes(WeightType t) {
  switch (t) {
    case WeightType::F16:
      return 2;
    case WeightType::Q8_0:
      return 34;
    case WeightType::Q4_0:
    case WeightType::IQ4_NL:
      return 18;
    case WeightType::Q4_1:
      return 20;
    case WeightType::Q5_0:
      return 22;
    case WeightType::Q5_1:
      return 24;
    case WeightType::IQ4_XS:
      return 136;
    case WeightType::Q2_K:
      return 84;
    case WeightType::Q3_K:
      return 110;
    case WeightType::Q4_K:
      return 144;
    case WeightType::Q5_K:
      return 176;
    case WeightType::Q6_K:
      return 210;
    default:
      return 0;
  }
}

// Whether `t` stores its data in WeightMatrix::blocks.
constexpr bool is_ggml_type(WeightType t) { return block_bytes(t) > 0; }

// Weights repacked for the fast prefill GEMMs (see pack() below). Kernels read this plain view; a
// PackedWeight owns it.
enum class PackKind : uint8_t {
  None,
  // Unsigned 4-, 6- or 8-bit integers in panels of 16 rows, per 32-column block one scale per row (and for
  // Q4_K/Q5_K/MLX one "min" per row, which multiplies Σx of the block; for Q6_K a second scale, of the block's
  // columns 16–31); multiplied with activations quantized to int8 per token and 32-column block
  // (AVX-512 VNNI vpdpbusd, AVX2 vpmaddubsw + vpmaddwd, scalar).
  Int8,
  // bfloat16 values in panels of 16 rows × 2 columns, multiplied with activations rounded to bf16
  // (AVX-512 vdpbf16ps).
  Bf16,
  // IEEE half values in panels of 64 rows, one column after another, multiplied with the fp32 activations
  // unrounded (F16C conversion, then fp32 fused multiply-add; AVX-512 and AVX2).
  F16,
  // bfloat16 values in F16's layout, multiplied as F16 (exact upcast, then fp32 FMA): BF16 weights where
  // the CPU lacks AVX512_BF16 (AVX2 and plain AVX-512 machines).
  Bf16Fma,
};

// Layout (private to the kernels; documented here because tests and benchmarks size it):
//   Int8: for panel p (rows 16p .. 16p + 15, zero-padded) and 32-column block b, a record of
//         block_stride bytes at data + (p · blocks + b) · block_stride: the weights (8-bit: 8 chunks of
//         64 bytes, chunk j = columns 4j .. 4j + 3 of the 16 rows, row i at bytes 4i .. 4i + 3; 4-bit:
//         4 vectors of 64 bytes whose low nibbles hold chunk j and high nibbles chunk j + 4; 6-bit (Q6_K,
//         MLX 6-bit): the 4-bit layout of the values' low 4 bits, then 2 vectors of 64 bytes with their
//         2 high bits, vector k holding chunks 2k, 2k + 1, 2k + 4, 2k + 5 at bits 0–1, 2–3, 4–5, 6–7 of
//         each byte; 5-bit (Q5_K): the 4-bit layout of the low 4 bits, then 1 vector of 64 bytes whose bit j
//         holds bit 4 of chunk j), then, for MLX records, 16 fp32 scales and 16 fp32 mins (the biases). Q8_0 and Q4_0 records hold only the
//         weights; their 16 scales, the file's fp16 numbers, are IEEE halves at half_scales + (p · blocks +
//         b) · 16, an array after the records (decode streams 18 bytes per 32 Q4_0 weights, as the file).
//         Q4_K, Q5_K and Q6_K records hold only the weights too; their scales stay factored as in the file
//         (per row and 32 weights Q4_K takes 19 bytes against the file's 18, Q5_K 23 against 22, Q6_K 27
//         against 26.25):
//         factors + (p · blocks + b) · 32 holds 16 int8 "first" factors then 16 "second" ones, and
//         super_scales + (p · blocks / 8 + b / 8) · 32 the 16 rows' d then d2 of the 256-column super-block
//         (the file's fp16 values as floats): scale = d · first and second vector = d2 · second, exact
//         products (11 × 7 bits).
//         Q4_K, Q5_K: first = sc, second = −m, d2 = dmin (the second vector is the min, −dmin · m); Q6_K and
//         Q3_K: the scales of columns 0–15 and 16–31 (sub16; Q3_K's are sc − 32), d2 = d. Q3_K takes the
//         4-bit layout (19 bytes per row and 32 weights against the file's 13.75). Stored value = q +
//         offset, offset 128 (Q8_0), 32 (Q6_K: the file's q6, whose q = q6 − 32), 8 (Q4_0), 4 (Q3_K) or 0.
//         Q4_1 and Q5_1 take MLX's records (their fp16 d and m as the fp32 scale and min; 4- and 5-bit), Q5_0
//         Q4_0's fp16 scales beside 5-bit records of the stored q (offset 16).
//         Q2_K: 2-bit records of q (2 vectors of 64 bytes: chunk j at bits 2 · (j % 4) .. + 1 of vector j / 4,
//         so vector 0 holds columns 0–15 and vector 1 columns 16–31), factored sub16 scales as Q3_K's (offset 0,
//         first and second = the sc of the two halves, d2 = d) plus its mins: mins16 + (p · blocks + b) · 32
//         holds the 16 rows' −m of columns 0–15, then of 16–31, and min_scales + (p · blocks / 8 + b / 8) · 16
//         the rows' dmin (13.5 bytes per row and 32 weights against the file's 10.5).
//         IQ4_NL and IQ4_XS (iq4 set): the 4-bit layout holds the file's nibbles n, and the stored value the
//         kernels multiply is kIq4Values[n] + 128 (offset 128), looked up in registers; IQ4_NL's scales are
//         Q4_0's (half_scales), IQ4_XS's are factored (first = ls − 32, one scale d · first for the whole
//         block: no mins, not sub16; second = 0, d2 = d).
//   Bf16: for panel p, cols_padded / 2 chunks of 64 bytes: chunk k holds columns 2k, 2k + 1 of the 16 rows.
//   F16, Bf16Fma (the "FMA panels"): panels of kFmaPanelRows = 64 rows (zero-padded); for panel p, cols
//         chunks of 128 bytes at data + (p · cols + c) · 128: chunk c holds column c of the 64 rows, row i
//         at bytes 2i, 2i + 1.
inline constexpr int64_t kFmaPanelRows = 64;
struct PackedView {
  PackKind kind = PackKind::None;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t panels = 0;        // ceil(rows / 16); F16, Bf16Fma: ceil(rows / 64)
  int64_t blocks = 0;        // Int8: cols / 32
  int64_t block_stride = 0;  // Int8: bytes of one (panel, block) record
  int64_t cols_padded = 0;   // Bf16: cols rounded up to even
  int bits = 8;              // Int8: 8, 6, 5, 4 or 2
  int offset = 0;            // Int8: stored = q + offset
  bool has_mins = false;     // Int8
  bool sub16 = false;        // Int8 (Q6_K 6-bit, Q3_K 4-bit, Q2_K 2-bit): a scale per 16 columns, two per record
  bool iq4 = false;          // Int8 (IQ4_NL, IQ4_XS): the 4-bit values index kIq4Values
  bool q8_1_sums = false;    // Int8 (Q4_1, Q5_1): the mins multiply ggml's block_q8_1 sums (see matmul)
  const uint16_t* half_scales = nullptr;  // Int8 Q8_0, Q4_0, Q5_0, IQ4_NL: the fp16 scales (32-byte aligned)
  const int8_t* factors = nullptr;         // Int8 Q3_K–Q6_K, IQ4_XS: the scales' integer factors (32-byte aligned)
  const float* super_scales = nullptr;     // Int8 Q3_K–Q6_K, IQ4_XS: their d and d2 (the file's fp16 values)
  const int8_t* mins16 = nullptr;          // Int8 Q2_K: −m per row and 16-column half (32-byte aligned)
  const float* min_scales = nullptr;       // Int8 Q2_K: dmin per row and super-block (the file's fp16 values)
  // Int8 Q3_K–Q6_K, IQ4_XS, set by matmul on its own copy of the view for a product of many tokens: the
  // products d · first and d2 · second, 16 + 16 floats per record at expanded + (p · blocks + b) · 32
  // (the MLX records' scale layout), so that the tiles do not redo them for every group of tokens.
  const float* expanded = nullptr;
  const uint8_t* data = nullptr;  // 64-byte aligned
};

// A non-owning view of a weight matrix. Exactly the pointers of its type are set.
struct WeightMatrix {
  WeightType type = WeightType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const float* f32 = nullptr;        // F32: rows · cols
  const uint16_t* bf16 = nullptr;    // BF16: rows · cols (bit patterns)
  const uint32_t* packed = nullptr;  // MlxAffine: rows · (cols · bits / 32) words, LSB first
  const float* scales = nullptr;     // MlxAffine: rows · (cols / group_size)
  const float* biases = nullptr;     // MlxAffine: rows · (cols / group_size)
  int bits = 0;                      // MlxAffine: 2, 3, 4, 5, 6 or 8
  int group_size = 0;                // MlxAffine: cols is a multiple of it
  const uint8_t* blocks = nullptr;   // F16 and the ggml block types: rows · row_bytes() bytes
  // When set (see pack()), matmul uses these repacked weights instead of the fields above; they hold the
  // same matrix. dequantize_row always reads the fields above.
  const PackedView* pack = nullptr;

  int64_t packed_row_words() const { return cols * bits / 32; }
  // Bytes of one stored row (the packed words for MlxAffine, without its scales and biases).
  int64_t row_bytes() const {
    switch (type) {
      case WeightType::F32:
        return cols * 4;
      case WeightType::BF16:
        return cols * 2;
      case WeightType::MlxAffine:
        return packed_row_words() * 4;
      default:
        return cols / block_values(type) * block_bytes(type);
    }
  }
  int64_t groups_per_row() const { return group_size > 0 ? cols / group_size : 0; }
};

// Throws verdict::Error when the view is inconsistent (null pointers, bad bits/group size, ...).
void check_weight(const WeightMatrix& w, const char* what);

// y[t, r] = Σ_c W[r, c] · x[t, c] for t < n; x is n × cols, y is n × rows (row-major).
// The result of each (t, r) does not depend on n, on the other rows of x, or on the thread count,
// so batching sequences together never changes their results.
//
// With w.pack set the product runs on the repacked weights, and its numerical contract changes:
//  * Int8: each token's activations are quantized per 32-column block b as ggml's block_q8_0:
//    q = round-to-nearest-even(x · (127 / max|x|)), d_b = max|x| / 127 rounded to 11 significant bits
//    (fp16 precision, float's range; relative change ≤ 2^−11), so |x − d_b·q| ≤ d_b · (1/2 + 127 · 2^−11)
//    (to first order; ≤ 0.5625 · d_b); for Q2_K–Q6_K and IQ4_XS weights instead per 256-column
//    super-block as ggml's block_q8_K: q = round-to-nearest-even(x · (127 / max|x|)) over the super-block,
//    one fp32 d = 1 / (127 / max|x|) for its 8 blocks, so |x − d·q| ≤ d · (1/2 + 2^−21). Then
//    y = Σ_b [ s_b · d_b · Σ_c qw_c · q_c + m_b · S_b ] in fp32, the integer sums exact, where
//    W = s_b · qw + m_b per block (Q8_0/Q4_0: m_b = 0; Q4_K, Q5_K: s_b = d·sc, m_b = −dmin·m; MLX: scale, bias;
//    IQ4_NL: s_b = d, IQ4_XS: s_b = d·(ls − 32), m_b = 0, qw = kvalues_iq4nl[nibble];
//    Q5_0: s_b = d, qw = q − 16; Q4_1, Q5_1: s_b = d, m_b = m; Q6_K, Q3_K, Q2_K: see below) and S_b, what the min
//    multiplies, is the exact
//    Σ_{c ∈ b} x_c for MLX, d_b · Σ_{c ∈ b} q_c for Q4_K, Q5_K, and for Q4_1, Q5_1 the sum of ggml's block_q8_1,
//    (max|x| / 127) · Σ_{c ∈ b} q_c rounded to 11 significant bits (fp16 precision, float's range).
//    So |y − W·x| ≤ Σ_b 0.5625 · d_b · Σ_{c ∈ b} (|s_b qw_c| + |m_b| [K-quants, Q4_1, Q5_1]) plus, for Q4_1 and
//    Q5_1, Σ_b |m_b| · 2^−11 · |S_b| (the sum's rounding), plus fp32 rounding
//    (ref::matmul_int8 is the twin). Q6_K, Q3_K and Q2_K weights (W = d·sc·q per 16-column half h, Q2_K minus dmin·m_h)
//    sum each 256-column super-block in integers, as llama.cpp's vec_dot does: I = Σ_h sc_h · Σ_{c ∈ h} q_c·qx_c
//    and, for Q2_K, M = Σ_h (−m_h) · Σ_{c ∈ h} qx_c, both exact; then y = fma(M, dmin·dx, fma(I, d·dx, y)) in
//    fp32 per super-block, I and M rounded to fp32 (from 2^24 on: Q6_K's I reaches 2^27) (the same bound, fewer
//    fp32 roundings). These are the int8 sums of llama.cpp's Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
//    Q2_K–Q6_K, IQ4_NL and IQ4_XS products: on the same GGUF file the two engines differ only in fp32 rounding.
//  * Bf16: activations are rounded to bf16 (relative error ≤ 2^−9 each) and products accumulate in fp32
//    (ref::matmul_bf16 is the twin; on AMX CPUs every token runs on tdpbf16ps, whose fp32 order differs from
//    vdpbf16ps's, so a result still does not depend on n). Where bf16_products() is Fma (isa.h: AVX-512 CPUs
//    without BF16, and those whose vdpbf16ps is slower than two FMAs, the AMX tiles not running) the same
//    records take the F16 / Bf16Fma contract below instead: exact activations, ref::matmul_fma bit for bit.
//  * F16 and Bf16Fma: nothing is rounded but the sum: y = fma(W[r, cols−1], x[cols−1], … fma(W[r, 1], x[1],
//    fma(W[r, 0], x[0], 0)) …), one fp32 fused multiply-add per column in column order, on every ISA
//    (ref::matmul_fma is the twin, bit for bit).
void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y);

// Several products of the same activations: for each p, p.y = x · p.wᵀ, exactly matmul(*p.w, x, n, p.y) (bit
// for bit). Consecutive packed Int8 matrices with the same columns and activation format (Q8_0/Q4_0/Q5_0/IQ4_NL
// together; Q4_K/Q5_K together; ...) share one quantization of x instead of one each.
struct MatmulOutput {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
};
void matmul_shared_input(std::span<const MatmulOutput> products, const float* x, int64_t n);

// Owns repacked weights; move-only; the view it hands out stays at the same address when moved.
class PackedWeight {
 public:
  PackedWeight() = default;
  ~PackedWeight();
  PackedWeight(PackedWeight&& other) noexcept;
  PackedWeight& operator=(PackedWeight&& other) noexcept;
  PackedWeight(const PackedWeight&) = delete;
  PackedWeight& operator=(const PackedWeight&) = delete;

  // The view for WeightMatrix::pack, or nullptr when nothing was packed.
  const PackedView* view() const { return view_; }
  int64_t bytes() const { return bytes_; }

 private:
  friend PackedWeight pack(const WeightMatrix& w, PackKind kind);
  PackedView* view_ = nullptr;  // heap, together with the data
  uint8_t* storage_ = nullptr;
  int64_t bytes_ = 0;
};

// Which packed form (if any) pack() chooses for `w` on this machine: Int8 for the ggml block types but F16 and
// for MLX 4/6/8-bit (cols a multiple of 32); Bf16 for BF16 when the active ISA is AVX-512 (bf16_products(),
// isa.h, says how it multiplies), Bf16Fma when it is AVX2; F16 for F16 when the active ISA is AVX2 or AVX-512
// (the scalar ISA keeps BF16 and F16 rows unpacked); None otherwise.
PackKind preferred_pack(const WeightMatrix& w);
// Repacks `w` (a copy of its data in the kernels' layout). kind None (or one `w` cannot take) gives an
// empty PackedWeight. Usage: p = pack(w); w.pack = p.view(); — keep p alive as long as w is used.
PackedWeight pack(const WeightMatrix& w, PackKind kind);
inline PackedWeight pack(const WeightMatrix& w) { return pack(w, preferred_pack(w)); }
// The bytes pack(w, kind) allocates (0 when `w` cannot take `kind`), from w's type and shape alone (its data
// pointers may be unset): what a model's packed copies will take, before loading it.
int64_t packed_bytes(const WeightMatrix& w, PackKind kind);
// Whether a model should pack its matrices, given its default (packing changes results by the activation
// rounding above): $VERDICT_PACK = "1"/"on" → true, "0"/"off" → false, unset or empty → by_default.
// Throws verdict::Error on any other value.
bool pack_enabled(bool by_default);

// Row r of W as fp32 (exact for F32/BF16/F16; for MLX one fp32 multiply then one fp32 add per value;
// for the ggml block types bit-exactly ggml's dequantize_row_* evaluated without fused multiply-add).
void dequantize_row(const WeightMatrix& w, int64_t r, float* out);

// C[i, j] += Σ_p (alpha · A[i, p]) · B[p, j] for i < m, j < n; row-major with row strides lda, ldb, ldc.
// Single-threaded (used inside per-head loops). Every ISA computes each element the same way: starting
// from C[i, j], one fused multiply-add per p in order (as a chain of axpy calls would) — so results do
// not depend on m, n, the tiling or the ISA.
void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda, const float* B,
              int64_t ldb, float* C, int64_t ldc);

// x[i] = e^(x[i] − shift) for i < n (single-threaded). SIMD versions use a degree-6 polynomial after range
// reduction (within 2 ulp of the exact value; 0 below e^−104); the scalar version is std::exp. Each
// element's result depends only on its input.
void exp_shifted(int64_t n, float shift, float* x);

// Vector primitives (single-threaded; used inside per-head loops).
float dot(const float* a, const float* b, int64_t n);          // Σ a_i b_i
void axpy(int64_t n, float a, const float* x, float* y);       // y += a · x
void scale(int64_t n, float a, float* x);                      // x *= a
void scale_to(int64_t n, float a, const float* x, float* y);   // y = a · x (y may be x)
// y[c · ldy + r] = f[r] · x[r · ldx + c] for r < rows, c < cols (f = nullptr: x[r · ldx + c]): the rows of x,
// each times its factor (one rounded product, as scale_to), written as the columns of y. y must not overlap x.
void transpose_scaled(int64_t rows, int64_t cols, const float* x, int64_t ldx, const float* f, float* y,
                      int64_t ldy);

// One token of the gated delta rule on one head's state S (dk × dv, row-major; single-threaded):
// S ← decay·S; m = Sᵀk; u = β (v − m); S ← S + k uᵀ; o = Sᵀq (o: dv values, overwritten). Every ISA computes
// exactly the sequence m = 0, then scale(dv, decay, S_i) and axpy(dv, k_i, S_i, m) for i = 0 … dk − 1,
// u_e = β · (v_e − m_e), o = 0, then axpy(dv, k_i, u, S_i) and axpy(dv, q_i, S_i, o) for i = 0 … dk − 1, with
// its own scale and axpy: the SIMD versions in one sweep per pass over column blocks held in registers.
void delta_rule_token(int64_t dk, int64_t dv, float decay, float beta, const float* q, const float* k,
                      const float* v, float* S, float* o);

// y[i] = silu(x[i]) · m[i] = x[i] / (1 + e^−x[i]) · m[i] (m = nullptr: · 1); y may alias x or m. SIMD
// versions use exp_shifted's polynomial; the scalar version is std::exp. Single-threaded.
void silu_mul(int64_t n, const float* x, const float* m, float* y);
// One token of a causal depthwise convolution followed by SiLU (the DeltaNet's conv, spec §6.2):
// y[i] = silu(s_i), s_i = Σ_{j < taps} w[j·n + i] · x[j][i], each product rounded, summed from 0 in order
// j = 0 … taps − 1 (no fused multiply-adds), and silu as this ISA's silu_mul: bit for bit silu_mul applied
// to those sums, in one pass over the inputs. y must not alias w or any x[j]. Single-threaded.
void conv_silu(int64_t n, int64_t taps, const float* w, const float* const* x, float* y);
// Σ x_i², accumulated in double (the norms' denominators). Single-threaded.
double sum_squares(const float* x, int64_t n);
// x ← softmax(scale · x) over n > 0 values: s_i = scale · x_i, e_i = e^(s_i − max s) as exp_shifted, sum in
// double, x_i = e_i · float(1 / sum). Single-threaded.
void softmax(int64_t n, float scale, float* x);

}  // namespace verdict::kernels
