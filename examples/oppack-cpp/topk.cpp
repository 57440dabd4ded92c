/* SPDX-License-Identifier: BSD-3-Clause */
/*
** topk.cpp - a third-party op pack written in C++17, built out of tree
** against nothing but the `loom-plugin` pkg-config file:
**
**   examplecpp.topk_indices   output = the indices of the k largest values of
**                             input (f32 [N]), largest first, ties by index
**                             (i64 [min(k, N)]; k: int >= 0, default 3)
**
** What a C++ pack must do, and this one shows:
**  - export loom_plugin_entry with C linkage: LOOM_PLUGIN_DEFINE declares it
**    extern "C" (without it the entry is mangled, _Z17loom_plugin_entrytt,
**    and the loader cannot find it);
**  - let no exception cross into the core: every function the core calls is
**    noexcept, and each that may throw runs its body through guarded(),
**    which turns std::bad_alloc into LOOM_ENOMEM and any other exception
**    into LOOM_EINTERNAL, with a message, through host->fail. The
**    `throw_test` attribute makes the kernel throw on purpose, to show it
**    (1: std::bad_alloc, 2: std::runtime_error, 3: an int);
**  - write schema tables positionally (C++17 has no designated initialisers)
**    with the C++ forms of LOOM_DEFAULT_* (inline functions).
*/
#include <loom/plugin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <new>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

const loom_host_api *host;   // set once by examplecpp_init

// Run body() and map every exception it throws to a loom_status: the only
// way an error leaves the pack. The core prefixes the op (or pack) and the
// kernel to the message.
template <typename F> loom_status guarded(F &&body) noexcept
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return host->fail(LOOM_ENOMEM, "out of memory (std::bad_alloc)");
    } catch (const std::exception &e) {
        return host->fail(LOOM_EINTERNAL, "C++ exception: %s", e.what());
    } catch (...) {
        return host->fail(LOOM_EINTERNAL, "unknown C++ exception");
    }
}

constexpr uint64_t F32 = LOOM_DTYPE_BIT(LOOM_DTYPE_F32);
constexpr uint64_t I64 = LOOM_DTYPE_BIT(LOOM_DTYPE_I64);
enum { ATTR_K, ATTR_THROW_TEST };

// Positional: name, dtypes, flags, ndim, doc.
const loom_arg_def topk_inputs[] = {
    { "input", F32, 0, 1, "[N] values" },
};
const loom_arg_def topk_outputs[] = {
    { "output", I64, 0, 1, "[min(k, N)] indices of the largest values, largest first" },
};
// Positional: name, type, flags, default, doc. LOOM_DEFAULT_INT is an inline
// function in C++: these defaults are set when the pack is loaded.
const loom_attr_def topk_attrs[] = {
    { "k", LOOM_ATTR_INT, LOOM_ATTR_NONNEG, LOOM_DEFAULT_INT(3), "how many indices" },
    { "throw_test", LOOM_ATTR_INT, LOOM_ATTR_NONNEG, LOOM_DEFAULT_INT(0),
      "tests only: 1 throws std::bad_alloc, 2 std::runtime_error, 3 an int" },
};

void topk_cost(const loom_call *call, double *flops, double *bytes) noexcept
{
    const double n = static_cast<double>(loom_numel(call->inputs[0]));
    *flops = n * 16.0;   // about n log n comparisons for n ~ 64k
    *bytes = 4.0 * n;
}

const loom_op_schema topk_schema = {
    sizeof(loom_op_schema), "examplecpp.topk_indices", 1,
    "indices of the k largest values of a 1-D f32 tensor (std::partial_sort)",
    1, topk_inputs, 1, topk_outputs, 2, topk_attrs,
    nullptr,      // object_class: a stateless op
    topk_cost,
    0, nullptr,   // ABI 1.1: no enumerated string attributes
};

loom_status topk_supports(const loom_call *call, char *why, size_t why_size) noexcept
{
    if (!loom_is_contiguous(call->inputs[0])) {
        std::snprintf(why, why_size, "input is not contiguous");
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

loom_status topk_run(loom_call *call) noexcept
{
    return guarded([call]() -> loom_status {
        const loom_tensor *x = call->inputs[0];
        const auto *v = static_cast<const float *>(loom_data(x));
        const int64_t n = loom_numel(x);
        const int64_t k = std::min(call->attrs[ATTR_K].u.i, n);

        switch (call->attrs[ATTR_THROW_TEST].u.i) {
        case 1: throw std::bad_alloc();
        case 2: throw std::runtime_error("throw_test=2 asked for it");
        case 3: throw 3;
        default: break;
        }
        // Larger value first; among equal values the lower index. NaN sorts last.
        auto before = [v](int64_t a, int64_t b) {
            const bool na = std::isnan(v[a]), nb = std::isnan(v[b]);
            if (na != nb)
                return nb;
            if (!na && v[a] != v[b])
                return v[a] > v[b];
            return a < b;
        };
        std::vector<int64_t> idx(static_cast<size_t>(n));   // may throw std::bad_alloc
        std::iota(idx.begin(), idx.end(), int64_t{0});
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), before);

        loom_tensor *y = nullptr;
        const int64_t shape[1] = { k };
        loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, shape, &y);
        if (st != LOOM_OK)
            return st;
        if (!loom_is_contiguous(y))
            return host->fail(LOOM_ENOTSUP, "output must be contiguous");
        std::copy(idx.begin(), idx.begin() + k, static_cast<int64_t *>(loom_data(y)));
        return LOOM_OK;
    });
}

// Positional: struct_size, schema, backend, device_type, priority, impl,
// dtypes, supports, run, then ABI 1.1's user, prepare, release.
const loom_kernel_desc topk_kernel = {
    sizeof(loom_kernel_desc), &topk_schema, "cpu", LOOM_DEVICE_CPU, 0, "cpu:std-partial-sort",
    F32, topk_supports, topk_run, nullptr, nullptr, nullptr,
};

loom_status examplecpp_init(const loom_host_api *h, loom_registrar *reg) noexcept
{
    host = h;
    return guarded([h, reg]() -> loom_status {
        loom_status st = h->define_op(reg, &topk_schema);
        if (st == LOOM_OK)
            st = h->register_kernel(reg, &topk_kernel);
        return st;
    });
}

} // namespace

LOOM_PLUGIN_DEFINE("examplecpp", "1.0.0", "an out-of-tree C++17 example pack: examplecpp.topk_indices",
                   examplecpp_init, nullptr)
