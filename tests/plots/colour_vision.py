"""Colour maths written out as the tests' reference: simulated colour vision deficiency,
CIE L*a*b*, CIEDE2000 and WCAG contrast. numpy only, so that nothing checked here rests
on the library that is being checked.

Simulation: Machado, Oliveira and Fernandes (2009), "A physiologically-based model for
simulation of color vision deficiency", IEEE TVCG 15(6), their matrices for severity 1.0
(dichromacy), applied to linear sRGB and clipped to the gamut, as colorspacious and
DaltonLens apply them.
"""

from __future__ import annotations

import numpy as np

MACHADO_2009 = {
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
    ),
}
VISIONS = ("normal", *MACHADO_2009)

_SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
_D65 = np.array([0.95047, 1.0, 1.08883])


def rgb(hex_colour: str) -> np.ndarray:
    """"#RRGGBB" as sRGB values in [0, 1]."""
    return np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.float64) / 255


def to_linear(srgb: np.ndarray) -> np.ndarray:
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def to_srgb(linear: np.ndarray) -> np.ndarray:
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * np.abs(linear) ** (1 / 2.4) - 0.055)


def simulate(srgb: np.ndarray, vision: str) -> np.ndarray:
    """sRGB values (..., 3) in [0, 1] as a viewer with ``vision`` sees them."""
    if vision == "normal":
        return np.asarray(srgb, dtype=np.float64)
    linear = to_linear(np.asarray(srgb, dtype=np.float64)) @ MACHADO_2009[vision].T
    return to_srgb(np.clip(linear, 0.0, 1.0))


def cielab(srgb: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (D65) of sRGB values (..., 3) in [0, 1]."""
    xyz = to_linear(np.asarray(srgb, dtype=np.float64)) @ _SRGB_TO_XYZ.T / _D65
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 colour difference (Sharma, Wu and Dalal 2005) of L*a*b* values (..., 3);
    about 1 is just noticeable side by side, and differences past 10 read as other colours."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=np.float64), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=np.float64), -1, 0)
    C_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    G = 0.5 * (1 - np.sqrt(C_mean**7 / (C_mean**7 + 25.0**7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1p, C2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(C1p * C2p == 0, 0.0, dh)
    dL, dC = L2 - L1, C2p - C1p
    dH = 2 * np.sqrt(C1p * C2p) * np.sin(np.radians(dh / 2))
    Lp, Cp = (L1 + L2) / 2, (C1p + C2p) / 2
    hp = (h1p + h2p) / 2
    hp = np.where(np.abs(h1p - h2p) > 180, np.where(hp < 180, hp + 180, hp - 180), hp)
    hp = np.where(C1p * C2p == 0, h1p + h2p, hp)
    T = (1 - 0.17 * np.cos(np.radians(hp - 30)) + 0.24 * np.cos(np.radians(2 * hp))
         + 0.32 * np.cos(np.radians(3 * hp + 6)) - 0.20 * np.cos(np.radians(4 * hp - 63)))  # fmt: skip
    SL = 1 + 0.015 * (Lp - 50) ** 2 / np.sqrt(20 + (Lp - 50) ** 2)
    SC, SH = 1 + 0.045 * Cp, 1 + 0.015 * Cp * T
    RT = -2 * np.sqrt(Cp**7 / (Cp**7 + 25.0**7)) * np.sin(np.radians(60 * np.exp(-(((hp - 275) / 25) ** 2))))
    return np.sqrt((dL / SL) ** 2 + (dC / SC) ** 2 + (dH / SH) ** 2 + RT * (dC / SC) * (dH / SH))


def relative_luminance(srgb: np.ndarray) -> np.ndarray:
    """WCAG 2's relative luminance of sRGB values (..., 3) in [0, 1]."""
    return to_linear(np.asarray(srgb, dtype=np.float64)) @ np.array([0.2126, 0.7152, 0.0722])


def contrast_on_white(srgb: np.ndarray) -> np.ndarray:
    """WCAG 2's contrast ratio against white: 21 for black, 1 for white."""
    return 1.05 / (relative_luminance(srgb) + 0.05)
