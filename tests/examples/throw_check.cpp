/* SPDX-License-Identifier: BSD-3-Clause */
/*
** throw_check.cpp - examplecpp.topk_indices (examples/oppack-cpp) turns the
** exceptions its kernel throws into status codes: throw_test=1 (std::bad_alloc)
** must fail with LOOM_ENOMEM, 2 (std::runtime_error) and 3 (an int) with
** LOOM_EINTERNAL, each with its message, and the pack must still work after
** them. Run by run_examples.sh with the pack on LOOM_PLUGIN_PATH; exit 0 when
** all holds, else 1 with what went wrong.
*/
#include <loom/loom.h>

#include <cstdio>
#include <cstring>

static int failures;

static void expect(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "throw_check: %s (last error: %s)\n", what, loom_last_error());
        failures++;
    }
}

// One call with throw_test = mode; the status it returned, *k_out = numel of the output.
static loom_status call(const loom_tensor *x, int64_t mode, int64_t *k_out)
{
    loom_attrs *attrs = nullptr;
    loom_tensor *out[1] = { nullptr };
    const loom_tensor *in[1] = { x };
    loom_status st = loom_attrs_new(&attrs);

    if (st == LOOM_OK)
        st = loom_attrs_set_int(attrs, "throw_test", mode);
    if (st == LOOM_OK)
        st = loom_run("examplecpp.topk_indices", in, 1, attrs, out, 1, nullptr);
    *k_out = out[0] != nullptr ? loom_numel(out[0]) : -1;
    loom_tensor_free(out[0]);
    loom_attrs_free(attrs);
    return st;
}

int main()
{
    float v[5] = { 2, 7, 7, 1, 9 };
    const int64_t shape[1] = { 5 };
    loom_tensor *x = nullptr;
    int64_t k = 0;

    if (loom_init(nullptr) != LOOM_OK || loom_tensor_wrap(&x, v, LOOM_DTYPE_F32, 1, shape, nullptr, nullptr) != LOOM_OK) {
        std::fprintf(stderr, "throw_check: %s\n", loom_last_error());
        return 1;
    }
    expect(call(x, 1, &k) == LOOM_ENOMEM, "throw_test=1 (std::bad_alloc) did not give LOOM_ENOMEM");
    expect(std::strstr(loom_last_error(), "std::bad_alloc") != nullptr, "throw_test=1: no std::bad_alloc in the message");
    expect(k == -1, "throw_test=1 left an output");
    expect(call(x, 2, &k) == LOOM_EINTERNAL, "throw_test=2 (std::runtime_error) did not give LOOM_EINTERNAL");
    expect(std::strstr(loom_last_error(), "throw_test=2 asked for it") != nullptr, "throw_test=2: what() not in the message");
    expect(call(x, 3, &k) == LOOM_EINTERNAL, "throw_test=3 (an int) did not give LOOM_EINTERNAL");
    expect(std::strstr(loom_last_error(), "unknown C++ exception") != nullptr, "throw_test=3: wrong message");
    expect(call(x, 0, &k) == LOOM_OK && k == 3, "the pack does not work after the exceptions");
    loom_tensor_free(x);
    loom_shutdown();
    if (failures == 0)
        std::printf("examplecpp exceptions: ok (LOOM_ENOMEM, LOOM_EINTERNAL x2, then a clean call)\n");
    return failures == 0 ? 0 : 1;
}
