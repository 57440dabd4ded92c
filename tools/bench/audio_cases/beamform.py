# SPDX-License-Identifier: BSD-3-Clause
"""Beamforming cases of tools/bench/audio: loom's beamforming ops against
torchaudio.functional / torchaudio.transforms on the same inputs.

The shape of mask-based MVDR on a batch of 8-microphone recordings:
batch 4, 8 channels, 257 bins (n_fft 512), 400 frames (hop 128 at 16 kHz:
3.2 s per recording, 12.8 s of audio per call), complex64, as
torchaudio's MVDR tutorial computes them.

Single ops are sidebyside.Case rows. A pipeline is a list of loom steps
(each timed by `loom bench`, their medians added) against one reference
function that does the same work; the real-time factor of each side is its
time over the audio's duration (below 1: faster than real time).
"""
from dataclasses import dataclass
from typing import Callable, List, Optional

import numpy as np
import torch
import torchaudio.functional as F
import torchaudio.transforms as T

import sidebyside

B, C, NF, NT = 4, 8, 257, 400
SR, HOP = 16000, 128
AUDIO_S = B * NT * HOP / SR      # seconds of (8-channel) audio per call


@dataclass
class Pipeline:
    name: str
    steps: List[sidebyside.Case]   # loom's ops, in order; their medians add up
    reference: Callable[[], object]
    items: float = 1.0
    unit: str = "calls/s"
    target: Optional[float] = None
    audio_s: Optional[float] = None


def cases():
    g = torch.Generator().manual_seed(0)
    x = torch.complex(torch.randn(B, C, NF, NT, generator=g), torch.randn(B, C, NF, NT, generator=g))
    ms = torch.rand(B, NF, NT, generator=g)
    mn = 1 - ms
    ps, pn = F.psd(x, ms), F.psd(x, mn)
    rtf = F.rtf_power(ps, pn, 0)
    w = F.mvdr_weights_souden(ps, pn, 0)
    xn, msn, mnn = x.numpy(), ms.numpy(), mn.numpy()
    psn, pnn, rtfn, wn = ps.numpy(), pn.numpy(), rtf.numpy(), w.numpy()
    shape = f"b{B} c{C} f{NF} t{NT} c64"
    bins = B * NF

    def case(name, op, inputs, reference, attrs=None, items=bins, unit="bins/s"):
        return sidebyside.Case(name=name, op=op, inputs=inputs, attrs=attrs or {}, reference=reference,
                               items=items, unit=unit, repeat=10, warmup=2)

    psd_s = case("psd (mask) " + shape, "audio.psd", {"specgram": xn, "mask": msn}, lambda: F.psd(x, ms))
    psd_n = case("psd (noise mask) " + shape, "audio.psd", {"specgram": xn, "mask": mnn}, lambda: F.psd(x, mn))
    souden_obj = T.SoudenMVDR()
    rtf_obj = T.RTFMVDR()
    souden = case("SoudenMVDR " + shape, "audio.SoudenMVDR", {"specgram": xn, "psd_s": psn, "psd_n": pnn},
                  lambda: souden_obj(x, ps, pn, 0), attrs={"reference_channel": "0"})
    weights = case("mvdr_weights_souden " + shape, "audio.mvdr_weights_souden", {"psd_s": psn, "psd_n": pnn},
                   lambda: F.mvdr_weights_souden(ps, pn, 0), attrs={"reference_channel": "0"})
    power = case("rtf_power " + shape, "audio.rtf_power", {"psd_s": psn, "psd_n": pnn},
                 lambda: F.rtf_power(ps, pn, 0), attrs={"reference_channel": "0"})
    rtfw = case("mvdr_weights_rtf " + shape, "audio.mvdr_weights_rtf", {"rtf": rtfn, "psd_n": pnn},
                lambda: F.mvdr_weights_rtf(rtf, pn, 0), attrs={"reference_channel": "0"})
    evd = case("rtf_evd " + shape, "audio.rtf_evd", {"psd_s": psn}, lambda: F.rtf_evd(ps))
    apply = case("apply_beamforming " + shape, "audio.apply_beamforming", {"beamform_weights": wn, "specgram": xn},
                 lambda: F.apply_beamforming(w, x))
    rtfmvdr = case("RTFMVDR " + shape, "audio.RTFMVDR", {"specgram": xn, "rtf": rtfn, "psd_n": pnn},
                   lambda: rtf_obj(x, rtf, pn, 0), attrs={"reference_channel": "0"})

    psd_mod = T.PSD()

    def ref_souden():
        a, b = psd_mod(x, ms), psd_mod(x, mn)
        return souden_obj(x, a, b, 0)

    def ref_rtf():
        r = F.rtf_power(ps, pn, 0)
        return F.mvdr_weights_rtf(r, pn, 0)

    return [
        psd_s, weights, power, rtfw, evd, apply, souden, rtfmvdr,
        Pipeline("psd + SoudenMVDR " + shape, [psd_s, psd_n, souden], ref_souden, items=AUDIO_S,
                 unit="audio s/s", target=3.0, audio_s=AUDIO_S),
        Pipeline("rtf_power + mvdr_weights_rtf " + shape, [power, rtfw], ref_rtf, items=bins, unit="bins/s",
                 target=3.0, audio_s=AUDIO_S),
    ]
