/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tokenizer_attrs.h - the attributes of the text.bert_tokenizer class (used
** at create) and of its op (used per call), once each; the tables and the
** index enums are made from these lists (pack.h).
**
** Class attributes are torchtext's BERTTokenizer arguments (vocab_path is
** 'vocab', the name every loom object reading a vocabulary uses), plus the
** compatibility mode and the special tokens tokenizers names.
*/
#ifndef LOOM_TEXT_TOKENIZER_ATTRS_H
#define LOOM_TEXT_TOKENIZER_ATTRS_H

#include "pack.h"

#define TT_CLASS_ATTRS(A, op)                                                                          \
    A(op, vocab, STRING, LOOM_DEFAULT_NONE, 0,                                                         \
      "path of the vocab file, one token per line (or the object's named file 'vocab')", )             \
    A(op, do_lower_case, BOOL, LOOM_DEFAULT_BOOL(1), 0, "lower-case the text (tokenizers: lowercase)", )   \
    A(op, strip_accents, BOOL, LOOM_DEFAULT_NONE, 0,                                                   \
      "NFD and drop Mn marks; unset: as do_lower_case. torchtext strips whenever it is given, "        \
      "also as false (its has_value() test); compat=hf honours false", )                               \
    A(op, never_split, STRING, LOOM_DEFAULT_STRING(""), 0,                                             \
      "tokens kept whole, separated by spaces. torchtext: a whole space-separated piece equal to one " \
      "keeps its punctuation, case and accents; hf: special tokens cut out of the raw text", )         \
    A(op, return_tokens, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                \
      "also return the token strings (outputs tokens, tokens_offsets)", )                              \
    A(op, compat, STRING, LOOM_DEFAULT_STRING("torchtext"), 0,                                         \
      "torchtext: torchtext 0.18 BERTTokenizer; hf: tokenizers' BertWordPieceTokenizer "               \
      "(docs/text-tokenizer.md lists the differences)", )                                              \
    A(op, max_input_chars_per_word, INT, LOOM_DEFAULT_INT(100), LOOM_ATTR_POSITIVE,                    \
      "longer words are [UNK]; torchtext counts UTF-8 bytes, tokenizers characters (at most 1024)", )  \
    A(op, unk_token, STRING, LOOM_DEFAULT_STRING("[UNK]"), 0, "must be in the vocab", )                \
    A(op, cls_token, STRING, LOOM_DEFAULT_STRING("[CLS]"), 0, "starts a sequence (add_special_tokens)", ) \
    A(op, sep_token, STRING, LOOM_DEFAULT_STRING("[SEP]"), 0, "ends each segment (add_special_tokens)", ) \
    A(op, pad_token, STRING, LOOM_DEFAULT_STRING("[PAD]"), 0, "fills dense rows (padding)", )          \
    A(op, mask_token, STRING, LOOM_DEFAULT_STRING("[MASK]"), 0, "a special token in compat=hf", )
PK_ATTR_ENUM(tt_class, TT_CLASS_ATTRS);

#define TT_OP_ATTRS(A, op)                                                                             \
    A(op, add_special_tokens, BOOL, LOOM_DEFAULT_NONE, 0,                                              \
      "[CLS] A [SEP] (pairs: [CLS] A [SEP] B [SEP], always); unset: false for compat=torchtext, "      \
      "true for compat=hf", )                                                                          \
    A(op, max_length, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                      \
      "tokens per row, special tokens included, for truncation and padding=max_length; 0: none", )    \
    A(op, truncation, STRING, LOOM_DEFAULT_STRING("longest_first"), 0,                                 \
      "with max_length: longest_first | only_first | only_second | do_not_truncate (tokenizers' "      \
      "strategies)", )                                                                                 \
    A(op, padding, STRING, LOOM_DEFAULT_STRING("do_not_pad"), 0,                                       \
      "do_not_pad: jagged outputs; max_length or longest: dense [B, L] input_ids, token_type_ids, "    \
      "attention_mask (and char_offsets [B, L, 2])", )                                                 \
    A(op, return_char_offsets, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                          \
      "also return char_offsets: [start, end) of each token in its input string, in characters "      \
      "(code points); [0, 0] for special and pad tokens", )
PK_ATTR_ENUM(tt_op, TT_OP_ATTRS);

#endif /* LOOM_TEXT_TOKENIZER_ATTRS_H */
