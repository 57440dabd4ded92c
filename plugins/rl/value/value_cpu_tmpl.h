/* SPDX-License-Identifier: BSD-3-Clause */
/*
** value_cpu_tmpl.h - the portable bodies of the rl value estimators for one
** dtype (f32 or f64): included once per dtype by value_cpu.c with PK_SFX
** defined (dtype_traits.h) and RL_EXP its exp; #undefs both at its end.
**
** Each body runs the outer rows [begin, end) of an [outer, T, inner]
** layout (value.h), every row's inner chains side by side (the inner loop
** is contiguous), backwards in time. The arithmetic is torchrl's, operation
** by operation (value.h): a mask enters as a multiplication by 0 or 1, as
** torch's int masks do, so a NaN value stays NaN behind a done flag too.
*/
#define S_ PK_S(PK_SFX)

void PK_FN(rl_gae_rows)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_gae_job *j = user;
    const S_ *v = j->state_value, *nv = j->next_state_value, *r = j->reward;
    const uint8_t *dn = j->done, *tm = j->terminated;
    S_ *adv = j->advantage, *vt = j->value_target;
    const int64_t T = j->lay.T, inner = j->lay.inner;
    const S_ gamma = (S_)j->gamma, gl = (S_)j->gamma_lmbda;
    (void)thread_index;
    for (int64_t o = begin; o < end; o++) {
        for (int64_t t = T - 1; t >= 0; t--) {
            const int64_t row = (o * T + t) * inner;
            for (int64_t i = 0; i < inner; i++) {
                const int64_t x = row + i;
                const S_ prev = t == T - 1 ? (S_)0 : adv[x + inner];
                const S_ delta = (r[x] + (gamma * (S_)(tm[x] == 0)) * nv[x]) - v[x];
                const S_ a = delta + prev * (gl * (S_)(dn[x] == 0));
                adv[x] = a;
                vt[x] = a + v[x];
            }
        }
    }
}

typedef struct PK_FN(rl_td0_job) {
    const S_ *nv, *r;
    const uint8_t *tm;
    S_ *ret;
    S_ gamma;
} PK_FN(rl_td0_job);

static void PK_FN(rl_td0_elems)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const PK_FN(rl_td0_job) *j = user;
    (void)thread_index;
    for (int64_t x = begin; x < end; x++)      /* reward + (gamma * not_terminated) * next_state_value */
        j->ret[x] = j->r[x] + (j->gamma * (S_)(j->tm[x] == 0)) * j->nv[x];
}

typedef struct PK_FN(rl_tdl_job) {
    const S_ *nv, *r;
    const uint8_t *dn, *tm;
    S_ *ret;
    rl_time_layout lay;
    S_ gamma, lmbda;
} PK_FN(rl_tdl_job);

/* g starts at V'_{T-1}; per step: g = g*(1-done) + V'*done, then
** G = r + gamma*((1-lmbda)*V' + lmbda*g), with V' = V(s_{t+1})*(1-terminated). */
static void PK_FN(rl_tdl_rows)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const PK_FN(rl_tdl_job) *j = user;
    const int64_t T = j->lay.T, inner = j->lay.inner;
    const S_ gamma = j->gamma, lmbda = j->lmbda, one_minus = (S_)1 - j->lmbda;
    (void)thread_index;
    for (int64_t o = begin; o < end; o++) {
        for (int64_t t = T - 1; t >= 0; t--) {
            const int64_t row = (o * T + t) * inner;
            for (int64_t i = 0; i < inner; i++) {
                const int64_t x = row + i;
                const S_ nvp = j->nv[x] * (S_)(j->tm[x] == 0);
                /* the first g is V'_{T-1}, which is this step's own V' */
                S_ g = t == T - 1 ? nvp : j->ret[x + inner];
                const S_ d = (S_)(j->dn[x] != 0);
                g = g * ((S_)1 - d) + nvp * d;
                j->ret[x] = j->r[x] + gamma * (one_minus * nvp + lmbda * g);
            }
        }
    }
}

typedef struct PK_FN(rl_vtrace_job) {
    const S_ *log_pi, *log_mu, *v, *nv, *r;
    const uint8_t *dn, *tm;
    S_ *adv, *vt;
    rl_time_layout lay;
    S_ gamma, rho_thresh, c_thresh;
} PK_FN(rl_vtrace_job);

static S_ PK_FN(rl_clamp_max)(S_ x, S_ hi)
{
    return x > hi ? hi : x;     /* torch.clamp_max: a NaN x stays NaN */
}

/* Backwards: vs_minus_v_t = delta_t + (gamma*(1-done_t) * c_t) * vs_minus_v_{t+1}
** (0 after the last step), kept in `adv` for now. Forwards: vs_t =
** vs_minus_v_t + V(s_t); once vs_{t+1} is known the advantage of t is
** min(rho_t, rho_thresh) * (r_t + gamma*(1-terminated_t)*vs_{t+1} - V(s_t)),
** with vs_T = V(s_T) (next_state_value of the last step). At a done step
** vs_{t+1} is next_state_value too (torchrl 0.14.1: the next entry along
** time belongs to another trajectory). */
static void PK_FN(rl_vtrace_rows)(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const PK_FN(rl_vtrace_job) *j = user;
    const int64_t T = j->lay.T, inner = j->lay.inner;
    (void)thread_index;
#define RHO_(x) ((S_)RL_EXP(j->log_pi[x] - j->log_mu[x]))
    for (int64_t o = begin; o < end; o++) {
        for (int64_t t = T - 1; t >= 0; t--) {
            const int64_t row = (o * T + t) * inner;
            for (int64_t i = 0; i < inner; i++) {
                const int64_t x = row + i;
                const S_ rho = RHO_(x);
                const S_ delta = PK_FN(rl_clamp_max)(rho, j->rho_thresh) *
                                 ((j->r[x] + (j->gamma * (S_)(j->tm[x] == 0)) * j->nv[x]) - j->v[x]);
                const S_ prev = t == T - 1 ? (S_)0 : j->adv[x + inner];
                j->adv[x] = delta + ((j->gamma * (S_)(j->dn[x] == 0)) * PK_FN(rl_clamp_max)(rho, j->c_thresh)) * prev;
            }
        }
        for (int64_t t = 0; t < T; t++) {
            const int64_t row = (o * T + t) * inner;
            for (int64_t i = 0; i < inner; i++) {
                const int64_t x = row + i;
                j->vt[x] = j->adv[x] + j->v[x];
                if (t > 0) {
                    const int64_t p = x - inner;
                    const S_ vs_next = j->dn[p] != 0 ? j->nv[p] : j->vt[x];
                    j->adv[p] = PK_FN(rl_clamp_max)(RHO_(p), j->rho_thresh) *
                                ((j->r[p] + (j->gamma * (S_)(j->tm[p] == 0)) * vs_next) - j->v[p]);
                }
            }
        }
        const int64_t last = (o * T + T - 1) * inner;
        for (int64_t i = 0; T > 0 && i < inner; i++) {
            const int64_t x = last + i;
            j->adv[x] = PK_FN(rl_clamp_max)(RHO_(x), j->rho_thresh) *
                        ((j->r[x] + (j->gamma * (S_)(j->tm[x] == 0)) * j->nv[x]) - j->v[x]);
        }
    }
#undef RHO_
}

#undef S_
#undef RL_EXP
#undef PK_SFX
