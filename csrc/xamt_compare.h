/* Xamt comparator kernels (C99): tolerance-aware, NaN-aware comparison of a group of arrays.
 *
 * The semantics are defined in xamt/compare/__init__.py (module docstring); this file, the numba
 * kernel (xamt/compare/backend_numba.py) and the numpy reference (xamt/compare/backend_numpy.py)
 * implement the same arithmetic in float64 so that their reports are bit-identical.
 *
 * The block between CDEF-BEGIN and CDEF-END is read verbatim by csrc/build_compare.py as the cffi
 * declaration, so it must stay plain C that cffi's parser accepts (no macros, no includes).
 */
#ifndef XAMT_COMPARE_H
#define XAMT_COMPARE_H

#include <stdint.h>

/* CDEF-BEGIN */
/* Element codes of the members (how the bytes of one element are read). */
enum {
    XC_BOOL = 0, XC_I8 = 1, XC_I16 = 2, XC_I32 = 3, XC_I64 = 4,
    XC_U8 = 5, XC_U16 = 6, XC_U32 = 7, XC_U64 = 8,
    XC_F16 = 9, XC_BF16 = 10, XC_F32 = 11, XC_F64 = 12,
    XC_C64 = 13, XC_C128 = 14
};

/* Arithmetic domain of the whole group. */
enum { XC_DOMAIN_INT = 0, XC_DOMAIN_REAL = 1, XC_DOMAIN_COMPLEX = 2 };

/* Return codes of xc_compare. */
enum { XC_OK = 0, XC_EARG = -1, XC_ENOMEM = -2 };

/* Number of int64 and double outputs per member (see xc_compare). */
enum { XC_NCOUNTS = 5, XC_NMAXIMA = 4 };

/* Compare k members of n elements each (C-contiguous, native byte order).
 *   data[i], codes[i]     base pointer and element code of member i
 *   active[i]             1 when member i takes part (same shape as the reference), else 0
 *   ref                   index of the reference member, or -1 for the element-wise median
 *   domain                XC_DOMAIN_*
 *   rtol, atol            tolerance, |a - b| <= atol + rtol * |ref|
 *   signed_zero           1: -0.0 and +0.0 differ
 *   ulp_scale[i], ulp_min[i]  ulp of member i's own dtype at |x|: max(pow2floor(|x|) * scale, min)
 * Outputs, per member i (zeroed for inactive members and the reference member):
 *   counts[i*5 + 0..4]    nan, inf, signed-zero, value mismatches, first mismatching flat index (-1)
 *   maxima[i*4 + 0..3]    max abs diff, max rel diff, max ulp diff, max diff in tolerance units
 */
int xc_compare(int k, const void *const *data, const int *codes, const unsigned char *active,
               int64_t n, int ref, int domain, double rtol, double atol, int signed_zero,
               const double *ulp_scale, const double *ulp_min,
               int64_t *counts, double *maxima);

/* 1 when the first nbytes bytes of all k buffers are identical, else 0. */
int xc_bytes_equal(int k, const void *const *data, int64_t nbytes);

/* Sum of n doubles, vectorised: reads memory as fast as one core can (bandwidth baseline). */
double xc_read_sum(const double *x, int64_t n);
/* CDEF-END */

#endif
