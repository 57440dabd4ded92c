/* SPDX-License-Identifier: BSD-3-Clause */
/*
** status.c - status names and the per-thread error slot.
**
** Only the core owns the slot: packs report through host->fail, so every
** pack and the host read one message. The message stays valid until the next
** failing call on the same thread; successful calls leave it alone (errno).
*/
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const status_names[] = {
    [-LOOM_OK]        = "LOOM_OK",
    [-LOOM_EINVAL]    = "LOOM_EINVAL",
    [-LOOM_ENOMEM]    = "LOOM_ENOMEM",
    [-LOOM_ENOTSUP]   = "LOOM_ENOTSUP",
    [-LOOM_ENOENT]    = "LOOM_ENOENT",
    [-LOOM_EABI]      = "LOOM_EABI",
    [-LOOM_ENODEV]    = "LOOM_ENODEV",
    [-LOOM_EBUSY]     = "LOOM_EBUSY",
    [-LOOM_EDEVICE]   = "LOOM_EDEVICE",
    [-LOOM_EFORMAT]   = "LOOM_EFORMAT",
    [-LOOM_EIO]       = "LOOM_EIO",
    [-LOOM_ECONFLICT] = "LOOM_ECONFLICT",
    [-LOOM_ESTRICT]   = "LOOM_ESTRICT",
    [-LOOM_EINTERNAL] = "LOOM_EINTERNAL",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == 1 - LOOM_STATUS_MIN,
               "every loom_status needs a name");

static _Thread_local struct {
    loom_status status;
    const char *context;
    char text[1024];
} slot;

LOOM_API const char *loom_status_name(loom_status status)
{
    if (status > 0 || status < LOOM_STATUS_MIN)
        return "LOOM_E?";
    return status_names[-status];
}

void loom__error_context(const char *context) { slot.context = context; }
const char *loom__error_context_get(void) { return slot.context; }

loom_status loom__failv(loom_status status, const char *fmt, va_list ap)
{
    char msg[sizeof slot.text - 64];

    vsnprintf(msg, sizeof msg, fmt, ap);
    slot.status = status;
    /* Prefix the context unless the message already starts with it (a
    ** message that travels up through two layers is prefixed once). */
    if (slot.context != NULL && strncmp(msg, slot.context, strlen(slot.context)) != 0)
        snprintf(slot.text, sizeof slot.text, "%s: %s", slot.context, msg);
    else
        snprintf(slot.text, sizeof slot.text, "%s", msg);
    return status;
}

loom_status loom__fail(loom_status status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    loom__failv(status, fmt, ap);
    va_end(ap);
    return status;
}

LOOM_API const char *loom_last_error(void)
{
    return slot.text[0] != '\0' ? slot.text : "no error";
}

LOOM_API loom_status loom_last_status(void) { return slot.status; }
