/*
 * Portable EMBEDDING_LOOKUP (TFLM's embedding_lookup.cc): output row i is row lookup[i] of the
 * table, copied as stored (EvalSimple) or, for an int8 table and a float32 output, dequantized
 * as (float)x * scale (EvalHybrid). An index outside [0, rows) (TFLM stops with an error) gives a
 * row of zeros and a return of 1 (0 otherwise): the generated run stops there with
 * <PREFIX>_ERR_INDEX.
 */
#ifndef MCU_EMBEDDING_LOOKUP_H
#define MCU_EMBEDDING_LOOKUP_H

#include <stdint.h>

/** lookups: number of indices; rows: the table's first dimension; columns: bytes per row for
    mcu_embedding_lookup, elements per row for mcu_embedding_lookup_hybrid; scale: the int8
    table's scale (hybrid only). */
typedef struct {
    int32_t lookups;
    int32_t rows;
    int32_t columns;
    float scale;
} mcu_embedding_lookup_params;

int32_t mcu_embedding_lookup(const mcu_embedding_lookup_params *p, const int32_t *lookup, const void *table,
                             void *output);
int32_t mcu_embedding_lookup_hybrid(const mcu_embedding_lookup_params *p, const int32_t *lookup,
                                    const int8_t *table, float *output);

#endif /* MCU_EMBEDDING_LOOKUP_H */
