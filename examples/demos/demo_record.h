/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demo_record.h - where the calls a demo recorded go: to `loom demo` through
** a file descriptor, or into the demo's own summary (demo.h).
*/
#ifndef LOOM_DEMO_RECORD_H
#define LOOM_DEMO_RECORD_H

/* fd >= 0: each record is written to fd at once; fd < 0: records are kept
** for the summary. Called once, before demo_run. */
void demo_records_to(int fd);
/* Print the summary of the kept records (none when they went to a fd). */
void demo_records_finish(void);

#endif /* LOOM_DEMO_RECORD_H */
