/* SPDX-License-Identifier: BSD-3-Clause */
/*
** quantize_ops.c - cpu kernels of fbgemm.quantize_rows and
** fbgemm.dequantize_rows: attribute checks, output shapes, and the rows
** split across threads (quantize.c does one row).
*/
#include <string.h>

#include "tbe_internal.h"

/* parse_call reads the format attributes of either op at the quantiser's
** indices: dequantize_rows lists the same ones first, then dim. */
_Static_assert((int)PK_ATTR(fbg_dequantize_rows, fp8_exponent_bias) == (int)PK_ATTR(fbg_quantize_rows,
                                                                                    fp8_exponent_bias)
               && (int)PK_ATTR(fbg_dequantize_rows, dim) == (int)fbg_quantize_rows__n_attrs,
               "dequantize_rows starts with the quantiser's attributes");

/* What both ops check first: the format the attributes describe (dim is
** filled by the caller), and a contiguous input. */
static loom_status parse_call(const loom_call *call, const char *op, fbg_row_format *f)
{
    const loom_attr_value *wtype = &call->attrs[PK_ATTR(fbg_quantize_rows, weight_type)];
    const char *lay = call->attrs[PK_ATTR(fbg_quantize_rows, layout)].u.s;
    const int64_t align = call->attrs[PK_ATTR(fbg_quantize_rows, row_alignment)].u.i;
    const int64_t ebits = call->attrs[PK_ATTR(fbg_quantize_rows, fp8_exponent_bits)].u.i;
    const int64_t ebias = call->attrs[PK_ATTR(fbg_quantize_rows, fp8_exponent_bias)].u.i;
    char buf[96];
    int t = fbg_wtype_from_name(wtype->u.s, wtype->count);
    if (t < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: weight_type '%s' is not one of fp32, fp16, bf16, fp8, int8, "
                             "int4, int2", op, wtype->u.s);
    if (strcmp(lay, "tbe") != 0 && strcmp(lay, "fused") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: layout '%s' is not 'tbe' or 'fused'", op, lay);
    if (align < 1 || align > FBG_MAX_ROW_ALIGNMENT)
        return pk_host->fail(LOOM_EINVAL, "%s: 'row_alignment' %lld is not in [1, %d]", op, (long long)align,
                             FBG_MAX_ROW_ALIGNMENT);
    if (ebits < 1 || ebits > 6 || ebias < 0 || ebias > 63)
        return pk_host->fail(LOOM_EINVAL, "%s: 'fp8_exponent_bits' %lld / 'fp8_exponent_bias' %lld out of range "
                             "(bits 1..6, bias 0..63)", op, (long long)ebits, (long long)ebias);
    *f = (fbg_row_format){
        .wtype = (fbg_wtype)t,
        .layout = strcmp(lay, "fused") == 0 ? FBG_LAYOUT_FUSED : FBG_LAYOUT_TBE,
        .row_alignment = align,
        .fp8_ebits = (int32_t)ebits,
        .fp8_bias = (int32_t)ebias,
    };
    if (!loom_is_contiguous(call->inputs[0]))
        return pk_host->fail(LOOM_EINVAL, "%s: input %s must be contiguous", op,
                             fbgemm_describe(call->inputs[0], buf, sizeof buf));
    return LOOM_OK;
}

/* The dtype rows of a float weight type travel in (u8 for the others). */
static loom_dtype row_dtype(fbg_wtype t)
{
    return t == FBG_WT_FP32 ? LOOM_DTYPE_F32 : t == FBG_WT_FP16 ? LOOM_DTYPE_F16
         : t == FBG_WT_BF16 ? LOOM_DTYPE_BF16 : LOOM_DTYPE_U8;
}

typedef struct rows_job {
    const fbg_row_format *f;
    const uint8_t *src;
    uint8_t *dst;
    int64_t src_row, dst_row;   /* bytes */
    int quantize;
} rows_job;

static void rows_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rows_job *j = user;
    (void)thread_index;
    for (int64_t r = begin; r < end; r++) {
        if (j->quantize)
            fbg_quantize_row(j->f, (const float *)(const void *)(j->src + r * j->src_row), j->dst + r * j->dst_row);
        else
            fbg_dequantize_row(j->f, j->src + r * j->src_row, (float *)(void *)(j->dst + r * j->dst_row));
    }
}

/* What an op's checks decide past parse_call: the row format's dim, the
** output and the byte sizes of the rows read and written. */
typedef struct rows_shape {
    loom_dtype out_dtype;
    int64_t out_shape[2];
    int64_t src_row, dst_row;
} rows_shape;
typedef loom_status (*rows_checks)(const loom_call *call, const char *op, fbg_row_format *f, rows_shape *rs);

static loom_status quantize_checks(const loom_call *call, const char *op, fbg_row_format *f, rows_shape *rs)
{
    const loom_tensor *in = call->inputs[0];
    char buf[96];
    f->dim = in->shape[1];
    /* fbgemm holds D in an int32; an input of 0 rows may claim any D */
    if (f->dim > FBG_MAX_DIM)
        return pk_host->fail(LOOM_EINVAL, "%s: input %s: D = %lld is above fbgemm's limit of %lld", op,
                             fbgemm_describe(in, buf, sizeof buf), (long long)f->dim, (long long)FBG_MAX_DIM);
    if (!fbg_dim_ok(f->wtype, f->dim) && !(f->layout == FBG_LAYOUT_FUSED && f->dim > 0))
        return pk_host->fail(LOOM_EINVAL, "%s: input %s: %s rows need D > 0%s", op,
                             fbgemm_describe(in, buf, sizeof buf), fbg_wtype_name(f->wtype),
                             f->wtype == FBG_WT_INT4   ? " and even"
                             : f->wtype == FBG_WT_INT2 ? " and a multiple of 4"
                                                           : "");
    const int64_t row_bytes = fbg_format_row_bytes(f);
    const loom_dtype dt = row_dtype(f->wtype);
    const int64_t esize = (int64_t)pk_host->dtype_size(dt);
    if (row_bytes % esize != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: row_alignment %lld splits a %s element", op,
                             (long long)f->row_alignment, pk_host->dtype_name(dt));
    *rs = (rows_shape){ .out_dtype = dt, .out_shape = { in->shape[0], row_bytes / esize },
                        .src_row = f->dim * 4, .dst_row = row_bytes };
    return LOOM_OK;
}

/* D from the row bytes when the dim attribute is absent. */
static int64_t derive_dim(const fbg_row_format *f, int64_t row_bytes)
{
    switch (f->wtype) {
    case FBG_WT_FP32: return row_bytes / 4;
    case FBG_WT_FP16:
    case FBG_WT_BF16: return row_bytes / 2;
    case FBG_WT_FP8:  return row_bytes;
    case FBG_WT_INT8: return row_bytes - (f->layout == FBG_LAYOUT_FUSED ? 8 : 4);
    case FBG_WT_INT4: return (row_bytes - 4) * 2;
    case FBG_WT_INT2: return (row_bytes - 4) * 4;
    default:          return 0;
    }
}

static loom_status dequantize_checks(const loom_call *call, const char *op, fbg_row_format *f, rows_shape *rs)
{
    const loom_tensor *in = call->inputs[0];
    char buf[96];
    const loom_dtype dt = loom_tensor_dtype_of(in);
    if (dt != LOOM_DTYPE_U8 && dt != row_dtype(f->wtype))
        return pk_host->fail(LOOM_EINVAL, "%s: input %s: %s rows come as u8 or %s", op,
                             fbgemm_describe(in, buf, sizeof buf), fbg_wtype_name(f->wtype),
                             pk_host->dtype_name(row_dtype(f->wtype)));
    const loom_attr_value *dim = &call->attrs[PK_ATTR(fbg_dequantize_rows, dim)];
    int64_t row_bytes;
    /* an input of 0 rows may claim any row size: no product may overflow */
    if (__builtin_mul_overflow(in->shape[1], (int64_t)pk_host->dtype_size(dt), &row_bytes)
        || row_bytes > 8 * FBG_MAX_DIM)
        return pk_host->fail(LOOM_EINVAL, "%s: input %s: rows of %lld elements are larger than any %s row "
                             "of fbgemm (D <= %lld)", op, fbgemm_describe(in, buf, sizeof buf),
                             (long long)in->shape[1], fbg_wtype_name(f->wtype), (long long)FBG_MAX_DIM);
    if (dim->is_set && (dim->u.i <= 0 || dim->u.i > FBG_MAX_DIM))
        return pk_host->fail(LOOM_EINVAL, "%s: 'dim' = %lld is not in [1, %lld]", op, (long long)dim->u.i,
                             (long long)FBG_MAX_DIM);
    f->dim = dim->is_set ? dim->u.i : derive_dim(f, row_bytes);
    if (f->dim <= 0 || fbg_format_row_bytes(f) != row_bytes
        || (f->layout == FBG_LAYOUT_TBE && !fbg_dim_ok(f->wtype, f->dim)))
        return pk_host->fail(LOOM_EINVAL, "%s: input %s has %lld bytes per row, which is not a %s row "
                             "(%s layout, row_alignment %lld) of dim %lld", op,
                             fbgemm_describe(in, buf, sizeof buf), (long long)row_bytes,
                             fbg_wtype_name(f->wtype), f->layout == FBG_LAYOUT_FUSED ? "fused" : "tbe",
                             (long long)f->row_alignment, (long long)f->dim);
    *rs = (rows_shape){ .out_dtype = LOOM_DTYPE_F32, .out_shape = { in->shape[0], f->dim },
                        .src_row = row_bytes, .dst_row = f->dim * 4 };
    return LOOM_OK;
}

/* Both ops: the checks, the output, then the rows split across threads. */
static loom_status run_rows(loom_call *call, const char *op, int quantize, rows_checks checks)
{
    fbg_row_format f;
    rows_shape rs;
    loom_tensor *out;
    loom_status st = parse_call(call, op, &f);
    if (st == LOOM_OK)
        st = checks(call, op, &f, &rs);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, rs.out_dtype, 2, rs.out_shape, &out);
    if (st != LOOM_OK)
        return st;
    rows_job j = { &f, loom_data(call->inputs[0]), loom_data(out), rs.src_row, rs.dst_row, quantize };
    return pk_host->parallel_for(call->ctx, rs.out_shape[0], 256, rows_range, &j);
}

loom_status fbg_quantize_rows_cpu(loom_call *call)
{
    return run_rows(call, "fbgemm.quantize_rows", 1, quantize_checks);
}

loom_status fbg_dequantize_rows_cpu(loom_call *call)
{
    return run_rows(call, "fbgemm.dequantize_rows", 0, dequantize_checks);
}
