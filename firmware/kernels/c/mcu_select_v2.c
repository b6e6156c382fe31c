/* Portable SELECT_V2: a three-input broadcast walk over rows of the last axis, copying elements of
   1, 2 or 4 bytes. */
#include "mcu_select_v2.h"

#define MCU_SELECT_ROW(type)                                                              \
    do {                                                                                  \
        const type *xs = (const type *)x + ox;                                            \
        const type *ys = (const type *)y + oy;                                            \
        type *out = (type *)output + r * cols;                                            \
        for (int32_t c = 0; c < cols; c++) {                                              \
            out[c] = cs[c * step_c] ? xs[c * step_x] : ys[c * step_y];                    \
        }                                                                                 \
    } while (0)

void mcu_select_v2(const mcu_select_v2_params *p, const uint8_t *cond, const void *x, const void *y, void *output)
{
    const int last = MCU_SELECT_V2_RANK - 1;
    const int32_t cols = p->dims[last];
    const int32_t step_c = p->stride_cond[last];
    const int32_t step_x = p->stride_x[last];
    const int32_t step_y = p->stride_y[last];
    int32_t rows = 1;
    for (int k = 0; k < last; k++) {
        rows *= p->dims[k];
    }
    for (int32_t r = 0; r < rows; r++) {
        int32_t oc = 0;
        int32_t ox = 0;
        int32_t oy = 0;
        int32_t rest = r;
        for (int k = last - 1; k >= 0; k--) {
            const int32_t i = rest % p->dims[k];
            rest /= p->dims[k];
            oc += i * p->stride_cond[k];
            ox += i * p->stride_x[k];
            oy += i * p->stride_y[k];
        }
        const uint8_t *cs = cond + oc;
        if (p->elem_size == 1) {
            MCU_SELECT_ROW(uint8_t);
        } else if (p->elem_size == 2) {
            MCU_SELECT_ROW(uint16_t);
        } else {
            MCU_SELECT_ROW(uint32_t);
        }
    }
}
