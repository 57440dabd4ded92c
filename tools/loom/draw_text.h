/* SPDX-License-Identifier: BSD-3-Clause */
/*
** draw_text.h - a label written onto an RGB u8 image [3, H, W] (draw_text.c)
** with a built-in 5 x 7 pixel font: lowercase letters (capitals are drawn
** as them), digits, space and . / _ - ; anything else as '?'. What `loom
** detect --draw` writes beside each box.
*/
#ifndef LOOM_TOOLS_DRAW_TEXT_H
#define LOOM_TOOLS_DRAW_TEXT_H

#include <stdint.h>

#include <loom/loom.h>

/* The label text on a filled box of colour bg whose top-left corner is
** (x, y) (moved inside the image where it would leave it), the text in
** black or white, whichever stands out on bg. Pixels outside the image are
** not drawn. */
void draw_label(loom_tensor *img, int64_t x, int64_t y, const char *text, const uint8_t *bg);

#endif
