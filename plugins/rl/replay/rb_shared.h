/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_shared.h - a replay buffer shared by processes on one machine
** (storage=memmap, shared=true): every process that opens a buffer on the
** same scratch_dir works on the same storage files (mapped MAP_SHARED) and
** on one control block, scratch_dir/rb_shared.ctl, mapped shared too. The
** control block holds a process-shared, robust pthread mutex and the
** buffer's len, cursor and write count. Every extend and every sample of a
** shared buffer holds the mutex while it reads or writes rows, so a reader
** never sees half an item and no two writers get the same slot. A process
** that dies holding the mutex is detected by the next one to lock it
** (EOWNERDEAD): the state is marked consistent and, since the cursor is
** advanced only after a whole batch is written, the dead writer's batch is
** simply not counted. The storage files are made by the first extend of
** any process (under the mutex); the others map them on their next call.
** Samplers: random and without_replacement (per process); prioritized
** trees are not shared, as in torchrl.
*/
#ifndef LOOM_RL_RB_SHARED_H
#define LOOM_RL_RB_SHARED_H

#include <pthread.h>
#include <stdint.h>

#define RL_RB_SHARED_MAGIC UINT64_C(0x6c6f6f6d72627331)   /* "loomrbs1" */

typedef struct rl_rb_shared {
    uint64_t magic;
    uint64_t size;                  /* sizeof(rl_rb_shared) of the process that made it */
    int64_t capacity;
    int64_t len, cursor, write_count;
    int64_t storage_ready;          /* 1 once the storage files exist */
    int64_t owner_died;             /* times a holder died with the lock */
    pthread_mutex_t lock;           /* PTHREAD_PROCESS_SHARED | PTHREAD_MUTEX_ROBUST */
} rl_rb_shared;

struct rl_rb;
/* Open or make scratch_dir/rb_shared.ctl for b (a flock serialises the
** making), checking magic and capacity. */
int rl_rb_shared_open(struct rl_rb *b);
void rl_rb_shared_close(struct rl_rb *b);
/* Lock the control block and bring b's len, cursor, write count and
** storage up to date; unlock writes them back. */
int rl_rb_shared_lock(struct rl_rb *b);
void rl_rb_shared_unlock(struct rl_rb *b, int wrote);

#endif /* LOOM_RL_RB_SHARED_H */
