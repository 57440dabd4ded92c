/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detector_checks.h - the checks that the tests of the detector classes
** (vision.fasterrcnn*, vision.retinanet*, vision.maskrcnn*) share, public
** API only: objects created and called, detections and intermediate
** results against torchvision's goldens (tests/data/vision/detection/),
** refusals of bad images, files and attributes with the message they must
** carry, and the full models from build-models/. Every check fails the
** test on what it does not find and prints what it saw.
** Goldens are named by a prefix below tests/data/vision/detection/
** (dt_golden_at): "frcnn_tiny/v1_" reads frcnn_tiny/v1_boxes.npy,
** "frcnn_mnv3_tiny/" frcnn_mnv3_tiny/boxes.npy; messages name the
** tensors so ("frcnn_tiny/v1_boxes").
*/
#ifndef LOOM_TESTS_VISION_DETECTION_DETECTOR_CHECKS_H
#define LOOM_TESTS_VISION_DETECTION_DETECTOR_CHECKS_H

#include "detection_test.h"

/* <LOOM_TEST_DATA>/<dir>/<file> written into buf; returns buf. */
const char *dc_data_file(char *buf, size_t size, const char *dir, const char *file);

/* loom_object_create of cls with the attributes attrs (";"-separated
** "name=value"s, NULL: none) and extra after them (NULL: none), on the
** weights file at path. */
loom_status dc_create(loom_object **obj, const char *cls, const char *attrs, const char *extra, const char *path);

/* The same create must be refused with a message containing needle. */
void dc_expect_create_refused(const char *cls, const char *attrs, const char *extra, const char *path,
                              const char *needle);

/* method on obj with in[0..n) into out[0..n_out) (each set to NULL first). */
loom_status dc_run(loom_object *obj, const char *method, const loom_tensor *const *in, int32_t n, loom_tensor **out,
                   int32_t n_out);

/* method (n_out <= 8 outputs) on obj with in[0..n) must be refused with a message containing needle. */
void dc_expect_refused(loom_object *obj, const char *method, int32_t n_out, const loom_tensor *const *in, int32_t n,
                       const char *needle);

/* Bad images for method (n_out outputs) on obj, each refused naming what is wrong:
** dc_check_empty_list_refused: a list of no image (offsets [1]): "lists no image";
** dc_check_empty_batch_refused: an NCHW batch [0, 3, 8, 8]: "empty batch";
** dc_check_bad_images_refused: i64 images ("images") and one channel ("[B, 3, H, W]"). */
void dc_check_empty_list_refused(loom_object *obj, const char *method, int32_t n_out);
void dc_check_empty_batch_refused(loom_object *obj, const char *method, int32_t n_out);
void dc_check_bad_images_refused(loom_object *obj, const char *method, int32_t n_out);

/* A 1 x 1 RGB image (0.2, 0.5, 0.8) [1, 3, 1, 1], which torchvision scales to
** min_size like any other: method on obj must accept it, its outputs into
** out[0..n_out). */
void dc_run_one_pixel(loom_object *obj, const char *method, loom_tensor **out, int32_t n_out);
/* The same with the four detection outputs, every box coordinate within the image ([0, 1]). */
void dc_check_one_pixel_boxes(loom_object *obj, const char *method);

/* The golden inputs <prefix>images, images_offsets, original_sizes (a list of images) into in[0..3). */
void dc_golden_inputs(const char *prefix, loom_tensor **in);

/* method on obj (outputs boxes, scores, labels, offsets) with the golden
** inputs against <prefix>boxes, scores, labels, offsets: dt_check_ranked,
** the labels identical; then a second call on the same object gives the
** same detections bit for bit. Returns the rows in runs of equal scores. */
int64_t dc_check_detections(loom_object *obj, const char *method, const char *prefix);

/* The intermediate results of method (a detector's _rpn or _features
** method) on obj with the golden inputs: the n_maps feature maps against
** <prefix>x0 .. within 2e-5 (the callers say why that bound), the resized
** sizes <prefix>image_sizes identical and, with_proposals, the proposals
** against <prefix>proposals within 1e-3 px and their offsets
** <prefix>proposals_offsets identical. The outputs: the maps, the sizes,
** (the proposals, their offsets). */
void dc_check_intermediates(loom_object *obj, const char *method, const char *prefix, int n_maps, int with_proposals);

/* vision.<name> in full on build-models/vision/<name>/ (model.safetensors,
** created with the attributes attrs; input.npy, and torchvision's
** boxes.npy, scores.npy, labels.npy of its one image): dt_check_near_ties
** with tie 1e-6 and nms_iou. Skipped with a message naming the generator
** (the script whose --full makes the file) when model.safetensors is not
** there. */
void dc_check_full(const char *name, const char *attrs, const char *generator, double nms_iou);

#endif /* LOOM_TESTS_VISION_DETECTION_DETECTOR_CHECKS_H */
