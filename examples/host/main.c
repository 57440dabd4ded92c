/* SPDX-License-Identifier: BSD-3-Clause */
/*
** main.c - the smallest loom host: multiply two matrices with core.matmul
** and say which backend ran it. Build it against an installed loom:
**
**   make            (uses `pkg-config --cflags --libs loom`)
**   ./host          exit status 0 when the product is right
*/
#include <stdio.h>
#include <loom/loom.h>

int main(void)
{
    float a[2 * 3] = { 1, 2, 3, 4, 5, 6 }, b[3 * 2] = { 7, 8, 9, 10, 11, 12 };
    const float want[4] = { 58, 64, 139, 154 };
    const int64_t a_shape[2] = { 2, 3 }, b_shape[2] = { 3, 2 };
    loom_tensor *ta = NULL, *tb = NULL, *out[1] = { NULL };
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    int rc = 1;

    if (loom_init(NULL) == LOOM_OK
        && loom_tensor_wrap(&ta, a, LOOM_DTYPE_F32, 2, a_shape, NULL, NULL) == LOOM_OK
        && loom_tensor_wrap(&tb, b, LOOM_DTYPE_F32, 2, b_shape, NULL, NULL) == LOOM_OK
        && loom_run("core.matmul", (const loom_tensor *const[]){ ta, tb }, 2, NULL, out, 1, NULL) == LOOM_OK
        && loom_last_dispatch(&info) == LOOM_OK) {
        const float *c = loom_data(out[0]);
        printf("[[%g, %g], [%g, %g]] computed by %s (%s)\n", c[0], c[1], c[2], c[3],
               info.backend, info.impl != NULL ? info.impl : "?");
        rc = c[0] == want[0] && c[1] == want[1] && c[2] == want[2] && c[3] == want[3] ? 0 : 1;
    } else {
        fprintf(stderr, "host: %s\n", loom_last_error());
    }
    loom_tensor_free(out[0]);
    loom_tensor_free(tb);
    loom_tensor_free(ta);
    loom_shutdown();
    return rc;
}
