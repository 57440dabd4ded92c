/* SPDX-License-Identifier: BSD-3-Clause */
/*
** unicode_class.c - the character classes of torchtext's BERTTokenizer
** (torchtext/csrc/bert_tokenizer.cpp) and of tokenizers' BertNormalizer and
** BertPreTokenizer, answered from utf8proc's Unicode tables. The only code
** points named here are the ones the references name in their code.
*/
#include <utf8proc.h>

#include "tokenizer.h"

static int category(int32_t c)
{
    return (int)utf8proc_category(c);
}

static int is_other(int cat)
{
    return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CN
        || cat == UTF8PROC_CATEGORY_CS || cat == UTF8PROC_CATEGORY_CO;
}

/* The eight ranges both references use; tokenizers writes the sixth as
** 0x2B920..0x2CEAF (so U+2B820..U+2B91F are not CJK there). */
static int in_cjk_ranges(int32_t c, int32_t sixth_start)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF)
        || (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= sixth_start && c <= 0x2CEAF)
        || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int is_ascii_punct(int32_t c)
{
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}

static int is_p_category(int cat)
{
    return cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
}

/* ----------------------------------------------------------- torchtext */

int tt_torchtext_is_control(int32_t c)
{
    if (c == '\t' || c == '\n' || c == '\r')
        return 0;
    /* torchtext names U+0D04 explicitly: Python's unicodedata (its
    ** reference) had it unassigned (Cn) */
    if (c == 0x0D04)
        return 1;
    return is_other(category(c));
}

int tt_torchtext_is_whitespace(int32_t c)
{
    return c == '\t' || c == '\n' || c == '\r' || c == ' ' || category(c) == UTF8PROC_CATEGORY_ZS;
}

int tt_torchtext_is_punct(int32_t c)
{
    return is_ascii_punct(c) || (c != ' ' && is_p_category(category(c)));
}

int tt_torchtext_is_cjk(int32_t c)
{
    return in_cjk_ranges(c, 0x2B820);
}

/* ---------------------------------------------------------- tokenizers */

/* is_other() of the unicode_categories crate: Cc, Cf, Co and Cs. It has no
** table of unassigned code points, so Cn characters stay (as word
** characters), unlike in torchtext. */
int tt_hf_is_control(int32_t c)
{
    if (c == '\t' || c == '\n' || c == '\r')
        return 0;
    int cat = category(c);
    return cat == UTF8PROC_CATEGORY_CC || cat == UTF8PROC_CATEGORY_CF || cat == UTF8PROC_CATEGORY_CS
        || cat == UTF8PROC_CATEGORY_CO;
}

/* Rust's char::is_whitespace (the White_Space property): Zs, Zl, Zp and
** U+0009..U+000D, U+0085. */
int tt_hf_is_whitespace(int32_t c)
{
    int cat = category(c);
    return (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == ' ' || cat == UTF8PROC_CATEGORY_ZS
        || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

int tt_hf_is_punct(int32_t c)
{
    return is_ascii_punct(c) || is_p_category(category(c));
}

int tt_hf_is_cjk(int32_t c)
{
    return in_cjk_ranges(c, 0x2B920);
}

/* ---------------------------------------------------------------- Python */

/* CPython's Py_UNICODE_ISSPACE: bidirectional class WS, B or S, or Zs. */
int tt_py_isspace(int32_t c)
{
    const utf8proc_property_t *p = utf8proc_get_property(c);
    return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS
        || p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}
