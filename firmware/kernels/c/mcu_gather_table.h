/*
 * Portable table-driven gather (any element size): the output-order gather of ops whose input
 * position is, per output axis, a function of that axis' index alone, but not an even walk
 * (MIRROR_PAD's reflections, TILE's wrap-around, BATCH_TO_SPACE_ND's cropped block interleave).
 * The code generator works out one offset table per output axis at compile time.
 */
#ifndef MCU_GATHER_TABLE_H
#define MCU_GATHER_TABLE_H

#include <stdint.h>

#define MCU_GATHER_TABLE_RANK 6

/** Parameters of mcu_gather_table: the output is count[0] x .. x count[5] runs (row-major), each
    of `run` consecutive input elements. Element sizes: 1, 2 or 4 bytes. */
typedef struct {
    int32_t elem_size;                     /**< element size in bytes: 1, 2 or 4 */
    int32_t start;                         /**< element offset added to every run, >= 0 */
    int32_t count[MCU_GATHER_TABLE_RANK];  /**< runs along each output axis, >= 1 */
    int32_t run;                           /**< consecutive elements per run, >= 1 */
} mcu_gather_table_params;

/** Output run (i0, .., i5) is the `run` input elements from element start + table_0[i0] + .. +
    table_5[i5], where table_k is the count[k] entries of `offsets` after those of the axes before
    k (sum(count) entries in all, each >= 0). Every element read lies in the input. */
void mcu_gather_table(const mcu_gather_table_params *p, const void *input, const int32_t *offsets, void *output);

#endif /* MCU_GATHER_TABLE_H */
