/* SPDX-License-Identifier: BSD-3-Clause */
/*
** onednn_none.c - the layers module built without oneDNN: nothing to release.
*/
#include "layers.h"

void layers_onednn_fini(void)
{
}
