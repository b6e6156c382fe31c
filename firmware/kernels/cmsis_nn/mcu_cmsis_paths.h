/*
 * Which kernel paths a firmware carries. Kernels choose among several paths at run time (by shape,
 * stride, whether the fast requantization is proven); a firmware needs only the ones its models'
 * layers take. The compiler knows them (planner/targets/cmsis_nn/paths.py) and a build defines
 * MCU_PATHS_SELECTED and MCU_PATH_<name>=1 for each path any of its models takes (the union, for a
 * build of several models); a path not selected is compiled out, its functions left for the
 * linker to drop, and a layer that would take it takes the path's exact general fallback (slower,
 * never wrong). Without MCU_PATHS_SELECTED (host tests, hand-written builds) every path is there.
 */
#ifndef MCU_CMSIS_PATHS_H
#define MCU_CMSIS_PATHS_H

#ifdef MCU_PATHS_SELECTED
#define MCU_PATH_DEFAULT 0
#else
#define MCU_PATH_DEFAULT 1
#endif

/* DSP depthwise (mcu_cmsis_dwconv_dsp.h): the small-map 3x3 pixel sweep (and within it the 3x3
   output maps' own path, mcu_cmsis_dw3x3_map3, at stride 1 and at stride 2), one input channel, the
   3x3 pair layout by stride, the 3x3 lane pairs by stride, any filter with the fast
   requantization. The general line sweep (mcu_cmsis_dw_dsp_any) and the plain pixel loop are
   always there: the fallbacks. */
#ifndef MCU_PATH_DW_PIX3
#define MCU_PATH_DW_PIX3 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_MAP3
#define MCU_PATH_DW_MAP3 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_MAP3_S2
#define MCU_PATH_DW_MAP3_S2 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_IN1
#define MCU_PATH_DW_IN1 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_PAIRS_S1
#define MCU_PATH_DW_PAIRS_S1 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_PAIRS_S2
#define MCU_PATH_DW_PAIRS_S2 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_K3S1
#define MCU_PATH_DW_K3S1 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_K3S2
#define MCU_PATH_DW_K3S2 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_DW_ANY_FAST
#define MCU_PATH_DW_ANY_FAST MCU_PATH_DEFAULT
#endif

/* DSP convolutions and fully connected layers (mcu_cmsis_conv2d_s8.c, mcu_cmsis_pair_dsp.h,
   mcu_cmsis_fully_connected_s8.c): the 3x3 three-channel blocks (fallback: the general column
   loop); the im2col columns of the offset layout and of the others; the pair products in C (the
   assembly does not take the layer: no proven records, a clamp, an odd channel count; always
   there at -O0, where the loops are C) and the plain layout's assembly; the fully connected layer
   with more rows (or depth 0), and the one-row layer's per-group C loop. These have no cheaper
   fallback: a layer reaching one the build left out stops at MCU_PATH_CHECK (a trap). */
#ifndef MCU_PATH_CONV_3X3X3
#define MCU_PATH_CONV_3X3X3 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_CONV_OFFSET
#define MCU_PATH_CONV_OFFSET MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_CONV_COLUMN
#define MCU_PATH_CONV_COLUMN MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_PAIR_C
#define MCU_PATH_PAIR_C MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_PAIR_PLAIN
#define MCU_PATH_PAIR_PLAIN MCU_PATH_DEFAULT
#endif
/* The offset pair layout's assembly (mcu_cmsis_pair_dsp.h) with the requantization's rounding
   correction of negative accumulators, and without it for layers whose output offset is at or below
   the clamp's minimum (mcu_pair_relu: ReLU-like; one cycle an output less). A ReLU-like layer takes
   the signed routine where the build has no PAIR_RELU (exact too); a layer reaching a routine the
   build left out stops at a trap. */
#ifndef MCU_PATH_PAIR_RELU
#define MCU_PATH_PAIR_RELU MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_PAIR_SIGNED
#define MCU_PATH_PAIR_SIGNED MCU_PATH_DEFAULT
#endif
/* The 1x1 kernel's dense run of the wide layout with in_c up to 32 on the stack
   (mcu_cmsis_pair_small_dsp.h); without it the wide routine's run (slower, never wrong). */
#ifndef MCU_PATH_PAIR_SMALL
#define MCU_PATH_PAIR_SMALL MCU_PATH_DEFAULT
#endif
/* ... its routines specialised for in_c 8, 16, 24, 32 (PAIR_SMALL: the generic one, in_c 4, 12, 20, 28;
   a build without the routine for its in_c takes the wide routine's run) */
#ifndef MCU_PATH_PAIR_SMALL8
#define MCU_PATH_PAIR_SMALL8 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_PAIR_SMALL16
#define MCU_PATH_PAIR_SMALL16 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_PAIR_SMALL24
#define MCU_PATH_PAIR_SMALL24 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_PAIR_SMALL32
#define MCU_PATH_PAIR_SMALL32 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_FC_ROWS
#define MCU_PATH_FC_ROWS MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_FC_DOT
#define MCU_PATH_FC_DOT MCU_PATH_DEFAULT
#endif

/* Helium depthwise (mcu_cmsis_dwconv_mve.h): one input channel, K x 1 / 1 x K lines, 3x3 columns,
   depth multipliers of four and the gathered others; without them the pixel path or the plain C
   loop (exact, slower). */
#ifndef MCU_PATH_MVE_DW_IN1
#define MCU_PATH_MVE_DW_IN1 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_MVE_DW_LINES
#define MCU_PATH_MVE_DW_LINES MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_MVE_DW_COLUMNS
#define MCU_PATH_MVE_DW_COLUMNS MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_MVE_DW_M4
#define MCU_PATH_MVE_DW_M4 MCU_PATH_DEFAULT
#endif
#ifndef MCU_PATH_MVE_DW_GATHER
#define MCU_PATH_MVE_DW_GATHER MCU_PATH_DEFAULT
#endif

/* Helium reading the DSP ISA's wide pair layout (C lowered for an M4 built for an M55): the plain C
   loops of the convolutions. */
#ifndef MCU_PATH_MVE_WIDE
#define MCU_PATH_MVE_WIDE MCU_PATH_DEFAULT
#endif

/** Stop where a path the build left out is reached (the compiler's list and the dispatcher
    disagree: a bug): a trap, never a wrong output. The code after it is dead, so the path's
    functions go unreferenced. */
#define MCU_PATH_CHECK(on)                                                                                            \
    do {                                                                                                              \
        if (!(on)) {                                                                                                  \
            __builtin_trap();                                                                                         \
        }                                                                                                             \
    } while (0)

#endif /* MCU_CMSIS_PATHS_H */
