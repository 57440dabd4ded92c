#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the audio pack's beamforming module to
tests/data/audio/beamform/.

Every expected value comes from torchaudio (torchaudio.functional.psd,
mvdr_weights_souden, mvdr_weights_rtf, rtf_evd, rtf_power,
apply_beamforming; torchaudio.transforms.PSD, SoudenMVDR, RTFMVDR, MVDR).

    .venv-audio/bin/python tools/gen_audio_beamform_goldens.py [OUTDIR]

Files (stem -> .npy), seeded so the set is reproducible; <dt> is c64 or
c128, <rt> the real dtype of the same precision (f32, f64):
  specgram_<dt>            (2, 3, 5, 7) multi-channel spectrum: batch 2, C 3, F 5, T 7
  mask_<rt>                (2, 5, 7) speech mask in [0, 1]; masks_<rt> (2, 3, 5, 7) per channel
  ref_u_<rt>               (2, 3) reference weights (not one-hot: every term counts)
  psd_norm_<dt>, psd_raw_<dt>, psd_none_<dt>
                           psd with the mask normalised, as given, and without a mask
  psd_s_<dt>, psd_n_<dt>   psd(specgram, mask) and psd(specgram, 1 - mask): the PSD inputs
  souden_ref1_<dt>, souden_noload_<dt>, souden_u_<dt>
                           mvdr_weights_souden with reference_channel 1 (with and without
                           loading) and with ref_u
  rtf_evd_<dt>             rtf_evd(psd_s), compared up to a unit phase per bin
  rtf_power_n3_<dt>, rtf_power_n1_<dt>, rtf_power_u2_<dt>
                           rtf_power with reference 0 and n_iter 3 and 1, ref_u and n_iter 2
  rtfw_ref_<dt>, rtfw_none_<dt>, rtfw_u_<dt>
                           mvdr_weights_rtf(rtf_power_n3, psd_n) with reference 0, none, ref_u
  apply_<dt>               apply_beamforming(souden_ref1, specgram)
  wide<C>_psd_s_<dt>, wide<C>_psd_n_<dt>, wide<C>_rtf_power_<dt>, wide<C>_rtfw_<dt>
                           C = 16 and 17 channels, 5 bins: the PSDs, rtf_power (reference 3,
                           n_iter 3) and mvdr_weights_rtf of it (reference 3); the widest
                           lane-batched solve and the narrowest LAPACK one
  psdobj_<dt>, psdobj_multi_<dt>
                           transforms.PSD() on mask, PSD(multi_mask=True) on masks
  soudenmvdr_<dt>, rtfmvdr_<dt>
                           transforms.SoudenMVDR / RTFMVDR with reference_channel 2
  mvdr_<solution>_<dt>     transforms.MVDR(solution=...) with mask and 1 - mask given
  mvdr_default_n_<dt>      MVDR() with mask_n left out (1 - mask_s)
  mvdr_multi_<dt>          MVDR(multi_mask=True, solution='stv_power', ref_channel=1) on masks
  online_spec_c64, online_mask_f32
                           20 chunks (20, 2, 3, 5, 7) / (20, 2, 5, 7) of one stream
  online_<solution>_c64    MVDR(online=True, solution=...) on the chunks in order, (20, 2, 5, 7)
  long_spec_c64, long_mask_f32, long_psd_c64
                           C 5, F 2, T 530: psd across a 512-frame block and odd channel pairs
"""
import os
import sys
import warnings

import numpy as np
import torch
import torchaudio.functional as F
import torchaudio.transforms as T

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "audio", "beamform")
CDT = {"c64": torch.complex64, "c128": torch.complex128}
RDT = {"c64": torch.float32, "c128": torch.float64}
RNAME = {"c64": "f32", "c128": "f64"}
SOLUTIONS = ["ref_channel", "stv_evd", "stv_power"]


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy(), allow_pickle=False)


def spectrum(shape, seed):
    g = torch.Generator().manual_seed(seed)
    re = torch.randn(*shape, generator=g, dtype=torch.float64)
    im = torch.randn(*shape, generator=g, dtype=torch.float64)
    return torch.complex(re, im)


def uniform(shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=torch.float64)


def main():
    os.makedirs(OUT, exist_ok=True)
    warnings.simplefilter("ignore")   # MVDR warns when mask_n is left out
    spec128 = spectrum((2, 3, 5, 7), 1)
    mask64 = uniform((2, 5, 7), 2)
    masks64 = uniform((2, 3, 5, 7), 3)
    ref64 = torch.tensor([[0.2, 0.5, 0.3], [0.7, 0.1, 0.2]], dtype=torch.float64)
    for dt in ("c64", "c128"):
        rt = RNAME[dt]
        x = spec128.to(CDT[dt])
        m = mask64.to(RDT[dt])
        ms = masks64.to(RDT[dt])
        u = ref64.to(RDT[dt])
        save("specgram_" + dt, x)
        save("mask_" + rt, m)
        save("masks_" + rt, ms)
        save("ref_u_" + rt, u)
        save("psd_norm_" + dt, F.psd(x, m))
        save("psd_raw_" + dt, F.psd(x, m, normalize=False))
        save("psd_none_" + dt, F.psd(x))
        ps = F.psd(x, m)
        pn = F.psd(x, 1 - m)
        save("psd_s_" + dt, ps)
        save("psd_n_" + dt, pn)
        w = F.mvdr_weights_souden(ps, pn, 1)
        save("souden_ref1_" + dt, w)
        save("souden_noload_" + dt, F.mvdr_weights_souden(ps, pn, 1, diagonal_loading=False))
        save("souden_u_" + dt, F.mvdr_weights_souden(ps, pn, u))
        save("rtf_evd_" + dt, F.rtf_evd(ps))
        rtf = F.rtf_power(ps, pn, 0, n_iter=3)
        save("rtf_power_n3_" + dt, rtf)
        save("rtf_power_n1_" + dt, F.rtf_power(ps, pn, 0, n_iter=1))
        save("rtf_power_u2_" + dt, F.rtf_power(ps, pn, u, n_iter=2))
        save("rtfw_ref_" + dt, F.mvdr_weights_rtf(rtf, pn, 0))
        save("rtfw_none_" + dt, F.mvdr_weights_rtf(rtf, pn))
        save("rtfw_u_" + dt, F.mvdr_weights_rtf(rtf, pn, u))
        save("apply_" + dt, F.apply_beamforming(w, x))
        save("psdobj_" + dt, T.PSD()(x, m))
        save("psdobj_multi_" + dt, T.PSD(multi_mask=True)(x, ms))
        save("soudenmvdr_" + dt, T.SoudenMVDR()(x, ps, pn, reference_channel=2))
        save("rtfmvdr_" + dt, T.RTFMVDR()(x, rtf, pn, reference_channel=2))
        for sol in SOLUTIONS:
            save("mvdr_%s_%s" % (sol, dt), T.MVDR(solution=sol)(x, m, 1 - m))
        save("mvdr_default_n_" + dt, T.MVDR()(x, m))
        save("mvdr_multi_" + dt, T.MVDR(multi_mask=True, solution="stv_power", ref_channel=1)(x, ms, 1 - ms))

    # 16 channels (the widest of the lane-batched solves) and 17 (LAPACK's
    # path): rtf_power and its weights with a loaded, well-conditioned psd_n
    for nch in (16, 17):
        wx = spectrum((1, nch, 5, 40), 10 + nch)
        wm = uniform((1, 5, 40), 30 + nch)
        for dt in ("c64", "c128"):
            x = wx.to(CDT[dt])
            m = wm.to(RDT[dt])
            ps, pn = F.psd(x, m), F.psd(x, 1 - m)
            stem = "wide%d_" % nch
            save(stem + "psd_s_" + dt, ps)
            save(stem + "psd_n_" + dt, pn)
            rtf = F.rtf_power(ps, pn, 3, n_iter=3)
            save(stem + "rtf_power_" + dt, rtf)
            save(stem + "rtfw_" + dt, F.mvdr_weights_rtf(rtf, pn, 3))

    # the online mode over 20 chunks of one stream
    chunks = spectrum((20, 2, 3, 5, 7), 4).to(torch.complex64)
    cmask = uniform((20, 2, 5, 7), 5).to(torch.float32)
    save("online_spec_c64", chunks)
    save("online_mask_f32", cmask)
    for sol in SOLUTIONS:
        mvdr = T.MVDR(solution=sol, online=True)
        outs = [mvdr(chunks[i], cmask[i], 1 - cmask[i]) for i in range(chunks.shape[0])]
        save("online_%s_c64" % sol, torch.stack(outs))

    # a longer spectrum: a 512-frame block boundary and an odd channel count
    lx = spectrum((5, 2, 530), 6).to(torch.complex64)
    lm = uniform((2, 530), 7).to(torch.float32)
    save("long_spec_c64", lx)
    save("long_mask_f32", lm)
    save("long_psd_c64", F.psd(lx, lm))


if __name__ == "__main__":
    main()
