/* SPDX-License-Identifier: BSD-3-Clause */
/*
** page_release.h - handing a weight's pages of the mapped file back to the
** kernel once a model keeps its own transformed copy of it (a folded conv,
** packed GEMM panels), so that the weights are resident once.
*/
#ifndef LOOM_VISION_MODELS_PAGE_RELEASE_H
#define LOOM_VISION_MODELS_PAGE_RELEASE_H

#include <stddef.h>

/* The whole pages inside [data, data + bytes) leave the resident set:
** MADV_PAGEOUT keeps their content (the pages of the mapped file are read
** again if anything touches them; a page shared with a borrowed neighbour
** only costs that re-read), unlike MADV_DONTNEED, which would zero an
** in-memory tensor's anonymous pages. A hint: its failure changes nothing. */
void model_release_pages(const void *data, size_t bytes);

#endif
