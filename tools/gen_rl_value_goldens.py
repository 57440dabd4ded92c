#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the rl value estimators to tests/data/rl/value/
and of the rl losses to tests/data/rl/loss/.

The expected outputs come from torchrl.objectives.value.functional
(torchrl 0.14.1): generalized_advantage_estimate, td0_return_estimate,
td_lambda_return_estimate and vtrace_advantage_estimate, on seeded
batches of trajectories concatenated along time, with mid-trajectory
terminations and truncations (done = terminated | truncated), so every
boundary rule is exercised: a truncated step bootstraps and cuts the chain,
a terminated one cuts it without bootstrap.

    .venv-rl/bin/python tools/gen_rl_value_goldens.py [OUTDIR]

The losses come from torchrl's own ClipPPOLoss, KLPENPPOLoss and A2CLoss
modules, run on a policy whose "distribution" hands back given tensors
as its log_prob, entropy and KL (LeafDist below) and a critic that hands
back a given state value, so torch autograd gives the gradients of the
summed loss terms with respect to exactly the tensors loom takes.

Shapes: [11, 37, 1] (a block of 8 rows of the AVX2 body, 3 rows more, 37
steps: 4 groups of 8 and a tail), [3, 20, 2] (two features per step) and
[3, 2, 17] with time_dim -1. The attributes are those of
tests/rl/test_value_goldens.c (GAMMA, LMBDA, ...).
"""
import os
import sys

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torchrl.modules import ProbabilisticActor, ValueOperator
from torchrl.objectives import A2CLoss, ClipPPOLoss, KLPENPPOLoss
from torchrl.objectives.value import functional as F

DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rl")
OUT = os.path.join(DATA, "value")
LOSS_OUT = os.path.join(DATA, "loss")
GAMMA, LMBDA = 0.99, 0.95
RHO_THRESH, C_THRESH = 0.9, 1.1        # the second V-trace case; the first uses torchrl's 1.0, 1.0
DTYPES = {"f32": torch.float32, "f64": torch.float64}
CASES = {"a": ((11, 37, 1), -2), "b": ((3, 20, 2), -2), "c": ((3, 2, 17), -1)}


def save(name, t, out=None):
    np.save(os.path.join(out or OUT, name + ".npy"), t.detach().contiguous().numpy(), allow_pickle=False)


class LeafDist(torch.distributions.Distribution):
    """A policy distribution whose log_prob, entropy and KL are given tensors."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, lp, ent, kl):
        self.lp, self.ent, self.kl = lp, ent, kl
        super().__init__(batch_shape=lp.shape, validate_args=False)

    def log_prob(self, value):
        return self.lp

    def entropy(self):
        return self.ent

    @property
    def deterministic_sample(self):
        return torch.zeros_like(self.lp)

    def sample(self, sample_shape=torch.Size()):
        return torch.zeros(sample_shape + self.lp.shape, dtype=self.lp.dtype)


@torch.distributions.kl.register_kl(LeafDist, LeafDist)
def _leaf_kl(p, q):
    return q.kl        # KLPENPPOLoss: kl_divergence(previous_dist, current_dist)


# name: (loss class, its keyword arguments, dtype, the KL's scale)
LOSS_CASES = {
    "clip_f32": (ClipPPOLoss, {}, torch.float32, 0.05),
    "clip_f64": (ClipPPOLoss, {}, torch.float64, 0.05),
    "clip_l2_norm": (ClipPPOLoss, dict(clip_epsilon=0.1, entropy_coeff=0.05, critic_coeff=0.5,
                                       loss_critic_type="l2", normalize_advantage=True), torch.float64, 0.05),
    "clip_l1_f32": (ClipPPOLoss, dict(loss_critic_type="l1", normalize_advantage=True), torch.float32, 0.05),
    "kl_f32": (KLPENPPOLoss, {}, torch.float32, 0.05),
    "kl_f64_low": (KLPENPPOLoss, dict(beta=0.5, loss_critic_type="l2"), torch.float64, 0.005),
    "kl_norm_mid": (KLPENPPOLoss, dict(beta=2.0, dtarg=0.02, normalize_advantage=True), torch.float64, 0.02),
    "a2c_f32": (A2CLoss, {}, torch.float32, 0.05),
    "a2c_f64_l2": (A2CLoss, dict(loss_critic_type="l2", entropy_coeff=0.02, critic_coeff=0.7), torch.float64, 0.05),
    "a2c_l1": (A2CLoss, dict(loss_critic_type="l1"), torch.float64, 0.05),
}
LOSS_N = 13


def loss_goldens(gen):
    os.makedirs(LOSS_OUT, exist_ok=True)
    for case, (cls, kw, dtype, kl_scale) in LOSS_CASES.items():
        def rnd(*shape, lo=-1.0, hi=1.0):
            return (torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
        lp = torch.nn.Parameter(rnd(LOSS_N, lo=-3, hi=-0.2))
        ent = torch.nn.Parameter(rnd(LOSS_N, lo=0, hi=2))
        kl = torch.nn.Parameter(rnd(LOSS_N, lo=0, hi=2 * kl_scale))
        val = torch.nn.Parameter(rnd(LOSS_N, 1, lo=-3, hi=3))
        # log-ratios within +-0.5: some inside, some outside the clip bounds
        sample_lp = lp.detach() + rnd(LOSS_N, lo=-0.5, hi=0.5)
        adv, target = rnd(LOSS_N, 1, lo=-2, hi=2), rnd(LOSS_N, 1, lo=-3, hi=3)
        actor = ProbabilisticActor(
            TensorDictModule(lambda obs: (lp, ent, kl), in_keys=["observation"], out_keys=["lp", "ent", "kl"]),
            in_keys=["lp", "ent", "kl"], distribution_class=LeafDist, return_log_prob=False)
        critic = ValueOperator(lambda obs: val, in_keys=["observation"])
        td = TensorDict({"observation": torch.zeros(LOSS_N, 1, dtype=dtype), "action": torch.zeros(LOSS_N, dtype=dtype),
                         "action_log_prob": sample_lp, "advantage": adv, "value_target": target,
                         "lp": lp.detach(), "ent": ent.detach(), "kl": kl.detach()}, batch_size=[LOSS_N])
        loss = cls(actor, critic, **kw)
        out = loss(td)
        total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
        wrt = [lp, val, ent] + ([kl] if cls is KLPENPPOLoss else [])
        grads = torch.autograd.grad(total, wrt)
        p = case + "_"
        inputs = [("log_prob", lp), ("advantage", adv), ("state_value", val), ("value_target", target),
                  ("entropy", ent)]
        inputs += [("sample_log_prob", sample_lp)] if cls is not A2CLoss else []
        inputs += [("kl", kl)] if cls is KLPENPPOLoss else []
        for name, t in inputs:
            save(p + name, t, LOSS_OUT)
        names = ["loss_objective", "loss_critic", "loss_entropy", "entropy"]
        names += ["kl_approx"] if cls is not A2CLoss else []
        names += ["clip_fraction", "ESS"] if cls is ClipPPOLoss else []
        for name in names:      # outputs as out_<name>: "entropy" is an input and an output
            save(p + "out_" + name, out[name], LOSS_OUT)
        if cls is KLPENPPOLoss:
            save(p + "out_beta", loss.beta.to(dtype), LOSS_OUT)
        for name, g in zip(("grad_log_prob", "grad_state_value", "grad_entropy", "grad_kl"), grads):
            save(p + "out_" + name, g, LOSS_OUT)
    print("wrote", os.path.normpath(LOSS_OUT))


def trajectories(gen, shape, dtype):
    """Values, rewards and flags: about 1 step in 12 terminates, 1 in 12 is truncated."""
    def rnd(lo, hi):
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    terminated = u < 1 / 12
    truncated = (u >= 1 / 12) & (u < 2 / 12)
    return {
        "state_value": rnd(-5, 5), "next_state_value": rnd(-5, 5), "reward": rnd(-1, 2),
        "log_pi": rnd(-2.5, 0), "log_mu": rnd(-2.5, 0),
        "done": terminated | truncated, "terminated": terminated,
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(20)
    for case, (shape, time_dim) in CASES.items():
        for name, dtype in DTYPES.items():
            d = trajectories(gen, shape, dtype)
            p = "%s_%s_" % (case, name)
            for k, t in d.items():
                save(p + k, t)
            adv, vt = F.generalized_advantage_estimate(GAMMA, LMBDA, d["state_value"], d["next_state_value"],
                                                       d["reward"], d["done"], d["terminated"], time_dim=time_dim)
            save(p + "gae_advantage", adv)
            save(p + "gae_value_target", vt)
            # terminated absent: torchrl takes done
            adv, vt = F.generalized_advantage_estimate(GAMMA, LMBDA, d["state_value"], d["next_state_value"],
                                                       d["reward"], d["done"], time_dim=time_dim)
            save(p + "gae_noterm_advantage", adv)
            save(p + "td0_returns", F.td0_return_estimate(GAMMA, d["next_state_value"], d["reward"], d["terminated"]))
            save(p + "tdl_returns", F.td_lambda_return_estimate(GAMMA, LMBDA, d["next_state_value"], d["reward"],
                                                                d["done"], d["terminated"], time_dim=time_dim))
            adv, vs = F.vtrace_advantage_estimate(GAMMA, d["log_pi"], d["log_mu"], d["state_value"],
                                                  d["next_state_value"], d["reward"], d["done"], d["terminated"],
                                                  time_dim=time_dim)
            save(p + "vtrace_advantage", adv)
            save(p + "vtrace_value_target", vs)
            adv, vs = F.vtrace_advantage_estimate(GAMMA, d["log_pi"], d["log_mu"], d["state_value"],
                                                  d["next_state_value"], d["reward"], d["done"], d["terminated"],
                                                  rho_thresh=RHO_THRESH, c_thresh=C_THRESH, time_dim=time_dim)
            save(p + "vtrace_clip_advantage", adv)
            save(p + "vtrace_clip_value_target", vs)
    print("wrote", os.path.normpath(OUT))
    loss_goldens(gen)


if __name__ == "__main__":
    main()
