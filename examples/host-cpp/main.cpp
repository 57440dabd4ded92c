/* SPDX-License-Identifier: BSD-3-Clause */
/*
** main.cpp - a C++17 loom host: torchvision's nms (vision.nms) on five boxes,
** with the C handles owned by std::unique_ptr. Build it against an installed
** loom:
**
**   make            (uses `pkg-config --cflags --libs loom`)
**   ./host-cpp      prints the kept indices; exit status 0 when they are right
**
** loom.h is a C header that is also valid C++: its functions have C linkage,
** the _INIT macros are values, and errors come back as loom_status codes
** (never as exceptions). This program turns them into one exception type of
** its own, at its side of the boundary.
*/
#include <loom/loom.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Owning handles: loom_tensor_free and loom_attrs_free accept NULL.
struct tensor_deleter {
    void operator()(loom_tensor *t) const noexcept { loom_tensor_free(t); }
};
struct attrs_deleter {
    void operator()(loom_attrs *a) const noexcept { loom_attrs_free(a); }
};
using tensor_ptr = std::unique_ptr<loom_tensor, tensor_deleter>;
using attrs_ptr = std::unique_ptr<loom_attrs, attrs_deleter>;

struct loom_error : std::runtime_error {
    loom_status status;
    loom_error(loom_status st, const std::string &what)
        : std::runtime_error(what + ": " + loom_status_name(st) + ": " + loom_last_error()), status(st) {}
};

void check(loom_status st, const char *what)
{
    if (st != LOOM_OK)
        throw loom_error(st, what);
}

// loom_init for the lifetime of a scope; declared before any handle, so the
// handles are freed before loom_shutdown runs.
struct session {
    session() { check(loom_init(nullptr), "loom_init"); }
    ~session() { loom_shutdown(); }
    session(const session &) = delete;
    session &operator=(const session &) = delete;
};

// A tensor over a vector the caller keeps alive (loom copies the shape).
tensor_ptr wrap(std::vector<float> &data, std::vector<int64_t> shape)
{
    loom_tensor *t = nullptr;
    check(loom_tensor_wrap(&t, data.data(), LOOM_DTYPE_F32, static_cast<int32_t>(shape.size()), shape.data(),
                           nullptr, nullptr),
          "loom_tensor_wrap");
    return tensor_ptr(t);
}

// Run an op with one output; the output is ours.
tensor_ptr run1(const char *op, std::initializer_list<const loom_tensor *> inputs, const loom_attrs *attrs)
{
    std::vector<const loom_tensor *> in(inputs);
    loom_tensor *out[1] = { nullptr };
    check(loom_run(op, in.data(), static_cast<int32_t>(in.size()), attrs, out, 1, nullptr), op);
    return tensor_ptr(out[0]);
}

} // namespace

int main()
try {
    session loom;
    std::vector<float> boxes = {
        0, 0, 10, 10,     // 0: kept second
        1, 1, 11, 11,     // 1: IoU 0.68 with box 0, which scores higher: suppressed
        20, 20, 30, 30,   // 2: kept
        50, 50, 60, 60,   // 3: the best score, kept first
        21, 21, 31, 31,   // 4: IoU 0.68 with box 2: suppressed
    };
    std::vector<float> scores = { 0.9f, 0.8f, 0.7f, 0.95f, 0.6f };
    const std::vector<int64_t> want = { 3, 0, 2 };

    tensor_ptr tb = wrap(boxes, { 5, 4 });
    tensor_ptr ts = wrap(scores, { 5 });
    attrs_ptr attrs([] {
        loom_attrs *a = nullptr;
        check(loom_attrs_new(&a), "loom_attrs_new");
        return a;
    }());
    check(loom_attrs_set_float(attrs.get(), "iou_threshold", 0.5), "iou_threshold");

    tensor_ptr keep = run1("vision.nms", { tb.get(), ts.get() }, attrs.get());
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    check(loom_last_dispatch(&info), "loom_last_dispatch");

    const auto *idx = static_cast<const int64_t *>(loom_data(keep.get()));
    std::vector<int64_t> got(idx, idx + loom_numel(keep.get()));
    std::printf("vision.nms kept");
    for (int64_t i : got)
        std::printf(" %lld", static_cast<long long>(i));
    std::printf(" (%s, %s)\n", info.backend, info.impl != nullptr ? info.impl : "?");
    return got == want ? 0 : 1;
} catch (const std::exception &e) {
    std::fprintf(stderr, "host-cpp: %s\n", e.what());
    return 1;
}
