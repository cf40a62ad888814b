/* Xamt comparator kernels (C99). Semantics: xamt/compare/__init__.py; declarations: xamt_compare.h.
 *
 * Work is done in chunks of CH elements, so that each input byte is read from memory once and
 * everything else happens in L1/L2:
 *
 * 1. Real groups of 2..8 members that all are float32 or all float64 first take one fused,
 *    vectorised pass per chunk: the spread pass (XC_SPREAD) computes the reference (median
 *    network or member) and only the largest |a - ref| over the members; while that stays
 *    within every member's running maximum, no per-member work is needed. Otherwise the full
 *    pass (XC_FUSED) computes |a - ref| and its maximum per member. The other maxima (relative,
 *    ulp, tolerance units) need a division per element; both passes only check whether any
 *    element *could* raise one of them, or exceed the tolerance, by comparing |a - ref| with
 *    "running maximum x divisor". That test is conservative (see screen_member), so most chunks
 *    end here, exactly. Stretches of chunks holding NaN/inf skip these passes.
 * 2. Otherwise (a flagged chunk, other dtypes, more members) the chunk is decoded into float64
 *    rows and chunk_detail screens each member against its own maxima, divides only for the
 *    candidates it finds, and applies the scalar rules (elem_real) to elements holding NaN/inf.
 * 3. signed_zero, complex and integer groups run the scalar loop, the literal definition.
 *
 * All paths use only IEEE-754 operations that the numba and numpy backends perform identically
 * (no FMA contraction: build with -ffp-contract=off), which keeps the three reports bit-identical.
 */
#include "xamt_compare.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CH 256    /* elements per chunk */
#define LANES 8   /* independent accumulators of xc_read_sum, so the sum vectorises */

/* Clone the vectorisable loops for AVX2 and AVX-512 machines; the loader picks one at run time
 * (GNU ifunc), so the extension stays portable to any x86-64 while using the wide units here. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && !defined(XC_NO_CLONES)
#define XC_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define XC_HOT
#endif

enum { CAT_NAN = 0, CAT_INF = 1, CAT_SZ = 2, CAT_VAL = 3 };

typedef struct {
    int64_t cnt[4];
    int64_t first;
    double mx[4]; /* abs, rel, ulp, tolerance units */
} acc_t;

typedef struct {
    int ka;                      /* active members */
    int refpos;                  /* position of the reference among the active members, -1: median */
    int64_t n;
    double rtol, atol;
    int tolzero, sz;
    const double *uscale, *umin; /* per active member: ulp parameters */
    acc_t *acc;                  /* per active member */
} ctx_t;

/* ------------------------------------------------------------------ scalar helpers */

static inline uint64_t d2u(double x) { uint64_t u; memcpy(&u, &x, sizeof u); return u; }
static inline double u2d(uint64_t u) { double x; memcpy(&x, &u, sizeof x); return x; }
static inline int isfin(double x) { return fabs(x) <= DBL_MAX; }

/* Largest power of two <= ax for normal ax, 0 for zero and float64 subnormals. */
static inline double pow2floor(double ax) { return u2d(d2u(ax) & UINT64_C(0x7FF0000000000000)); }

/* ulp of a dtype with precision p at |x| = ax: max(pow2floor(ax) * 2^(1-p), 2^(emin+1-p)). */
static inline double ulp_at(double ax, double scale, double mn)
{
    double u = pow2floor(ax) * scale;
    return u > mn ? u : mn;
}

/* Midpoint of two finite values without spurious overflow. Symmetric in x and y. */
static inline double midpoint(double x, double y)
{
    double s = x + y;
    return fabs(s) <= DBL_MAX ? s * 0.5 : x * 0.5 + y * 0.5;
}

/* Total order on finite values: -0.0 sorts before +0.0. */
static inline int tot_less(double a, double b)
{
    return a < b || (a == b && signbit(a) && !signbit(b));
}

static inline double h2d(uint16_t h)
{
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    double mag;
    if (e == 31u) {
        mag = m ? NAN : INFINITY;
    } else {
        uint32_t ee = e ? e : 1u, mm = e ? (m | 0x400u) : m;
        mag = (double)mm * u2d((uint64_t)(ee + 1023u - 25u) << 52);
    }
    return (h & 0x8000u) ? -mag : mag;
}

static inline double bf2d(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, sizeof f);
    return (double)f;
}

/* Update the four maxima with one finite pair at distance d. A quotient d/f can only exceed the
 * running maximum M when d >= RN(M * f) (rounding is monotone; a NaN product, inf * 0, belongs
 * to M = inf or to f = inf and is divided out), so most divisions are skipped. */
static inline void upd_stats(acc_t *A, double d, double ab, double tau, double ulp)
{
    if (d > A->mx[0]) A->mx[0] = d;
    if (d > 0.0) {
        if (!(d < A->mx[1] * ab)) {
            double r = d / ab;
            if (r > A->mx[1]) A->mx[1] = r;
        }
        if (!(d < A->mx[2] * ulp)) {
            double u = d / ulp;
            if (u > A->mx[2]) A->mx[2] = u;
        }
        if (!(d < A->mx[3] * tau)) {
            double t = d / tau;
            if (t != t) t = 1.0; /* inf / inf: an overflowing difference, infinite tolerance */
            if (t > A->mx[3]) A->mx[3] = t;
        }
    }
}

static inline void mark(acc_t *A, int cat, int64_t j)
{
    A->cnt[cat]++;
    if (A->first < 0) A->first = j;
}

static inline void elem_real(acc_t *A, int64_t j, double a, double b, double ab, double thr,
                             double tau, double uscale, double umin, int sz)
{
    if (a != a || b != b) {
        if (!(a != a && b != b)) mark(A, CAT_NAN, j);
    } else if (!isfin(a) || !isfin(b)) {
        if (a != b) mark(A, CAT_INF, j);
    } else {
        double d = fabs(a - b);
        upd_stats(A, d, ab, tau, ulp_at(ab, uscale, umin));
        if (d > thr) mark(A, CAT_VAL, j);
        else if (sz && a == 0.0 && b == 0.0 && signbit(a) != signbit(b)) mark(A, CAT_SZ, j);
    }
}

/* One part of a complex value that has an infinite part: infinite parts must be equal, finite
 * ones agree within the tolerance of their own magnitude (|ref| is infinite: no scale there). */
static inline int part_close(double x, double b, double rtol, double atol)
{
    if (!isfin(x) || !isfin(b)) return x == b;
    return fabs(x - b) <= atol + rtol * fabs(b);
}

static inline void elem_cplx(acc_t *A, int64_t j, double ar, double ai, double br, double bi,
                             double ab, double thr, double tau, double uscale, double umin, int sz,
                             double rtol, double atol)
{
    int an = ar != ar || ai != ai, bn = br != br || bi != bi;
    if (an || bn) {
        if (!(an && bn)) mark(A, CAT_NAN, j);
    } else if (!isfin(ar) || !isfin(ai) || !isfin(br) || !isfin(bi)) {
        if (!(part_close(ar, br, rtol, atol) && part_close(ai, bi, rtol, atol))) mark(A, CAT_INF, j);
    } else {
        double d = hypot(ar - br, ai - bi);
        upd_stats(A, d, ab, tau, ulp_at(ab, uscale, umin));
        if (d > thr) mark(A, CAT_VAL, j);
        else if (sz && ((ar == 0.0 && br == 0.0 && signbit(ar) != signbit(br))
                        || (ai == 0.0 && bi == 0.0 && signbit(ai) != signbit(bi))))
            mark(A, CAT_SZ, j);
    }
}

/* |a - b| for sign-magnitude integers, correctly rounded to float64 (it may exceed 2^64). */
static inline double int_absdiff(unsigned an, uint64_t am, unsigned bn, uint64_t bm)
{
    uint64_t s, q, rem;
    if (an == bn) return (double)(am >= bm ? am - bm : bm - am);
    s = am + bm;
    if (s >= am) return (double)s;
    /* carry: |a - b| = 2^64 + s, whose float64 spacing is 2^12; round half to even. */
    q = s >> 12;
    rem = s & 0xFFFu;
    if (rem > 0x800u || (rem == 0x800u && (q & 1u))) q += 1u;
    return 18446744073709551616.0 + (double)q * 4096.0;
}

static inline int int_less(unsigned an, uint64_t am, unsigned bn, uint64_t bm)
{
    if (an != bn) return an > bn;
    return an ? am > bm : am < bm;
}

/* ------------------------------------------------------------------ medians (scalar) */

/* Reference value from ka real values (see the module docstring for the rule). */
static double median_real(int ka, const double *v, double *tmp)
{
    int nf = 0, nn = 0, ni = 0, a, b;
    for (a = 0; a < ka; a++) {
        double x = v[a];
        if (x != x) nn++;
        else if (!isfin(x)) ni++;
        else tmp[nf++] = x;
    }
    if (nf > 0 && nf >= nn && nf >= ni) {
        for (a = 1; a < nf; a++) { /* insertion sort, total order */
            double x = tmp[a];
            for (b = a - 1; b >= 0 && tot_less(x, tmp[b]); b--) tmp[b + 1] = tmp[b];
            tmp[b + 1] = x;
        }
        return (nf & 1) ? tmp[nf / 2] : midpoint(tmp[nf / 2 - 1], tmp[nf / 2]);
    }
    if (nn >= ni) return NAN;
    {   /* most frequent infinity, ties to the first one met */
        int best = -1, bestc = 0;
        for (a = 0; a < ka; a++) {
            int c = 0;
            if (v[a] != v[a] || isfin(v[a])) continue;
            for (b = 0; b < ka; b++) c += v[b] == v[a];
            if (c > bestc) { bestc = c; best = a; }
        }
        return v[best];
    }
}

static double med_sorted(double *t, int nf)
{
    int a, b;
    for (a = 1; a < nf; a++) {
        double x = t[a];
        for (b = a - 1; b >= 0 && tot_less(x, t[b]); b--) t[b + 1] = t[b];
        t[b + 1] = x;
    }
    return (nf & 1) ? t[nf / 2] : midpoint(t[nf / 2 - 1], t[nf / 2]);
}

static void median_cplx(int ka, const double *vr, const double *vi, double *tr, double *ti,
                        double *outr, double *outi)
{
    int nf = 0, nn = 0, ni = 0, a, b;
    for (a = 0; a < ka; a++) {
        double r = vr[a], i = vi[a];
        if (r != r || i != i) nn++;
        else if (!isfin(r) || !isfin(i)) ni++;
        else { tr[nf] = r; ti[nf] = i; nf++; }
    }
    if (nf > 0 && nf >= nn && nf >= ni) {
        *outr = med_sorted(tr, nf);
        *outi = med_sorted(ti, nf);
        return;
    }
    if (nn >= ni) { *outr = NAN; *outi = NAN; return; }
    {
        int best = -1, bestc = 0;
        for (a = 0; a < ka; a++) {
            int c = 0;
            double r = vr[a], i = vi[a];
            if (r != r || i != i || (isfin(r) && isfin(i))) continue;
            for (b = 0; b < ka; b++) c += vr[b] == r && vi[b] == i;
            if (c > bestc) { bestc = c; best = a; }
        }
        *outr = vr[best];
        *outi = vi[best];
    }
}

/* ------------------------------------------------------------------ decoding */

XC_HOT static void load_real(int code, const void *src, int64_t j0, int m, double *dst)
{
    int j;
    switch (code) {
#define XC_LOAD(CODE, T, EXPR)                                       \
    case CODE: {                                                     \
        const T *s = (const T *)src + j0;                            \
        for (j = 0; j < m; j++) dst[j] = (EXPR);                     \
    } break;
    XC_LOAD(XC_BOOL, unsigned char, s[j] != 0 ? 1.0 : 0.0)
    XC_LOAD(XC_I8, int8_t, (double)s[j])
    XC_LOAD(XC_I16, int16_t, (double)s[j])
    XC_LOAD(XC_I32, int32_t, (double)s[j])
    XC_LOAD(XC_I64, int64_t, (double)s[j])
    XC_LOAD(XC_U8, uint8_t, (double)s[j])
    XC_LOAD(XC_U16, uint16_t, (double)s[j])
    XC_LOAD(XC_U32, uint32_t, (double)s[j])
    XC_LOAD(XC_U64, uint64_t, (double)s[j])
    XC_LOAD(XC_F16, uint16_t, h2d(s[j]))
    XC_LOAD(XC_BF16, uint16_t, bf2d(s[j]))
    XC_LOAD(XC_F32, float, (double)s[j])
    XC_LOAD(XC_F64, double, s[j])
#undef XC_LOAD
    default:
        for (j = 0; j < m; j++) dst[j] = NAN;
    }
}

static void load_cplx(int code, const void *src, int64_t j0, int m, double *re, double *im)
{
    int j;
    if (code == XC_C64) {
        const float *s = (const float *)src + 2 * j0;
        for (j = 0; j < m; j++) { re[j] = (double)s[2 * j]; im[j] = (double)s[2 * j + 1]; }
    } else if (code == XC_C128) {
        const double *s = (const double *)src + 2 * j0;
        for (j = 0; j < m; j++) { re[j] = s[2 * j]; im[j] = s[2 * j + 1]; }
    } else {
        load_real(code, src, j0, m, re);
        for (j = 0; j < m; j++) im[j] = 0.0;
    }
}

static void load_int(int code, const void *src, int64_t j0, int m, unsigned char *neg,
                     uint64_t *mag)
{
    int j;
    switch (code) {
#define XC_LOADS(CODE, T)                                                         \
    case CODE: {                                                                  \
        const T *s = (const T *)src + j0;                                         \
        for (j = 0; j < m; j++) {                                                 \
            int64_t v = s[j];                                                     \
            neg[j] = v < 0;                                                       \
            mag[j] = v < 0 ? (uint64_t)(-(v + 1)) + 1u : (uint64_t)v;             \
        }                                                                         \
    } break;
#define XC_LOADU(CODE, T)                                                         \
    case CODE: {                                                                  \
        const T *s = (const T *)src + j0;                                         \
        for (j = 0; j < m; j++) { neg[j] = 0; mag[j] = (uint64_t)s[j]; }          \
    } break;
    XC_LOADS(XC_I8, int8_t)
    XC_LOADS(XC_I16, int16_t)
    XC_LOADS(XC_I32, int32_t)
    XC_LOADS(XC_I64, int64_t)
    XC_LOADU(XC_U8, uint8_t)
    XC_LOADU(XC_U16, uint16_t)
    XC_LOADU(XC_U32, uint32_t)
    XC_LOADU(XC_U64, uint64_t)
#undef XC_LOADS
#undef XC_LOADU
    case XC_BOOL: {
        const unsigned char *s = (const unsigned char *)src + j0;
        for (j = 0; j < m; j++) { neg[j] = 0; mag[j] = s[j] != 0; }
    } break;
    default:
        for (j = 0; j < m; j++) { neg[j] = 0; mag[j] = 0; }
    }
}

/* ------------------------------------------------------------------ real fast path */
/* GCC does not vectorise floating-point "a > b ? a : b" without -ffinite-math-only, so maxima and
 * the median network work on integer images of the doubles: the bit pattern of a non-negative
 * double orders like the int64 it spells, and key() maps a float or double to an integer in the
 * IEEE total order (-0.0 before +0.0), the order the scalar median uses. Both are exact. */

#define XC_ABS64 INT64_C(0x7FFFFFFFFFFFFFFF)
#define XC_EXP64 INT64_C(0x7FF0000000000000)

static inline int64_t dbits(double x) { int64_t b; memcpy(&b, &x, sizeof b); return b; }
static inline double bitsd(int64_t b) { double x; memcpy(&x, &b, sizeof x); return x; }
static inline int32_t fbits(float x) { int32_t b; memcpy(&b, &x, sizeof b); return b; }
static inline float bitsf(int32_t b) { float x; memcpy(&x, &b, sizeof x); return x; }
/* key(x) = bits ^ (sign ? 0x7FF..F : 0). GCC and clang define >> of a negative value as an
 * arithmetic shift (one instruction); other compilers get the portable spelling. */
#if defined(__GNUC__)
#define XC_SIGNMASK32(b) ((b) >> 31 & INT32_C(0x7FFFFFFF))
#define XC_SIGNMASK64(b) ((b) >> 63 & INT64_C(0x7FFFFFFFFFFFFFFF))
#else
#define XC_SIGNMASK32(b) ((int32_t)((UINT32_C(0) - ((uint32_t)(b) >> 31)) >> 1))
#define XC_SIGNMASK64(b) ((int64_t)((UINT64_C(0) - ((uint64_t)(b) >> 63)) >> 1))
#endif
static inline int32_t key_f(float x) { int32_t b = fbits(x); return b ^ XC_SIGNMASK32(b); }
static inline double unkey_f(int32_t k) { return (double)bitsf(k ^ XC_SIGNMASK32(k)); }
static inline int64_t key_d(double x) { int64_t b = dbits(x); return b ^ XC_SIGNMASK64(b); }
static inline double unkey_d(int64_t k) { return bitsd(k ^ XC_SIGNMASK64(k)); }
static inline int32_t min_f(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t max_f(int32_t a, int32_t b) { return a < b ? b : a; }
static inline int64_t min_d(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max_d(int64_t a, int64_t b) { return a < b ? b : a; }
/* midpoint() for values that came from float32 (their sum cannot overflow) and for doubles */
static inline double mid_f(double x, double y) { return (x + y) * 0.5; }
static inline double mid_d(double x, double y)
{
    double s = x + y;
    return (dbits(s) & XC_ABS64) < XC_EXP64 ? s * 0.5 : x * 0.5 + y * 0.5;
}

/* Optimal sorting networks (Knuth, TAOCP 5.3.4) for 5..8 keys, as compare-exchange pairs. */
static const unsigned char NET5[9][2] = {{0,1},{3,4},{2,4},{2,3},{1,4},{0,3},{0,2},{1,3},{1,2}};
static const unsigned char NET6[12][2] = {{1,2},{4,5},{0,2},{3,5},{0,1},{3,4},{1,4},{0,3},{2,5},
                                          {1,3},{2,4},{2,3}};
static const unsigned char NET7[16][2] = {{1,2},{3,4},{5,6},{0,2},{3,5},{4,6},{0,1},{4,5},{2,6},
                                          {0,4},{1,5},{0,3},{2,5},{1,3},{2,4},{2,3}};
static const unsigned char NET8[19][2] = {{0,2},{1,3},{4,6},{5,7},{0,4},{1,5},{2,6},{3,7},{0,1},
                                          {2,3},{4,5},{6,7},{2,4},{3,5},{1,4},{3,6},{1,2},{3,4},
                                          {5,6}};

/* Screening parameters of one fused pass: the smallest running maxima over the members that
 * have differed somewhere so far, and the smallest ulp scale / minimum over the members. */
typedef struct {
    double rtol, atol, smin, mmin, Mr, Mu, Mp;
    /* per-member variant: each member's own maxima (rel, tolerance units, ulp), in fused order */
    double pr[8], pu[8], pp[8];
    /* spread pass: bits of the smallest maximum of |a - ref| over the members (0 while one
     * never differed); Mr, or NaN for Mr = inf; Mp * smin and Mp * mmin (see XC_SPREAD) */
    int64_t wlim;
    double Mrs, Mps, Mpm, Mpc; /* Mpc: the Mp of Mps and Mpm (NaN: none yet) */
} fparams;

/* Per-element reference for a fused kernel: median of KA keys (or the first row when INDEX). */
#define XC_MEDIAN(SFX, KT, KA, v, kk, R)                                                        \
    do {                                                                                       \
        int a_;                                                                                \
        if ((KA) == 2) {                                                                       \
            R = mid_##SFX(v[0], v[1]);                                                         \
        } else if ((KA) == 3) {                                                                \
            KT lo_ = min_##SFX(kk[0], kk[1]), hi_ = max_##SFX(kk[0], kk[1]);                   \
            R = unkey_##SFX(max_##SFX(lo_, min_##SFX(hi_, kk[2])));                            \
        } else if ((KA) == 4) {                                                                \
            KT lo_ = max_##SFX(min_##SFX(kk[0], kk[1]), min_##SFX(kk[2], kk[3]));              \
            KT hi_ = min_##SFX(max_##SFX(kk[0], kk[1]), max_##SFX(kk[2], kk[3]));              \
            R = mid_##SFX(unkey_##SFX(lo_), unkey_##SFX(hi_));                                 \
        } else {                                                                               \
            const unsigned char(*net_)[2] = (KA) == 5 ? NET5 : (KA) == 6 ? NET6                \
                                          : (KA) == 7 ? NET7 : NET8;                           \
            const int nn_ = (KA) == 5 ? 9 : (KA) == 6 ? 12 : (KA) == 7 ? 16 : 19;              \
            _Pragma("GCC unroll 20") for (a_ = 0; a_ < nn_; a_++) {                            \
                KT x_ = kk[net_[a_][0]], y_ = kk[net_[a_][1]];                                 \
                kk[net_[a_][0]] = min_##SFX(x_, y_);                                           \
                kk[net_[a_][1]] = max_##SFX(x_, y_);                                           \
            }                                                                                  \
            R = ((KA) & 1) ? unkey_##SFX(kk[(KA) / 2])                                         \
                           : mid_##SFX(unkey_##SFX(kk[(KA) / 2 - 1]), unkey_##SFX(kk[(KA) / 2])); \
        }                                                                                      \
    } while (0)

/* One fused pass over a chunk of KA rows of type T: the reference (median, or row 0 when
 * INDEX), |row - ref| per member (its maximum, as bits, goes to mxo; NaN/inf inputs show up as
 * a maximum >= the bits of +inf), and whether any element could raise a running maximum of
 * the ratios or exceed the tolerance (return value; see screen_member for why it is safe).
 * PM = 0 screens the element-wise maximum W of |d| over the members against the smallest
 * maxima (cheap); PM = 1 screens every member against its own maxima (for members whose
 * differences have very different sizes, where the cheap test keeps raising false alarms).
 * The ulp divisor is a power of two, so M * ulp is exact when normal and a tie cannot win;
 * a subnormal product may be rounded, so there a tie counts. NaN products (inf * 0) belong
 * to a maximum of inf, which nothing raises. */
#define XC_FUSED(NAME, T, KT, SFX, KA, INDEX, PM)                                              \
    XC_HOT static int NAME(const T *const *xs, int m, const fparams *P, int64_t *restrict mxo) \
    {                                                                                          \
        const T *x[KA];                                                                        \
        double pr[KA], pu[KA], pp[KA];                                                         \
        int64_t mx[KA], anyc = 0, mb = dbits(P->mmin);                                         \
        const double rtol = P->rtol, atol = P->atol, smin = P->smin;                           \
        const double Mr = P->Mr, Mu = P->Mu, Mp = P->Mp;                                       \
        int a, j;                                                                              \
        for (a = 0; a < (KA); a++) {                                                           \
            x[a] = xs[a];                                                                      \
            mx[a] = 0;                                                                         \
            pr[a] = P->pr[a];                                                                  \
            pu[a] = P->pu[a];                                                                  \
            pp[a] = P->pp[a];                                                                  \
        }                                                                                      \
        for (j = 0; j < m; j++) {                                                              \
            double v[KA], R, ar, thr, um;                                                      \
            KT kk[KA];                                                                         \
            int64_t w = 0, c = 0;                                                              \
            _Pragma("GCC unroll 8") for (a = 0; a < (KA); a++) {                               \
                v[a] = (double)x[a][j];                                                        \
                kk[a] = key_##SFX(x[a][j]);                                                    \
            }                                                                                  \
            if (INDEX) R = v[0];                                                               \
            else XC_MEDIAN(SFX, KT, KA, v, kk, R);                                             \
            ar = fabs(R);                                                                      \
            thr = atol + rtol * ar;                                                            \
            um = bitsd(max_d(dbits(bitsd(dbits(ar) & XC_EXP64) * smin), mb));                 \
            _Pragma("GCC unroll 8") for (a = (INDEX); a < (KA); a++) {                         \
                int64_t d = dbits(v[a] - R) & XC_ABS64;                                        \
                mx[a] = max_d(mx[a], d);                                                       \
                if (PM) {                                                                      \
                    double dd = bitsd(d), q = pp[a] * um;                                      \
                    c |= ((int64_t)(dd >= pr[a] * ar) | (int64_t)(dd >= pu[a] * thr)           \
                          | (int64_t)(dd > q) | ((int64_t)(dd == q) & (int64_t)(q < DBL_MIN))) \
                         & (int64_t)(dd > 0.0);                                                \
                } else {                                                                       \
                    w = max_d(w, d);                                                           \
                }                                                                              \
            }                                                                                  \
            if (!(PM)) {                                                                       \
                double wd = bitsd(w), q = Mp * um;                                             \
                c = ((int64_t)(wd >= Mr * ar) | (int64_t)(wd >= Mu * thr) | (int64_t)(wd > q)  \
                     | ((int64_t)(wd == q) & (int64_t)(q < DBL_MIN))) & (int64_t)(wd > 0.0);    \
            }                                                                                  \
            anyc |= c;                                                                         \
        }                                                                                      \
        for (a = 0; a < (KA); a++) mxo[a] = mx[a];                                             \
        return anyc != 0;                                                                      \
    }

#define XC_FUSED_SET(SFX, T, KT, KA)                                                           \
    XC_FUSED(fm_##SFX##KA, T, KT, SFX, KA, 0, 0)                                               \
    XC_FUSED(fi_##SFX##KA, T, KT, SFX, KA, 1, 0)                                               \
    XC_FUSED(pm_##SFX##KA, T, KT, SFX, KA, 0, 1)                                               \
    XC_FUSED(pi_##SFX##KA, T, KT, SFX, KA, 1, 1)

XC_FUSED_SET(f, float, int32_t, 2)
XC_FUSED_SET(f, float, int32_t, 3)
XC_FUSED_SET(f, float, int32_t, 4)
XC_FUSED_SET(f, float, int32_t, 5)
XC_FUSED_SET(f, float, int32_t, 6)
XC_FUSED_SET(f, float, int32_t, 7)
XC_FUSED_SET(f, float, int32_t, 8)
XC_FUSED_SET(d, double, int64_t, 2)
XC_FUSED_SET(d, double, int64_t, 3)
XC_FUSED_SET(d, double, int64_t, 4)
XC_FUSED_SET(d, double, int64_t, 5)
XC_FUSED_SET(d, double, int64_t, 6)
XC_FUSED_SET(d, double, int64_t, 7)
XC_FUSED_SET(d, double, int64_t, 8)

typedef int (*fused_f_fn)(const float *const *, int, const fparams *, int64_t *);
typedef int (*fused_d_fn)(const double *const *, int, const fparams *, int64_t *);
/* [per-member][index reference][KA] */
static const fused_f_fn FUSED_F[2][2][9] = {
    {{0, 0, fm_f2, fm_f3, fm_f4, fm_f5, fm_f6, fm_f7, fm_f8},
     {0, 0, fi_f2, fi_f3, fi_f4, fi_f5, fi_f6, fi_f7, fi_f8}},
    {{0, 0, pm_f2, pm_f3, pm_f4, pm_f5, pm_f6, pm_f7, pm_f8},
     {0, 0, pi_f2, pi_f3, pi_f4, pi_f5, pi_f6, pi_f7, pi_f8}}};
static const fused_d_fn FUSED_D[2][2][9] = {
    {{0, 0, fm_d2, fm_d3, fm_d4, fm_d5, fm_d6, fm_d7, fm_d8},
     {0, 0, fi_d2, fi_d3, fi_d4, fi_d5, fi_d6, fi_d7, fi_d8}},
    {{0, 0, pm_d2, pm_d3, pm_d4, pm_d5, pm_d6, pm_d7, pm_d8},
     {0, 0, pi_d2, pi_d3, pi_d4, pi_d5, pi_d6, pi_d7, pi_d8}}};
#define XC_FUSED_MAX 8

/* ------------------------------------------------------------------ spread-only fused pass */
/* The pass above computes |a - ref| for every member to keep each member's maximum. Once the
 * maxima have settled, a chunk rarely raises any of them, and that can be decided from the
 * spread alone: the largest |a - ref| over the members of an element is
 * max(max_a - ref, ref - min_a) (rounding is monotone, so this holds for the rounded
 * differences too), and the extremes fall out of the sorting network the median needs anyway.
 * So this pass computes per element only the reference, the extremes and that spread w, the
 * chunk's largest w (W), and the screen of XC_FUSED with PM = 0. When W exceeds the smallest
 * maximum of |a - ref| of a member (or a member never differed yet), the caller runs XC_FUSED
 * on the chunk, which is still in L1.
 *
 * The network sorts the values with min/max (a < b ? a : b, one vminps/vminpd), not in the
 * total order of the scalar median: the two differ only in which of -0.0 and +0.0 they return,
 * which changes neither |a - ref| nor |ref|. Such min/max return their second operand when
 * either is NaN; for 2..4 members the operands are ordered so that a NaN of every input reaches
 * the reference or the maximum, so w (or the reference) is NaN, and an infinity makes w
 * infinite or NaN; W at or above the bits of +inf sends the chunk to the general path, which is
 * exact. The larger networks and the index reference check the sum of the values instead (NaN
 * or inf when any value is, or when the sum overflows; then the general path is merely slower).
 *
 * The screen runs on the bits of non-negative doubles, which order like the values (a NaN
 * product sorts above +inf and drops out when positive, as Mr = NaN makes it; a negative one,
 * 0 * inf, leaves T = 1 below, which only screens more): an element is a candidate when
 * bits(w) >= T, with
 * T = max(1, min(bits(Mr * |ref|), bits(Mu * thr), Tq)). T >= 1 stands for w > 0; Tq is the ulp
 * test: q = Mp * ulp = max(p * (Mp * smin), Mp * mmin) for p = pow2floor(|ref|) (exactly
 * XC_FUSED's product, as Mp * smin is exact: fused_params makes sure), and w > q, or w == q
 * where q is subnormal, i.e. Tq = bits(q) + (q >= DBL_MIN). For float32 groups, q >= Mp * mmin
 * >= DBL_MIN (fused_params makes sure), so Tq = bits(q) + 1. */
static inline float vmin_f(float a, float b) { return a < b ? a : b; }
static inline float vmax_f(float a, float b) { return a > b ? a : b; }
static inline double vmin_d(double a, double b) { return a < b ? a : b; }
static inline double vmax_d(double a, double b) { return a > b ? a : b; }
static inline int32_t absbits_f(float x) { return fbits(x) & INT32_C(0x7FFFFFFF); }
static inline int64_t absbits_d(double x) { return dbits(x) & XC_ABS64; }
#define XC_INFBITS_f INT32_C(0x7F800000)
#define XC_INFBITS_d XC_EXP64

#define XC_SPREAD(NAME, T, KT, SFX, KA, INDEX)                                                 \
    XC_HOT static int NAME(const T *const *xs, int m, const fparams *P, int64_t *wo)           \
    {                                                                                          \
        const T *x[KA];                                                                        \
        const int sumcheck = (INDEX) || (KA) > 4;                                              \
        int64_t wmax = 0, anyc = INT64_MIN;                                                    \
        const int64_t mpm = dbits(P->Mpm), dminb = dbits(DBL_MIN);                             \
        const double rtol = P->rtol, atol = P->atol, Mr = P->Mrs, Mu = P->Mu, mps = P->Mps;    \
        KT smx = 0;                                                                            \
        int a, j;                                                                              \
        for (a = 0; a < (KA); a++) x[a] = xs[a];                                               \
        for (j = 0; j < m; j++) {                                                              \
            T v[KA], mn, mx;                                                                   \
            double R, ar, thr;                                                                 \
            int64_t wb, qb, t;                                                                 \
            _Pragma("GCC unroll 8") for (a = 0; a < (KA); a++) v[a] = x[a][j];                 \
            if (sumcheck) {                                                                    \
                T s_ = v[0];                                                                   \
                _Pragma("GCC unroll 8") for (a = 1; a < (KA); a++) s_ += v[a];                 \
                smx = max_##SFX(smx, absbits_##SFX(s_));                                       \
            }                                                                                  \
            if (INDEX) {                                                                       \
                mn = v[0];                                                                     \
                mx = v[0];                                                                     \
                _Pragma("GCC unroll 8") for (a = 1; a < (KA); a++) {                           \
                    mn = vmin_##SFX(mn, v[a]);                                                 \
                    mx = vmax_##SFX(mx, v[a]);                                                 \
                }                                                                              \
                R = (double)v[0];                                                              \
            } else if ((KA) == 2) { /* NaN of v0: mx, of v1: mn (and both: R) */               \
                mn = vmin_##SFX(v[0], v[1]);                                                   \
                mx = vmax_##SFX(v[1], v[0]);                                                   \
                R = mid_##SFX((double)v[0], (double)v[1]);                                     \
            } else if ((KA) == 3) { /* v0: h, mx; v1: l, R; v2: mn */                         \
                T l_ = vmin_##SFX(v[0], v[1]), h_ = vmax_##SFX(v[1], v[0]);                    \
                mn = vmin_##SFX(l_, v[2]);                                                     \
                mx = vmax_##SFX(v[2], h_);                                                     \
                R = (double)vmax_##SFX(vmin_##SFX(h_, v[2]), l_);                              \
            } else if ((KA) == 4) { /* v0: h1, mx; v1: l1, lo; v2: h2, hi; v3: l2, mn */      \
                T l1_ = vmin_##SFX(v[0], v[1]), h1_ = vmax_##SFX(v[1], v[0]);                  \
                T l2_ = vmin_##SFX(v[2], v[3]), h2_ = vmax_##SFX(v[3], v[2]);                  \
                mn = vmin_##SFX(l1_, l2_);                                                     \
                mx = vmax_##SFX(h2_, h1_);                                                     \
                R = mid_##SFX((double)vmax_##SFX(l2_, l1_), (double)vmin_##SFX(h1_, h2_));     \
            } else {                                                                           \
                const unsigned char(*net_)[2] = (KA) == 5 ? NET5 : (KA) == 6 ? NET6            \
                                              : (KA) == 7 ? NET7 : NET8;                       \
                const int nn_ = (KA) == 5 ? 9 : (KA) == 6 ? 12 : (KA) == 7 ? 16 : 19;          \
                _Pragma("GCC unroll 20") for (a = 0; a < nn_; a++) {                           \
                    T x_ = v[net_[a][0]], y_ = v[net_[a][1]];                                  \
                    v[net_[a][0]] = vmin_##SFX(x_, y_);                                        \
                    v[net_[a][1]] = vmax_##SFX(x_, y_);                                        \
                }                                                                              \
                mn = v[0];                                                                     \
                mx = v[(KA) - 1];                                                              \
                R = ((KA) & 1) ? (double)v[(KA) / 2]                                           \
                               : mid_##SFX((double)v[(KA) / 2 - 1], (double)v[(KA) / 2]);      \
            }                                                                                  \
            wb = max_d(absbits_d((double)mx - R), absbits_d(R - (double)mn));                  \
            wmax = max_d(wmax, wb);                                                            \
            ar = fabs(R);                                                                      \
            thr = atol + rtol * ar;                                                            \
            qb = max_d(dbits(bitsd(dbits(ar) & XC_EXP64) * mps), mpm);                         \
            qb += sizeof(T) == 4 ? 1 : (int64_t)(qb >= dminb);                                 \
            t = min_d(min_d(dbits(Mr * ar), dbits(Mu * thr)), qb);                             \
            anyc = max_d(anyc, wb - max_d(t, 1));                                              \
        }                                                                                      \
        if (sumcheck && smx >= XC_INFBITS_##SFX) wmax = XC_EXP64;                              \
        *wo = wmax;                                                                            \
        return anyc >= 0;                                                                      \
    }

#define XC_SPREAD_SET(SFX, T, KT, KA)                                                          \
    XC_SPREAD(sm_##SFX##KA, T, KT, SFX, KA, 0)                                                 \
    XC_SPREAD(si_##SFX##KA, T, KT, SFX, KA, 1)

XC_SPREAD_SET(f, float, int32_t, 2)
XC_SPREAD_SET(f, float, int32_t, 3)
XC_SPREAD_SET(f, float, int32_t, 4)
XC_SPREAD_SET(f, float, int32_t, 5)
XC_SPREAD_SET(f, float, int32_t, 6)
XC_SPREAD_SET(f, float, int32_t, 7)
XC_SPREAD_SET(f, float, int32_t, 8)
XC_SPREAD_SET(d, double, int64_t, 2)
XC_SPREAD_SET(d, double, int64_t, 3)
XC_SPREAD_SET(d, double, int64_t, 4)
XC_SPREAD_SET(d, double, int64_t, 5)
XC_SPREAD_SET(d, double, int64_t, 6)
XC_SPREAD_SET(d, double, int64_t, 7)
XC_SPREAD_SET(d, double, int64_t, 8)

typedef int (*spread_f_fn)(const float *const *, int, const fparams *, int64_t *);
typedef int (*spread_d_fn)(const double *const *, int, const fparams *, int64_t *);
/* [index reference][KA] */
static const spread_f_fn SPREAD_F[2][9] = {
    {0, 0, sm_f2, sm_f3, sm_f4, sm_f5, sm_f6, sm_f7, sm_f8},
    {0, 0, si_f2, si_f3, si_f4, si_f5, si_f6, si_f7, si_f8}};
static const spread_d_fn SPREAD_D[2][9] = {
    {0, 0, sm_d2, sm_d3, sm_d4, sm_d5, sm_d6, sm_d7, sm_d8},
    {0, 0, si_d2, si_d3, si_d4, si_d5, si_d6, si_d7, si_d8}};

/* ------------------------------------------------------------------ real general chunk path */

/* F[j] = -1 (all bits) where every row is finite at j, else 0; returns the number of 0s. */
XC_HOT static int finite_mask(int ka, const double *const *rows, int m, int64_t *restrict F)
{
    int a, j, bad = 0;
    for (j = 0; j < m; j++) F[j] = -1;
    for (a = 0; a < ka; a++) {
        const double *restrict x = rows[a];
        for (j = 0; j < m; j++) F[j] &= -(int64_t)((dbits(x[j]) & XC_ABS64) < XC_EXP64);
    }
    for (j = 0; j < m; j++) bad += F[j] == 0;
    return bad;
}

/* Element-wise median of ka rows, equal to median_real where all values are finite (up to the
 * sign of a zero result, which neither |a - ref| nor |ref| sees; signed-zero comparisons take
 * the scalar path); elsewhere the result is meaningless and must be replaced. Sorts with
 * min/max like XC_SPREAD (see there). */
XC_HOT static void median_rows(int ka, const double *const *rows, int m, double *restrict R,
                               double *restrict S)
{
    int j, a, p;
    const double *x0 = rows[0], *x1 = ka > 1 ? rows[1] : rows[0];
    if (ka == 1) {
        memcpy(R, rows[0], (size_t)m * sizeof(double));
    } else if (ka == 2) {
        for (j = 0; j < m; j++) R[j] = mid_d(x0[j], x1[j]);
    } else if (ka == 3) {
        const double *x2 = rows[2];
        for (j = 0; j < m; j++) {
            double l = vmin_d(x0[j], x1[j]), h = vmax_d(x0[j], x1[j]);
            R[j] = vmax_d(l, vmin_d(h, x2[j]));
        }
    } else if (ka == 4) {
        const double *x2 = rows[2], *x3 = rows[3];
        for (j = 0; j < m; j++) {
            double lo = vmax_d(vmin_d(x0[j], x1[j]), vmin_d(x2[j], x3[j]));
            double hi = vmin_d(vmax_d(x0[j], x1[j]), vmax_d(x2[j], x3[j]));
            R[j] = mid_d(lo, hi);
        }
    } else {
        for (a = 0; a < ka; a++) memcpy(S + (size_t)a * CH, rows[a], (size_t)m * sizeof(double));
        for (p = 0; p < ka; p++) { /* odd-even transposition sort of the rows */
            for (a = p & 1; a + 1 < ka; a += 2) {
                double *u = S + (size_t)a * CH, *v = S + (size_t)(a + 1) * CH;
                for (j = 0; j < m; j++) {
                    double lo = vmin_d(u[j], v[j]), hi = vmax_d(u[j], v[j]);
                    u[j] = lo;
                    v[j] = hi;
                }
            }
        }
        if (ka & 1) {
            memcpy(R, S + (size_t)(ka / 2) * CH, (size_t)m * sizeof(double));
        } else {
            const double *u = S + (size_t)(ka / 2 - 1) * CH, *v = S + (size_t)(ka / 2) * CH;
            for (j = 0; j < m; j++) R[j] = mid_d(u[j], v[j]);
        }
    }
}

XC_HOT static void prep(const double *restrict R, int m, double rtol, double atol, int tolzero,
                        double *restrict AR, double *restrict THR, double *restrict TAU)
{
    int j;
    for (j = 0; j < m; j++) {
        double ar = fabs(R[j]), thr = atol + rtol * ar;
        AR[j] = ar;
        THR[j] = thr;
        TAU[j] = tolzero ? 1.0 : thr;
    }
}

/* One member against the reference, over the elements where F is set (all members finite).
 * Stores candidate flags: element j can raise the member's maximum M of d/f only if d/f > M,
 * i.e. d > M * f in exact arithmetic, so an element with d < RN(M * f) provably cannot
 * (rounding is monotone). The ulp divisor is a power of two, so M * ulp is exact when normal
 * and a tie d == M * ulp cannot win either. NaN products (inf * 0) belong to a maximum of inf,
 * which nothing raises. Returns the number of elements outside the tolerance; *amax gets the
 * largest |d| (as bits). */
XC_HOT static int64_t screen_member(const double *restrict x, const double *restrict R,
                                    const double *restrict AR, const double *restrict THR,
                                    const double *restrict TAU, const int64_t *restrict F, int m,
                                    double scale, double mn, double Mr, double Mu, double Mp,
                                    int32_t *restrict cand, int64_t *amax, int32_t *ncand)
{
    int j;
    int32_t nc = 0;
    int64_t cnt = 0, mx = 0, mb = dbits(mn);
    for (j = 0; j < m; j++) {
        int64_t db = dbits(x[j] - R[j]) & XC_ABS64 & F[j];
        double d = bitsd(db), ar = AR[j];
        double u = bitsd(max_d(dbits(bitsd(dbits(ar) & XC_EXP64) * scale), mb)), pu = Mp * u;
        int32_t c = (d >= Mr * ar) | (d >= Mu * TAU[j]) | (d > pu) | ((d == pu) & (pu < DBL_MIN));
        c &= d > 0.0;
        cand[j] = c;
        nc += c;
        cnt += d > THR[j];
        mx = max_d(mx, db);
    }
    *amax = mx;
    *ncand = nc;
    return cnt;
}

/* Everything for one chunk given double rows and the reference row: the vector pass over the
 * elements where all members are finite (F), then the scalar rules for the other nbad ones.
 * Returns how many (member, element) pairs needed more than the vector pass: candidates,
 * mismatches and non-finite elements; 0 means the chunk could have been skipped. */
static int64_t chunk_detail(const ctx_t *c, const double *const *rows, const double *R, int64_t j0,
                         int m, double *AR, double *THR, double *TAU, int32_t *cand,
                         const int64_t *F, const int32_t *badj, int nbad)
{
    int a, j, q;
    int64_t work = nbad;
    prep(R, m, c->rtol, c->atol, c->tolzero, AR, THR, TAU);
    for (a = 0; a < c->ka; a++) {
        acc_t *A = &c->acc[a];
        int64_t amax, cnt, f0 = A->first, fv = -1, fs;
        int32_t nc;
        const double *x = rows[a];
        if (a == c->refpos) continue;
        cnt = screen_member(x, R, AR, THR, TAU, F, m, c->uscale[a], c->umin[a], A->mx[1],
                            A->mx[3], A->mx[2], cand, &amax, &nc);
        if (bitsd(amax) > A->mx[0]) A->mx[0] = bitsd(amax);
        work += cnt + nc;
        if (cnt) {
            A->cnt[CAT_VAL] += cnt;
            if (f0 < 0) {
                for (j = 0; j < m; j++)
                    if (F[j] && fabs(x[j] - R[j]) > THR[j]) { fv = j0 + j; break; }
            }
        }
        for (j = 0; j < m && nc > 0; j++)
            if (cand[j]) {
                upd_stats(A, fabs(x[j] - R[j]), AR[j], TAU[j],
                          ulp_at(AR[j], c->uscale[a], c->umin[a]));
                nc--;
            }
        A->first = -1;
        for (q = 0; q < nbad; q++) {
            j = badj[q];
            elem_real(A, j0 + j, x[j], R[j], AR[j], THR[j], TAU[j], c->uscale[a], c->umin[a],
                      c->sz);
        }
        fs = A->first;
        /* the earliest of: an earlier chunk's, this vector pass's, this scalar pass's */
        A->first = f0 >= 0 ? f0 : fv < 0 ? fs : fs < 0 ? fv : fv < fs ? fv : fs;
    }
    return work;
}

/* ------------------------------------------------------------------ drivers */

static void chunk_scalar_real(const ctx_t *c, const double *const *rows, int64_t j0, int m,
                              double *vals, double *tmp)
{
    int j, a, ka = c->ka;
    for (j = 0; j < m; j++) {
        double b, ab, thr, tau;
        for (a = 0; a < ka; a++) vals[a] = rows[a][j];
        b = c->refpos >= 0 ? vals[c->refpos] : median_real(ka, vals, tmp);
        ab = fabs(b);
        thr = c->atol + c->rtol * ab;
        tau = c->tolzero ? 1.0 : thr;
        for (a = 0; a < ka; a++)
            if (a != c->refpos)
                elem_real(&c->acc[a], j0 + j, vals[a], b, ab, thr, tau, c->uscale[a],
                          c->umin[a], c->sz);
    }
}

/* Screening parameters for the next fused pass (see fparams). */
static void fused_params(const ctx_t *c, fparams *P, int f32)
{
    int a;
    double Mr = INFINITY, Mu = INFINITY, Mp = INFINITY, smin = INFINITY, mmin = INFINITY;
    for (a = 0; a < c->ka; a++) {
        const acc_t *A = &c->acc[a];
        if (a == c->refpos) continue;
        if (c->uscale[a] < smin) smin = c->uscale[a];
        if (c->umin[a] < mmin) mmin = c->umin[a];
        /* a member that never differed has no running maximum to beat; the fused pass reports
         * its own |d| maximum, and a non-zero one sends the chunk to chunk_detail */
        if (A->mx[0] == 0.0) continue;
        if (A->mx[1] < Mr) Mr = A->mx[1];
        if (A->mx[3] < Mu) Mu = A->mx[3];
        if (A->mx[2] < Mp) Mp = A->mx[2];
    }
    /* every element outside the tolerance must be a candidate: d > thr >= RN(Mu * thr) when
     * Mu <= 1, and with a zero tolerance any d > 0 is one */
    if (c->tolzero) Mu = 0.0;
    else if (Mu > 1.0) Mu = 1.0;
    P->rtol = c->rtol;
    P->atol = c->atol;
    P->smin = smin == INFINITY ? 0.0 : smin;
    P->mmin = mmin == INFINITY ? 1.0 : mmin;
    P->Mr = Mr;
    P->Mu = Mu;
    P->Mp = Mp;
    /* a NaN factor keeps its products out of the spread screen's minimum: Mr = inf raises
     * nothing, and inf * 0 would be a (negative) NaN; Mp * smin must be exact (normal) for the
     * product there to equal XC_FUSED's, else Mp = 0 screens every w > 0 */
    P->Mrs = Mr == INFINITY ? NAN : Mr;
    if (!(Mp == P->Mpc)) {
        /* only when Mp changed: with float64's mmin = 2^-1074, Mp * mmin is subnormal, which
         * costs a microcode assist on x86, per chunk. Float32 spread passes take
         * q >= DBL_MIN for granted (see XC_SPREAD): a tinier Mp is screened as 0 there */
        P->Mpc = Mp;
        P->Mps = Mp * P->smin;
        P->Mpm = Mp * P->mmin;
        if (Mp > 0.0 && Mp < INFINITY && (P->Mps < DBL_MIN || (f32 && P->Mpm < DBL_MIN)))
            P->Mps = P->Mpm = 0.0;
    }
    P->wlim = INT64_MAX;
    for (a = 0; a < c->ka; a++)
        if (a != c->refpos && dbits(c->acc[a].mx[0]) < P->wlim) P->wlim = dbits(c->acc[a].mx[0]);
    /* per member, in fused order (the reference first when there is one); a member that never
     * differed has maxima 0, so any difference of its own is a candidate */
    for (a = 0; a < c->ka && a < XC_FUSED_MAX; a++) {
        const acc_t *A = &c->acc[a];
        int pos = c->refpos >= 0 ? (a == c->refpos ? 0 : 1 + a - (a > c->refpos)) : a;
        double mu = A->mx[3];
        if (c->tolzero) mu = 0.0;
        else if (mu > 1.0) mu = 1.0;
        P->pr[pos] = A->mx[1];
        P->pu[pos] = mu;
        P->pp[pos] = A->mx[2];
    }
}

static int run_real(const ctx_t *c, const void *const *src, const int *code)
{
    int ka = c->ka, a, j, q, nbad, uniform = code[0], pm = 0, pm_left = 0, window = 0;
    int false_alarms = 0, full, sp_left = 0, sp_window = 0, sp_miss = 0, sp_backoff = 8;
    int nf_left = 0, nf_window = 0, nf_miss = 0, nf_backoff = 8;
    int64_t work;
    size_t rowsz = (size_t)CH * sizeof(double);
    /* B: ka decoded rows, S: ka key rows, then R, AR, THR, TAU, F; vals, tmp: ka each;
     * ptrs: 2 * ka row pointers (fused order and member order); cand, badj: CH int32 each */
    char *mem = malloc(rowsz * (size_t)(2 * ka + 5) + sizeof(double) * (size_t)(2 * ka)
                       + sizeof(void *) * (size_t)(2 * ka) + sizeof(int32_t) * 2 * CH
                       + sizeof(int64_t) * (size_t)ka);
    double *B, *R, *AR, *THR, *TAU, *vals, *tmp;
    int64_t *S, *mxo, *F;
    const double **rows;
    const void **frows;
    int32_t *cand, *badj;
    int64_t j0;
    int fused_ok, spread_ok;
    fparams P; /* screening parameters of the fused passes, per chunk (see fused_params) */
    if (!mem) return XC_ENOMEM;
    P.Mpc = NAN;
    B = (double *)mem;
    S = (int64_t *)(B + (size_t)ka * CH);
    R = (double *)(S + (size_t)ka * CH);
    AR = R + CH;
    THR = AR + CH;
    TAU = THR + CH;
    F = (int64_t *)(TAU + CH);
    vals = (double *)(F + CH);
    tmp = vals + ka;
    mxo = (int64_t *)(tmp + ka);
    rows = (const double **)(mxo + ka);
    frows = (const void **)(rows + ka);
    cand = (int32_t *)(frows + ka);
    badj = cand + CH;

    for (a = 1; a < ka; a++)
        if (code[a] != uniform) uniform = -1;
    fused_ok = !c->sz && ka >= 2 && ka <= XC_FUSED_MAX && (uniform == XC_F32 || uniform == XC_F64);
    /* against a member of float64 values, the full pass costs no more than the spread pass
     * (no conversions, |a - ref| is one subtraction per member): measured slower there */
    spread_ok = c->refpos < 0 || uniform == XC_F32;

    for (j0 = 0; j0 < c->n; j0 += CH) {
        int m = (int)(c->n - j0 < CH ? c->n - j0 : CH), fin = 1;
        if (fused_ok && nf_left == 0 && ++nf_window > 16) {
            /* when most chunks hold NaN or inf, the fused passes only find that out: skip
             * them for a while, longer each time */
            if (nf_miss >= 8) {
                nf_left = nf_backoff;
                if (nf_backoff < 256) nf_backoff *= 2;
            } else {
                nf_backoff = 8;
            }
            nf_miss = 0;
            nf_window = 1;
        }
        if (fused_ok && nf_left > 0) {
            nf_left--;
            if (nf_left == 0) nf_window = 0;
        } else if (fused_ok) {
            int anyc, p = 0, need_detail = 0;
            const size_t isz = uniform == XC_F32 ? sizeof(float) : sizeof(double);
            /* fused order: reference row first when there is one */
            if (c->refpos >= 0) frows[p++] = (const char *)src[c->refpos] + (size_t)j0 * isz;
            for (a = 0; a < ka; a++)
                if (a != c->refpos) frows[p++] = (const char *)src[a] + (size_t)j0 * isz;
            fused_params(c, &P, uniform == XC_F32);
            pm = pm_left > 0;
            if (pm) {
                pm_left--;
            } else if (++window > 16) {
                window = 1;
                false_alarms = 0;
            }
            full = 1;
            if (!spread_ok) {
                /* full pass only */
            } else if (sp_left > 0) {
                sp_left--;
            } else {
                /* spread pass: settles the chunk when no member's maximum of |a - ref| can rise
                 * and the screen finds no candidate */
                int64_t w;
                int settled;
                if (uniform == XC_F32)
                    anyc = SPREAD_F[c->refpos >= 0][ka]((const float *const *)frows, m, &P, &w);
                else
                    anyc = SPREAD_D[c->refpos >= 0][ka]((const double *const *)frows, m, &P, &w);
                settled = w <= P.wlim && w < XC_EXP64 && !anyc; /* maxima may be inf */
                if (!settled) {
                    sp_miss++;
                    if (w >= XC_EXP64) { /* NaN or inf somewhere: the general path */
                        fin = 0;
                        full = 0;
                    } else if (w <= P.wlim && !pm) {
                        full = 0; /* the full pass would raise the same alarm: chunk_detail */
                    }
                }
                /* when most spread passes of 16 settle nothing (maxima still rising, NaN
                 * everywhere, members of very different noise), skip them for a while, longer
                 * each time */
                if (++sp_window == 16) {
                    if (sp_miss >= 8) {
                        sp_left = sp_backoff;
                        if (sp_backoff < 256) sp_backoff *= 2;
                    } else {
                        sp_backoff = 8;
                    }
                    sp_miss = 0;
                    sp_window = 0;
                }
                if (settled) continue;
            }
            if (full) {
                if (uniform == XC_F32)
                    anyc = FUSED_F[pm][c->refpos >= 0][ka]((const float *const *)frows, m, &P,
                                                           mxo);
                else
                    anyc = FUSED_D[pm][c->refpos >= 0][ka]((const double *const *)frows, m, &P,
                                                           mxo);
                for (a = 0; a < ka; a++) fin &= mxo[a] < XC_EXP64;
            }
            if (full && fin) {
                /* mxo is in fused order; map back to member positions */
                for (a = 0; a < ka; a++) {
                    int pos = c->refpos >= 0 ? (a == c->refpos ? 0 : 1 + a - (a > c->refpos))
                                             : a;
                    double dm = bitsd(mxo[pos]);
                    acc_t *A = &c->acc[a];
                    if (a == c->refpos) continue;
                    if (A->mx[0] == 0.0 && dm > 0.0) need_detail = 1;
                    if (dm > A->mx[0]) A->mx[0] = dm;
                }
                if (!anyc && !need_detail) continue;
            }
        }
        if (fused_ok && nf_left == 0) nf_miss += !fin;
        /* general path: decode to double rows */
        for (a = 0; a < ka; a++) {
            if (code[a] == XC_F64) {
                rows[a] = (const double *)src[a] + j0;
            } else {
                double *dst = B + (size_t)a * CH;
                load_real(code[a], src[a], j0, m, dst);
                rows[a] = dst;
            }
        }
        if (c->sz) { /* signed-zero mismatches are only told apart by the scalar rules */
            chunk_scalar_real(c, rows, j0, m, vals, tmp);
            continue;
        }
        nbad = finite_mask(ka, rows, m, F);
        for (j = 0, q = 0; q < nbad; j++) /* the elements the scalar rules take */
            if (!F[j]) badj[q++] = j;
        if (c->refpos >= 0) {
            work = chunk_detail(c, rows, rows[c->refpos], j0, m, AR, THR, TAU, cand, F, badj,
                                nbad);
        } else {
            median_rows(ka, rows, m, R, (double *)S);
            for (q = 0; q < nbad; q++) {
                j = badj[q];
                for (a = 0; a < ka; a++) vals[a] = rows[a][j];
                R[j] = median_real(ka, vals, tmp);
            }
            work = chunk_detail(c, rows, R, j0, m, AR, THR, TAU, cand, F, badj, nbad);
        }
        if (fused_ok && !pm) {
            /* The cheap screen compares the largest difference with the smallest maxima; when
             * the members' differences have very different sizes it keeps sending chunks here
             * for nothing. After 4 such false alarms within 16 chunks, screen per member for
             * the next 256 chunks. */
            false_alarms += work == 0;
            if (false_alarms >= 4) {
                pm_left = 256;
                false_alarms = 0;
                window = 0;
            }
        }
    }
    free(mem);
    return XC_OK;
}

static int run_cplx(const ctx_t *c, const void *const *src, const int *code)
{
    int ka = c->ka, a, j;
    size_t rowsz = (size_t)CH * sizeof(double);
    char *mem = malloc(rowsz * (size_t)(2 * ka) + sizeof(double) * (size_t)(6 * ka));
    double *RE, *IM, *vr, *vi, *tr, *ti;
    int64_t j0;
    if (!mem) return XC_ENOMEM;
    RE = (double *)mem;
    IM = RE + (size_t)ka * CH;
    vr = IM + (size_t)ka * CH;
    vi = vr + ka;
    tr = vi + ka;
    ti = tr + ka;
    for (j0 = 0; j0 < c->n; j0 += CH) {
        int m = (int)(c->n - j0 < CH ? c->n - j0 : CH);
        for (a = 0; a < ka; a++)
            load_cplx(code[a], src[a], j0, m, RE + (size_t)a * CH, IM + (size_t)a * CH);
        for (j = 0; j < m; j++) {
            double br, bi, ab, thr, tau;
            for (a = 0; a < ka; a++) {
                vr[a] = RE[(size_t)a * CH + j];
                vi[a] = IM[(size_t)a * CH + j];
            }
            if (c->refpos >= 0) {
                br = vr[c->refpos];
                bi = vi[c->refpos];
            } else {
                median_cplx(ka, vr, vi, tr, ti, &br, &bi);
            }
            ab = hypot(br, bi);
            thr = c->atol + c->rtol * ab;
            tau = c->tolzero ? 1.0 : thr;
            for (a = 0; a < ka; a++)
                if (a != c->refpos)
                    elem_cplx(&c->acc[a], j0 + j, vr[a], vi[a], br, bi, ab, thr, tau,
                              c->uscale[a], c->umin[a], c->sz, c->rtol, c->atol);
        }
    }
    free(mem);
    return XC_OK;
}

static int run_int(const ctx_t *c, const void *const *src, const int *code)
{
    int ka = c->ka, a, b, j;
    char *mem = malloc((size_t)CH * (size_t)ka * (sizeof(uint64_t) + 1)
                       + (size_t)ka * 2 * (sizeof(uint64_t) + 1));
    uint64_t *MAG, *vm, *tm;
    unsigned char *NEG, *vn, *tn;
    int64_t j0;
    if (!mem) return XC_ENOMEM;
    MAG = (uint64_t *)mem;
    vm = MAG + (size_t)ka * CH;
    tm = vm + ka;
    NEG = (unsigned char *)(tm + ka);
    vn = NEG + (size_t)ka * CH;
    tn = vn + ka;
    for (j0 = 0; j0 < c->n; j0 += CH) {
        int m = (int)(c->n - j0 < CH ? c->n - j0 : CH);
        for (a = 0; a < ka; a++)
            load_int(code[a], src[a], j0, m, NEG + (size_t)a * CH, MAG + (size_t)a * CH);
        for (j = 0; j < m; j++) {
            unsigned bn;
            uint64_t bm;
            double ab, thr, tau;
            for (a = 0; a < ka; a++) {
                vn[a] = NEG[(size_t)a * CH + j];
                vm[a] = MAG[(size_t)a * CH + j];
            }
            if (c->refpos >= 0) {
                bn = vn[c->refpos];
                bm = vm[c->refpos];
            } else { /* lower median: insertion sort of the ka values */
                for (a = 0; a < ka; a++) {
                    unsigned xn = vn[a];
                    uint64_t xm = vm[a];
                    for (b = a - 1; b >= 0 && int_less(xn, xm, tn[b], tm[b]); b--) {
                        tn[b + 1] = tn[b];
                        tm[b + 1] = tm[b];
                    }
                    tn[b + 1] = (unsigned char)xn;
                    tm[b + 1] = xm;
                }
                bn = tn[(ka - 1) / 2];
                bm = tm[(ka - 1) / 2];
            }
            ab = (double)bm;
            thr = c->atol + c->rtol * ab;
            tau = c->tolzero ? 1.0 : thr;
            for (a = 0; a < ka; a++) {
                double d;
                if (a == c->refpos) continue;
                d = int_absdiff(vn[a], vm[a], bn, bm);
                upd_stats(&c->acc[a], d, ab, tau, 1.0);
                if (d > thr) mark(&c->acc[a], CAT_VAL, j0 + j);
            }
        }
    }
    free(mem);
    return XC_OK;
}

int xc_compare(int k, const void *const *data, const int *codes, const unsigned char *active,
               int64_t n, int ref, int domain, double rtol, double atol, int signed_zero,
               const double *ulp_scale, const double *ulp_min, int64_t *counts, double *maxima)
{
    int i, a, ka = 0, rc = XC_OK;
    void *mem;
    const void **src;
    int *code, *idx;
    double *us, *um;
    acc_t *acc;
    ctx_t c;

    if (k < 1 || n < 0 || ref < -1 || ref >= k || !(rtol >= 0.0) || !(atol >= 0.0))
        return XC_EARG;
    if (domain != XC_DOMAIN_INT && domain != XC_DOMAIN_REAL && domain != XC_DOMAIN_COMPLEX)
        return XC_EARG;
    if (ref >= 0 && !active[ref]) return XC_EARG;
    for (i = 0; i < k; i++) {
        for (a = 0; a < XC_NCOUNTS; a++) counts[i * XC_NCOUNTS + a] = 0;
        counts[i * XC_NCOUNTS + 4] = -1;
        for (a = 0; a < XC_NMAXIMA; a++) maxima[i * XC_NMAXIMA + a] = 0.0;
        ka += active[i] != 0;
    }
    if (ka == 0 || n == 0) return XC_OK;

    mem = malloc((size_t)ka * (sizeof(void *) + 2 * sizeof(int) + 2 * sizeof(double)
                               + sizeof(acc_t)));
    if (!mem) return XC_ENOMEM;
    acc = (acc_t *)mem;
    us = (double *)(acc + ka);
    um = us + ka;
    src = (const void **)(um + ka);
    code = (int *)(src + ka);
    idx = code + ka;

    c.refpos = -1;
    for (i = 0, a = 0; i < k; i++) {
        if (!active[i]) continue;
        if (i == ref) c.refpos = a;
        idx[a] = i;
        src[a] = data[i];
        code[a] = codes[i];
        us[a] = ulp_scale[i];
        um[a] = ulp_min[i];
        memset(&acc[a], 0, sizeof(acc_t));
        acc[a].first = -1;
        a++;
    }
    c.ka = ka;
    c.n = n;
    c.rtol = rtol;
    c.atol = atol;
    c.tolzero = rtol == 0.0 && atol == 0.0;
    c.sz = signed_zero != 0;
    c.uscale = us;
    c.umin = um;
    c.acc = acc;

    if (domain == XC_DOMAIN_REAL) rc = run_real(&c, src, code);
    else if (domain == XC_DOMAIN_COMPLEX) rc = run_cplx(&c, src, code);
    else rc = run_int(&c, src, code);

    if (rc == XC_OK) {
        for (a = 0; a < ka; a++) {
            i = idx[a];
            counts[i * XC_NCOUNTS + 0] = acc[a].cnt[CAT_NAN];
            counts[i * XC_NCOUNTS + 1] = acc[a].cnt[CAT_INF];
            counts[i * XC_NCOUNTS + 2] = acc[a].cnt[CAT_SZ];
            counts[i * XC_NCOUNTS + 3] = acc[a].cnt[CAT_VAL];
            counts[i * XC_NCOUNTS + 4] = acc[a].first;
            memcpy(maxima + (size_t)i * XC_NMAXIMA, acc[a].mx, sizeof acc[a].mx);
        }
    }
    free(mem);
    return rc;
}

int xc_bytes_equal(int k, const void *const *data, int64_t nbytes)
{
    int i;
    if (nbytes <= 0) return 1;
    for (i = 1; i < k; i++)
        if (memcmp(data[0], data[i], (size_t)nbytes) != 0) return 0;
    return 1;
}

XC_HOT double xc_read_sum(const double *x, int64_t n)
{
    double acc[LANES] = {0.0}, s = 0.0;
    int64_t j = 0;
    int l;
    for (; j + LANES <= n; j += LANES)
        for (l = 0; l < LANES; l++) acc[l] += x[j + l];
    for (; j < n; j++) acc[0] += x[j];
    for (l = 0; l < LANES; l++) s += acc[l];
    return s;
}
