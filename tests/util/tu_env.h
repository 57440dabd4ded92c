/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tu_env.h - where a test finds its files and packs, read from the
** environment at run time: tests/meson.build sets both variables for every
** test in one place, so no test is compiled with a path of this build.
**
**   LOOM_TEST_DATA    the golden data root (tests/data of the source tree)
**   LOOM_PLUGIN_PATH  the build's pack folders, ':'-separated
**
** Needs only the C library, so the tests linked with the core's internals
** use it as well as those linked with libloom.
*/
#ifndef LOOM_TESTS_TU_ENV_H
#define LOOM_TESTS_TU_ENV_H

/* $LOOM_TEST_DATA/rel, e.g. tu_data_path("vision/roi/feat_f32.npy"). The
** string lives in a per-thread ring of 8 buffers: valid until the eighth
** next call on the same thread. Exits with a message (status 1) when
** LOOM_TEST_DATA is unset or empty, as the test was not started by meson. */
const char *tu_data_path(const char *rel);

/* $LOOM_PLUGIN_PATH; exits with a message when it is unset or empty. */
const char *tu_plugin_path(void);

#endif /* LOOM_TESTS_TU_ENV_H */
