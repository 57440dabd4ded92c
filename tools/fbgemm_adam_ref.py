# SPDX-License-Identifier: BSD-3-Clause
"""fbgemm_gpu's Adam and row-wise Adam row update, in f32 NumPy, for the
golden generators (tools/gen_fbgemm_tbe_train_goldens.py,
tools/gen_rec_fused_goldens.py): fbgemm-gpu-cpu has no CPU kernel for
these optimizers, so the goldens apply the update of
fbgemm_gpu/codegen/genscript/optimizers.py (adam / partial_rowwise_adam
split_weight_update) to fbgemm's or torchrec's CPU gradients.
"""
import numpy as np

f32 = np.float32


def adam_step(w, m1, m2, grads, touched, it, lr, eps, beta1, beta2, weight_decay, partial):
    """One step on the rows each table's batch touched (sorted), in place.
    w, m1, m2, grads: per-table arrays ([rows, D]; m2 [rows] when partial);
    touched: per-table sets of rows; it: the step count, from 1."""
    b1, b2, lr, eps, wd = f32(beta1), f32(beta2), f32(lr), f32(eps), f32(weight_decay)
    bc1 = f32(1) - f32(b1 ** f32(it))
    bc2 = f32(1) - f32(b2 ** f32(it))
    for t in range(len(w)):
        D = w[t].shape[1]
        for r in sorted(touched[t]):
            g = grads[t][r]
            m = g * (f32(1) - b1) + m1[t][r] * b1
            m1[t][r] = m
            if partial:
                v = f32(np.sum(g * g, dtype=np.float32) / f32(D)) * (f32(1) - b2) + m2[t][r] * b2
                m2[t][r] = v
                den = f32(np.sqrt(f32(v / bc2))) + eps
            else:
                v = (g * g) * (f32(1) - b2) + m2[t][r] * b2
                m2[t][r] = v
                den = np.sqrt(v / bc2) + eps
            w[t][r] = w[t][r] - lr * (m / bc1 / den + wd * w[t][r])
