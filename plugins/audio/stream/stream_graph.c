/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_graph.c - what the reader and the writer share
** (stream_internal.h): "key=value;key=value" option lists for FFmpeg's
** dictionaries, with unused keys reported as errors (torchaudio's
** "Unexpected options"), and the libavfilter graphs
** `abuffer|buffer -> desc -> abuffersink|buffersink` both build.
*/
#include <stdio.h>
#include <string.h>

#include <libavutil/dict.h>

#include "stream_internal.h"

int stream_parse_options(AVDictionary **d, const char *s, const char *what, char *err, size_t errlen)
{
    if (s == NULL || *s == '\0')
        return 0;
    if (av_dict_parse_string(d, s, "=", ";", 0) < 0) {
        snprintf(err, errlen, "'%s' \"%s\" is not a list of key=value pairs separated by ';'", what, s);
        return -1;
    }
    return 0;
}

int stream_leftover_options(const AVDictionary *d, const char *what, const char *of, char *err, size_t errlen)
{
    const AVDictionaryEntry *e = av_dict_get(d, "", NULL, AV_DICT_IGNORE_SUFFIX);
    if (e == NULL)
        return 0;
    snprintf(err, errlen, "'%s': unexpected option %s=%s (not an option of %s)", what, e->key, e->value, of);
    return -1;
}

int stream_graph_build(AVFilterGraph *g, int video, const char *src_args, const char *desc, AVFilterContext **src,
                       AVFilterContext **sink, char *err, size_t errlen)
{
    char eb[AV_ERROR_MAX_STRING_SIZE];
    const AVFilter *fsrc = avfilter_get_by_name(video ? "buffer" : "abuffer");
    const AVFilter *fsink = avfilter_get_by_name(video ? "buffersink" : "abuffersink");
    int ret = avfilter_graph_create_filter(src, fsrc, "in", src_args, NULL, g);
    if (ret >= 0)
        ret = avfilter_graph_create_filter(sink, fsink, "out", NULL, NULL, g);
    if (ret < 0) {
        snprintf(err, errlen, "cannot make the filter graph's ends (%s): %s", src_args, sr_averr(ret, eb));
        return -2;
    }
    AVFilterInOut *outputs = avfilter_inout_alloc(), *inputs = avfilter_inout_alloc();
    if (outputs == NULL || inputs == NULL) {
        avfilter_inout_free(&outputs);
        avfilter_inout_free(&inputs);
        snprintf(err, errlen, "out of memory for a filter graph");
        return -2;
    }
    outputs->name = av_strdup("in");
    outputs->filter_ctx = *src;
    inputs->name = av_strdup("out");
    inputs->filter_ctx = *sink;
    ret = avfilter_graph_parse_ptr(g, desc, &inputs, &outputs, NULL);
    avfilter_inout_free(&outputs);
    avfilter_inout_free(&inputs);
    if (ret < 0) {
        snprintf(err, errlen, "'filter_desc' \"%s\" does not parse: %s", desc, sr_averr(ret, eb));
        return -1;
    }
    ret = avfilter_graph_config(g, NULL);
    if (ret < 0) {
        snprintf(err, errlen, "'filter_desc' \"%s\" cannot be configured: %s", desc, sr_averr(ret, eb));
        return -1;
    }
    return 0;
}
