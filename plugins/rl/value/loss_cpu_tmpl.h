/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loss_cpu_tmpl.h - the body of the rl losses for one dtype (f32 or f64):
** included once per dtype by loss_cpu.c with PK_SFX defined and RL_EXP
** its exp; #undefs both at its end.
**
** The element-wise terms are computed in the dtype, in torch's order; the
** means are sums in double, rounded once to the dtype (torch's own means
** may differ from them in the last place).
*/
#define S_ PK_S(PK_SFX)

static void PK_FN(rl_loss_body)(const rl_loss_job *j)
{
    const int64_t n = j->n;
    const S_ *lp = j->log_prob, *slp = j->sample_log_prob, *adv = j->advantage, *sv = j->state_value,
             *vt = j->value_target, *ent = j->entropy, *kl = j->kl;
    const S_ inv_n = (S_)1 / (S_)n, ecoef = (S_)j->entropy_coeff, ccoef = (S_)j->critic_coeff;
    const S_ lo = (S_)j->clip_lo, hi = (S_)j->clip_hi, beta = (S_)j->beta;
    S_ *g_logp = j->grad_log_prob, *g_sv = j->grad_state_value, *g_ent = j->grad_entropy, *g_kl = j->grad_kl;

    /* _standardize: (A - A.mean()) / A.std().clamp_min(eps), unbiased std */
    S_ a_mean = 0, a_scale = 1;
    const int norm = j->normalize && n > 1;
    if (norm) {
        double s = 0, q = 0;
        for (int64_t i = 0; i < n; i++)
            s += (double)adv[i];
        a_mean = (S_)(s / (double)n);
        for (int64_t i = 0; i < n; i++) {
            const double d = (double)adv[i] - (double)a_mean;
            q += d * d;
        }
        const S_ sd = (S_)sqrt(q / (double)(n - 1));
        a_scale = sd < (S_)RL_STD_EPS ? (S_)RL_STD_EPS : sd;
    }

    double obj = 0, crit = 0, lent = 0, ents = 0, klap = 0, kls = 0, clipped = 0, lw_max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        const S_ a = norm ? (adv[i] - a_mean) / a_scale : adv[i];
        S_ g_lp;
        if (j->kind == RL_LOSS_A2C) {
            obj += (double)-(lp[i] * a);
            g_lp = -inv_n * a;
        } else {
            const S_ lw = lp[i] - slp[i], e1 = (S_)RL_EXP(lw), g1 = e1 * a;
            klap += (double)(slp[i] - lp[i]);
            if (lw > lw_max)
                lw_max = (double)lw;
            if (j->kind == RL_LOSS_CLIP_PPO) {
                const S_ lwc = lw < lo ? lo : lw > hi ? hi : lw;    /* torch.clamp: NaN stays NaN */
                clipped += lwc != lw;
                const S_ g2 = (S_)RL_EXP(lwc) * a;
                /* torch.stack([gain1, gain2]).min(-1): the first on a tie; the clamp
                ** passes a gradient inside [lo, hi] only */
                const int first = g1 <= g2;
                obj += (double)-(first ? g1 : g2);
                g_lp = first ? (-inv_n * a) * e1 : (lw >= lo && lw <= hi) ? (-inv_n * a) * (S_)RL_EXP(lwc) : (S_)0;
            } else {
                obj += (double)-(g1 - beta * kl[i]);
                kls += (double)kl[i];
                g_lp = (-inv_n * a) * e1;
            }
        }
        g_logp[i] = g_lp;

        const S_ d = vt[i] - sv[i], ad = d < 0 ? -d : d;
        const S_ sgn = (S_)((d > 0) - (d < 0));
        S_ dist, dd;        /* the distance and its derivative in d */
        switch (j->critic) {
        case RL_CRITIC_L1: dist = ad; dd = sgn; break;
        case RL_CRITIC_L2: dist = d * d; dd = (S_)2 * d; break;
        default:
            if (ad < (S_)1) {
                dist = (S_)0.5 * d * d;
                dd = d;
            } else {
                dist = ad - (S_)0.5;
                dd = sgn;
            }
        }
        crit += (double)(ccoef * dist);
        g_sv[i] = -(inv_n * ccoef) * dd;      /* d = value_target - state_value */

        lent += (double)(-ecoef * ent[i]);
        ents += (double)ent[i];
        g_ent[i] = inv_n * -ecoef;
    }

    const double dn = (double)n;
    S_ *o[RL_OUT_N];
    for (int k = 0; k < RL_OUT_N; k++)
        o[k] = j->scalars[k];
    *o[RL_OUT_OBJECTIVE] = (S_)(obj / dn);
    *o[RL_OUT_CRITIC] = (S_)(crit / dn);
    *o[RL_OUT_ENTROPY_LOSS] = (S_)(lent / dn);
    *o[RL_OUT_ENTROPY] = (S_)(ents / dn);
    if (j->kind == RL_LOSS_A2C)
        return;
    *o[RL_OUT_KL_APPROX] = (S_)(klap / dn);
    if (j->kind == RL_LOSS_CLIP_PPO) {
        *o[RL_OUT_CLIP_FRACTION] = (S_)(clipped / dn);
        /* ESS = exp(2 logsumexp(lw) - logsumexp(2 lw)) / N = (sum e^(lw-m))^2 / sum e^(2(lw-m)) / N */
        double s1 = 0, s2 = 0;
        for (int64_t i = 0; i < n; i++) {
            const double e = exp((double)(lp[i] - slp[i]) - lw_max);
            s1 += e;
            s2 += e * e;
        }
        *o[RL_OUT_ESS] = (S_)(s1 * s1 / s2 / dn);
    } else {
        /* KLPENPPOLoss: beta.data *= increment / decrement (a float32 buffer) */
        const S_ kl_mean = (S_)(kls / dn);
        float next = j->beta;
        if (kl_mean > (S_)(j->dtarg * 1.5))
            next = j->beta * (float)j->increment;
        else if (kl_mean < (S_)(j->dtarg / 1.5))
            next = j->beta * (float)j->decrement;
        *o[RL_OUT_BETA] = (S_)next;
        /* The loss used beta, but KLPENPPOLoss updates its buffer in place
        ** (beta.data *=) before backward runs, and autograd's saved beta is
        ** that buffer: torch's gradient in kl is the updated beta over N. */
        for (int64_t i = 0; i < n; i++)
            g_kl[i] = inv_n * (S_)next;
    }
}

#undef S_
#undef RL_EXP
#undef PK_SFX
