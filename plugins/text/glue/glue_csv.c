/* SPDX-License-Identifier: BSD-3-Clause */
/*
** glue_csv.c - rows of a tab-separated GLUE file as Python's csv.reader
** (non-strict, as torchdata's parse_csv uses it) splits them; see glue.h
** for the rules. The state machine follows CPython's _csv.c: after a
** closing quote any character other than a delimiter or line end is kept
** and the field goes on unquoted; end of data inside a quoted field ends
** the field and the row. A row is capped at GLUE_MAX_ROW bytes so that a
** file with no line ends cannot take all memory.
*/
#include <stdlib.h>
#include <string.h>

#include "glue.h"

#define GLUE_MAX_ROW (64u << 20)

void glue_csv_open(glue_csv *r, FILE *f, const uint8_t *mem, size_t mem_len, int quote_none)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->mem = mem;
    r->mem_len = mem_len;
    r->quote_none = quote_none;
    r->peeked = -2;
    /* a UTF-8 byte order mark (MRPC's files start with one) */
    int c0 = -1, c1 = -1, c2 = -1;
    if (f != NULL) {
        c0 = getc(f);
        if (c0 == 0xEF && (c1 = getc(f)) == 0xBB && (c2 = getc(f)) == 0xBF)
            return;
        /* not a BOM: put back what was read (one byte of push-back is all
        ** stdio promises, so rewind instead) */
        rewind(f);
    } else if (mem_len >= 3 && mem[0] == 0xEF && mem[1] == 0xBB && mem[2] == 0xBF) {
        r->mem_pos = 3;
    }
    (void)c1;
    (void)c2;
}

#define GLUE_RBUF (64u << 10)

static int refill(glue_csv *r)
{
    if (r->rerr)
        return EOF;
    long n = r->rd(r->rd_ctx, r->rbuf, GLUE_RBUF);
    if (n <= 0) {
        r->rerr = n < 0;
        r->rlen = r->rpos = 0;
        return EOF;
    }
    r->rlen = (size_t)n;
    r->rpos = 1;
    return r->rbuf[0];
}

int glue_csv_open_reader(glue_csv *r, glue_read_fn rd, void *ctx, int quote_none)
{
    glue_csv_open(r, NULL, NULL, 0, quote_none);
    r->rd = rd;
    r->rd_ctx = ctx;
    r->rbuf = malloc(GLUE_RBUF + 3);
    if (r->rbuf == NULL)
        return -1;
    /* the BOM: the first three bytes, which may come in more than one read */
    uint8_t head[3];
    size_t k = 0;
    while (k < 3) {
        int c = r->rpos < r->rlen ? r->rbuf[r->rpos++] : refill(r);
        if (c == EOF)
            break;
        head[k++] = (uint8_t)c;
    }
    if (k == 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF)
        return 0;
    /* not a BOM: put the bytes back in front of what is buffered */
    size_t rest = r->rlen - r->rpos;
    memmove(r->rbuf + k, r->rbuf + r->rpos, rest);
    memcpy(r->rbuf, head, k);
    r->rlen = rest + k;
    r->rpos = 0;
    return 0;
}

void glue_csv_close(glue_csv *r)
{
    free(r->rbuf);
    r->rbuf = NULL;
    free(r->buf);
    free(r->fields);
    r->buf = NULL;
    r->fields = NULL;
}

static int get(glue_csv *r)
{
    if (r->peeked != -2) {
        int c = r->peeked;
        r->peeked = -2;
        return c;
    }
    if (r->f != NULL)
        return getc_unlocked(r->f);
    if (r->rd != NULL)
        return r->rpos < r->rlen ? r->rbuf[r->rpos++] : refill(r);
    return r->mem_pos < r->mem_len ? r->mem[r->mem_pos++] : EOF;
}

/* After a '\r': swallow the '\n' of a "\r\n". */
static void eat_lf(glue_csv *r)
{
    int c = get(r);
    if (c != '\n')
        r->peeked = c;
}

void glue_csv_skip_line(glue_csv *r)
{
    int c;
    while ((c = get(r)) != EOF) {
        if (c == '\n')
            break;
        if (c == '\r') {
            eat_lf(r);
            break;
        }
    }
    r->line++;
}

static int put(glue_csv *r, int c)
{
    if (r->len + 1 >= r->cap) {
        if (r->cap >= GLUE_MAX_ROW)
            return -1;
        size_t cap = r->cap ? r->cap * 2 : 4096;
        char *b = realloc(r->buf, cap);
        if (b == NULL)
            return -1;
        r->buf = b;
        r->cap = cap;
    }
    r->buf[r->len++] = (char)c;
    return 0;
}

static int start_field(glue_csv *r)
{
    if (r->n_fields == r->fields_cap) {
        int32_t cap = r->fields_cap ? r->fields_cap * 2 : 16;
        if (cap > (1 << 24))
            return -1;
        size_t *fl = realloc(r->fields, (size_t)cap * sizeof *fl);
        if (fl == NULL)
            return -1;
        r->fields = fl;
        r->fields_cap = cap;
    }
    r->fields[r->n_fields++] = r->len;
    return 0;
}

enum { S_START_FIELD, S_IN_FIELD, S_IN_QUOTED, S_QUOTE_IN_QUOTED };

int glue_csv_next(glue_csv *r, char *err, size_t err_size)
{
    r->len = 0;
    r->n_fields = 0;
    int c = get(r);
    if (c == EOF)
        return 0;
    r->row_line = r->line + 1;
    if (c == '\n' || c == '\r') {          /* an empty line: csv yields [] */
        if (c == '\r')
            eat_lf(r);
        r->line++;
        return 1;
    }
    int state = S_START_FIELD, bad = start_field(r);
    for (;; c = get(r)) {
        const int eol = c == '\n' || c == '\r';
        if (bad)
            break;
        if (eol && state != S_IN_QUOTED) {
            if (c == '\r')
                eat_lf(r);
            r->line++;
            break;
        }
        if (c == EOF)
            break;
        switch (state) {
        case S_START_FIELD:
            if (c == '"' && !r->quote_none) {
                state = S_IN_QUOTED;
                break;
            }
            state = S_IN_FIELD;
            /* fall through */
        case S_IN_FIELD:
            if (c == '\t') {
                bad = put(r, '\0') || start_field(r);
                state = S_START_FIELD;
            } else {
                bad = put(r, c);
            }
            break;
        case S_IN_QUOTED:
            if (c == '"') {
                state = S_QUOTE_IN_QUOTED;
            } else if (eol) {
                if (c == '\r')
                    eat_lf(r);
                r->line++;
                bad = put(r, '\n');
            } else {
                bad = put(r, c);
            }
            break;
        case S_QUOTE_IN_QUOTED:
            if (c == '"') {
                bad = put(r, '"');
                state = S_IN_QUOTED;
            } else if (c == '\t') {
                bad = put(r, '\0') || start_field(r);
                state = S_START_FIELD;
            } else {
                bad = put(r, c);
                state = S_IN_FIELD;
            }
            break;
        }
    }
    if (bad || put(r, '\0')) {
        snprintf(err, err_size, "row longer than %u MiB or out of memory", GLUE_MAX_ROW >> 20);
        return -1;
    }
    if (c == EOF)
        r->line++;                          /* a last line without its line end */
    return 1;
}
