/*
 * int8 TRANSPOSE (see mcu_cmsis_transpose_s8.h): the outer three axes walked in C, each plane of the
 * two innermost by the fastest path the core has.
 */
#include "mcu_cmsis_transpose_s8.h"

#include <string.h>

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"

#if defined(MCU_CMSIS_USE_MVE)
/** out[r][c] = src[r * rs + c * cs]: eight elements of a row per gather (offsets c * cs fit 16 bits),
    stored by one VSTRB; the row's tail predicated. */
static void transpose_rows_gather(const int8_t *src, int32_t rows, int32_t rs, int32_t cols, int32_t cs, int8_t *out)
{
    const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)cs);
    const int32_t c8 = cols & ~7;
    for (int32_t r = 0; r < rows; r++, src += rs, out += cols) {
        const uint8_t *s = (const uint8_t *)src;
        uint8_t *d = (uint8_t *)out;
        for (int32_t c = 0; c < c8; c += 8, s += 8 * cs, d += 8) {
            vstrbq_u16(d, vldrbq_gather_offset_u16(s, offsets));
        }
        if (c8 < cols) {
            const mve_pred16_t pr = vctp16q((uint32_t)(cols - c8));
            vstrbq_p_u16(d, vldrbq_gather_offset_z_u16(s, offsets, pr), pr);
        }
    }
}

/** out[r][c] = src[r + c * cs] (rows contiguous in the input, fewer columns than rows): per column,
    eight consecutive input bytes loaded by one VLDRB and scattered down the column (offsets r * cols
    fit 16 bits); the column's tail predicated. */
static void transpose_cols_scatter(const int8_t *src, int32_t rows, int32_t cols, int32_t cs, int8_t *out)
{
    const uint16x8_t offsets = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)cols);
    const int32_t r8 = rows & ~7;
    for (int32_t c = 0; c < cols; c++, src += cs, out++) {
        const uint8_t *s = (const uint8_t *)src;
        uint8_t *d = (uint8_t *)out;
        for (int32_t r = 0; r < r8; r += 8, s += 8, d += 8 * cols) {
            vstrbq_scatter_offset_u16(d, offsets, vldrbq_u16(s));
        }
        if (r8 < rows) {
            const mve_pred16_t pr = vctp16q((uint32_t)(rows - r8));
            vstrbq_scatter_offset_p_u16(d, offsets, vldrbq_z_u16(s, pr), pr);
        }
    }
}
#else
/** dst[i] = src[i * step], i < n (four bytes packed per word store on the DSP path). */
static void transpose_row(const int8_t *src, int32_t step, int32_t n, int8_t *dst)
{
    int32_t i = 0;
#if defined(MCU_CMSIS_USE_DSP)
    for (; i + 4 <= n; i += 4, src += 4 * step, dst += 4) {
        const uint32_t b0 = (uint8_t)src[0], b1 = (uint8_t)src[step], b2 = (uint8_t)src[2 * step];
        const uint32_t b3 = (uint8_t)src[3 * step];
        mcu_write_s8x4(dst, (int32_t)(b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)));
    }
#endif
    for (; i < n; i++, src += step) {
        *dst++ = *src;
    }
}
#endif

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** The 4x4 block out[j][k] = byte j of w_k (w_k: four consecutive input bytes), rows `stride` apart. */
static inline void transpose_block4(int32_t w0, int32_t w1, int32_t w2, int32_t w3, int8_t *dst, int32_t stride)
{
    const uint32_t m = 0x00FF00FFu;
    const int32_t t0 = (int32_t)(((uint32_t)w0 & m) | (((uint32_t)w1 & m) << 8));     /* w0b0 w1b0 w0b2 w1b2 */
    const int32_t t1 = (int32_t)((((uint32_t)w0 >> 8) & m) | ((uint32_t)w1 & ~m));    /* w0b1 w1b1 w0b3 w1b3 */
    const int32_t t2 = (int32_t)(((uint32_t)w2 & m) | (((uint32_t)w3 & m) << 8));
    const int32_t t3 = (int32_t)((((uint32_t)w2 >> 8) & m) | ((uint32_t)w3 & ~m));
    mcu_write_s8x4(dst, mcu_pkhbt16(t0, t2));
    mcu_write_s8x4(dst + stride, mcu_pkhbt16(t1, t3));
    mcu_write_s8x4(dst + 2 * stride, mcu_pkhtb16(t2, t0));
    mcu_write_s8x4(dst + 3 * stride, mcu_pkhtb16(t3, t1));
}

/** out[r][c] = src[r + c * cs] (rows contiguous in the input): 4x4 blocks, then the edges. */
static void transpose_plane_blocks(const int8_t *src, int32_t rows, int32_t cols, int32_t cs, int8_t *out)
{
    const int32_t r4 = rows & ~3, c4 = cols & ~3;
    for (int32_t r = 0; r < r4; r += 4) {
        const int8_t *s = src + r;
        int8_t *d = out + r * cols;
        for (int32_t c = 0; c < c4; c += 4, s += 4 * cs, d += 4) {
            transpose_block4(mcu_read_s8x4(s), mcu_read_s8x4(s + cs), mcu_read_s8x4(s + 2 * cs),
                             mcu_read_s8x4(s + 3 * cs), d, cols);
        }
        for (int32_t c = c4; c < cols; c++) {
            for (int32_t j = 0; j < 4; j++) {
                d[j * cols + c - c4] = src[r + j + c * cs];
            }
        }
    }
    for (int32_t r = r4; r < rows; r++) {
        transpose_row(src + r, cs, cols, out + r * cols);
    }
}
#endif

/** One plane: out[r][c] = src[r * rs + c * cs], r < rows, c < cols, out row-major. */
static void transpose_plane(const int8_t *src, int32_t rows, int32_t rs, int32_t cols, int32_t cs, int8_t *out)
{
    if (cs == 1) {
        for (int32_t r = 0; r < rows; r++) {
            memcpy(out + r * cols, src + r * rs, (size_t)cols);
        }
        return;
    }
#if defined(MCU_CMSIS_USE_MVE)
    if (rs == 1 && rows > cols && 7 * cols < 65536) {
        transpose_cols_scatter(src, rows, cols, cs, out);
        return;
    }
    if (7 * cs < 65536 && cols >= 8) {
        transpose_rows_gather(src, rows, rs, cols, cs, out);
        return;
    }
#elif defined(MCU_CMSIS_USE_DSP)
    if (rs == 1 && rows >= 4 && cols >= 4) {
        transpose_plane_blocks(src, rows, cols, cs, out);
        return;
    }
#endif
#if !defined(MCU_CMSIS_USE_MVE)
    if (cols >= 4) {
        for (int32_t r = 0; r < rows; r++) {
            transpose_row(src + r * rs, cs, cols, out + r * cols);
        }
        return;
    }
#endif
    for (int32_t r = 0; r < rows; r++, src += rs) { /* short rows (or offsets beyond 16 bits) */
        for (int32_t c = 0; c < cols; c++) {
            *out++ = src[c * cs];
        }
    }
}

void mcu_cmsis_transpose_s8(const mcu_cmsis_transpose_params *p, const int8_t *input, int8_t *output)
{
    const int32_t n0 = p->count0, n1 = p->count1, n2 = p->count2, n3 = p->count3, n4 = p->count4;
    const int32_t s0 = p->step0, s1 = p->step1, s2 = p->step2, s3 = p->step3, s4 = p->step4;
    const int32_t plane = n3 * n4;
    const int8_t *base = input + p->start;
    for (int32_t i0 = 0; i0 < n0; i0++) {
        for (int32_t i1 = 0; i1 < n1; i1++) {
            const int8_t *src = base + i0 * s0 + i1 * s1;
            for (int32_t i2 = 0; i2 < n2; i2++, output += plane, src += s2) {
                transpose_plane(src, n3, s3, n4, s4, output);
            }
        }
    }
}
