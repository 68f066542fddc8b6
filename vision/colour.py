"""The per-table colour model: Gaussian classes in CIELAB with rejection.

Each class (a palette colour, ``"empty"``, a key colour) is a Gaussian over
a feature vector that starts with CIELAB (the reader adds the CIELAB of the
ring around the hole, and for key holes a dark-area fraction), fitted from
calibration samples whose truth is known. A sample is accepted as the most
likely class only when

* it is plausibly drawn from that class: its squared Mahalanobis distance is below the
  chi-square quantile (one degree of freedom per feature) at ``reject_alpha``, so anything
  far from every calibrated colour is "unknown"; and
* that class is clearly more likely than any other: the posterior (equal
  priors) is at least ``min_posterior``, so two close classes never produce
  a guess.

Each class covariance is the sample covariance shrunk towards the pooled one
plus a floor. The floor stands for what a handful of calibration frames
cannot show, each term a physical effect (see :meth:`ColourModel.fit`):
residual normalisation error and noise, exposure residuals that scale with
lightness, mixing with the plastic around a peg (blur, JPEG, localisation),
and broad highlights.

Helpers convert sRGB pixels to linear light (where light corrections are
multiplicative gains) and linear light to CIELAB (D65).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]

#: Chi-square quantiles for 3 degrees of freedom: P(d² <= q) = 1 - alpha.
_CHI2_3 = {1e-2: 11.345, 1e-3: 16.266, 1e-4: 21.108, 1e-5: 25.902, 1e-6: 30.664}

#: Default floor (standard deviation, Lab units) added to every class: L, a, b.
DEFAULT_FLOOR_SIGMA = (3.0, 2.5, 2.5)

#: Loading a model: features (CIELAB, a dark fraction) are within this of 0.
_MAX_FEATURE = 1000.0
#: Loading a model: a covariance's eigenvalues are above this.
_MIN_VARIANCE = 1e-9


class ColourModelError(BadInput):
    """A colour model cannot be built or loaded."""


# --- colour space helpers -------------------------------------------------------

_SRGB_TO_LINEAR_LUT = np.array(
    [
        (v / 255.0) / 12.92 if v / 255.0 <= 0.04045 else ((v / 255.0 + 0.055) / 1.055) ** 2.4
        for v in range(256)
    ],
    dtype=np.float64,
)

# Linear sRGB (as B, G, R columns) -> XYZ, D65.
_BGR_TO_XYZ = np.array(
    [
        [0.1804375, 0.3575761, 0.4124564],
        [0.0721750, 0.7151522, 0.2126729],
        [0.9503041, 0.1191920, 0.0193339],
    ],
    dtype=np.float64,
)
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883], dtype=np.float64)
_XYZ_TO_BGR = np.linalg.inv(_BGR_TO_XYZ)


def srgb_to_linear(values: NDArray[Any]) -> FloatArray:
    """sRGB values 0..255 (any shape, any numeric dtype) to linear light 0..1."""
    arr = np.asarray(values)
    if arr.dtype == np.uint8:
        out: FloatArray = _SRGB_TO_LINEAR_LUT[arr]
        return out
    v = np.clip(arr.astype(np.float64) / 255.0, 0.0, 1.0)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(values: NDArray[Any]) -> FloatArray:
    """Linear light 0..1 to sRGB 0..255 floats."""
    v = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0)
    return 255.0 * np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)


def linear_bgr_to_lab(bgr: NDArray[Any]) -> FloatArray:
    """Linear-light BGR (..., 3) to CIELAB (..., 3), L in 0..100, D65."""
    xyz = np.asarray(bgr, dtype=np.float64) @ _BGR_TO_XYZ.T / _WHITE_D65
    f, low = np.cbrt(xyz), xyz <= 216 / 24389  # the linear segment only where it applies (near black: few values)
    f[low] = (24389 / 27 * xyz[low] + 16) / 116
    lab = np.empty_like(f)
    lab[..., 0] = 116 * f[..., 1] - 16
    lab[..., 1] = 500 * (f[..., 0] - f[..., 1])
    lab[..., 2] = 200 * (f[..., 1] - f[..., 2])
    return lab


def lab_to_linear_bgr(lab: NDArray[Any]) -> FloatArray:
    """CIELAB (..., 3), D65, back to linear-light BGR (..., 3): the inverse of :func:`linear_bgr_to_lab`."""
    arr = np.asarray(lab, dtype=np.float64)
    fy = (arr[..., 0] + 16) / 116
    f = np.stack([fy + arr[..., 1] / 500, fy, fy - arr[..., 2] / 200], axis=-1)
    xyz = np.where(f**3 > 216 / 24389, f**3, (116 * f - 16) * 27 / 24389) * _WHITE_D65
    return np.asarray(xyz @ _XYZ_TO_BGR.T, dtype=np.float64)


def srgb_bgr_to_lab(bgr: NDArray[Any]) -> FloatArray:
    """sRGB BGR 0..255 (..., 3) to CIELAB."""
    return linear_bgr_to_lab(srgb_to_linear(bgr))


def chi2_3_quantile(alpha: float) -> float:
    """The chi-square (3 dof) value exceeded with probability ``alpha``."""
    return chi2_quantile(alpha, 3)


@functools.lru_cache(maxsize=64)
def chi2_quantile(alpha: float, dof: int) -> float:
    """The chi-square value (``dof`` degrees of freedom) exceeded with probability ``alpha``."""
    if dof == 3 and alpha in _CHI2_3:
        return _CHI2_3[alpha]
    # Wilson-Hilferty approximation; good to ~1 % in the range we use.
    k = float(dof)
    z = _normal_quantile(1.0 - alpha)
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


def _normal_quantile(p: float) -> float:
    # Acklam's rational approximation, plenty for thresholds.
    if not 0.0 < p < 1.0:
        raise ColourModelError(f"probability {p} must be in (0, 1)")
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
         1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
         6.680131188771972e01, -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
         -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
         3.754408661907416e00)
    if p > 0.5:
        return -_normal_quantile(1.0 - p)
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
        ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1
    )


# --- the model -----------------------------------------------------------------

#: A hole's candidate colours (the classes it may belong to) drop a class
#: only when the hole lies beyond this tail of it (far beyond the 1e-4 of
#: the acceptance test) and its posterior is below MIN_CANDIDATE_POSTERIOR.
RULE_OUT_ALPHA = 1e-9
MIN_CANDIDATE_POSTERIOR = 1e-4
#: ... nor when it is within this many times the Mahalanobis distance of the
#: nearest class: a peg between two colours (or a colour the light has
#: moved) keeps both.
FAR_FACTOR = 2.0


@dataclass(frozen=True)
class Classification:
    """The result of classifying ``n`` samples (arrays of length ``n``).

    ``best`` indexes ``ColourModel.names``; ``accepted`` is False where the
    sample is rejected (too far from every class, or too close to two);
    ``confidence`` is the posterior of the best class, scaled down by how
    implausible the sample is under it; ``distance2`` is the squared
    Mahalanobis distance to the best class.
    """

    best: NDArray[np.intp]
    confidence: FloatArray
    accepted: NDArray[np.bool_]
    distance2: FloatArray
    posterior: FloatArray


@dataclass(frozen=True, eq=False)
class ColourModel:
    """Gaussian classes over a feature vector, with rejection.

    The features are CIELAB of the hole's inner disc, optionally followed
    by more (the reader adds the lightness of the ring around it). Build one
    with :meth:`fit`; ``to_dict``/``from_dict`` give its JSON form.
    """

    names: tuple[str, ...]
    means: FloatArray  # (k, d)
    covariances: FloatArray  # (k, d, d)
    counts: tuple[int, ...]
    reject_alpha: float = 1e-4
    min_posterior: float = 0.99

    def __post_init__(self) -> None:
        k = len(self.names)
        if k == 0:
            raise ColourModelError("a colour model needs at least one class")
        d = self.means.shape[1] if self.means.ndim == 2 else 0
        if d < 1 or self.means.shape != (k, d) or self.covariances.shape != (k, d, d):
            raise ColourModelError(
                f"colour model shapes do not match {k} classes: means {self.means.shape}, "
                f"covariances {self.covariances.shape}"
            )
        try:
            inv = np.linalg.inv(self.covariances)
            sign, logdet = np.linalg.slogdet(self.covariances)
        except np.linalg.LinAlgError as exc:
            raise ColourModelError(f"colour model covariance is singular: {exc}") from None
        if np.any(sign <= 0):
            raise ColourModelError("colour model covariance is not positive definite")
        object.__setattr__(self, "_inv", inv)
        object.__setattr__(self, "_logdet", logdet)
        object.__setattr__(self, "_reject_d2", chi2_quantile(self.reject_alpha, d))

    @property
    def dims(self) -> int:
        """Length of the feature vector."""
        return int(self.means.shape[1])

    @classmethod
    def fit(
        cls,
        samples: Mapping[str, Sequence[Sequence[float]] | FloatArray],
        *,
        floor_sigma: Sequence[float] = DEFAULT_FLOOR_SIGMA,
        relative_sigma: float = 0.0,
        mix_towards: Sequence[float] | None = None,
        mix_fraction: float = 0.0,
        glare_towards: Sequence[float] | None = None,
        glare_fraction: float = 0.0,
        shading_sigma: float = 0.0,
        shading_dims: Sequence[int] = (),
        unshaded: Sequence[str] = (),
        shrinkage: float = 4.0,
        reject_alpha: float = 1e-4,
        min_posterior: float = 0.99,
    ) -> ColourModel:
        """Fit one Gaussian per class from feature samples ``{name: (n, d)}``.

        The mean is the per-axis median and the covariance is computed after
        dropping samples more than 4 robust sigmas out (a mislabelled or
        glared calibration hole must not widen a class). Each covariance is
        shrunk towards the pooled covariance with weight ``shrinkage``
        pseudo-samples, then the floor is added: ``diag(floor_sigma²)``; a
        lightness spread of ``relative_sigma`` times the class's lightness
        (exposure and glare residuals scale with it); and, when
        ``mix_towards`` is given (the bare plastic's features), a spread of
        ``mix_fraction`` of the way from the class towards it along that
        line: blur, JPEG chroma subsampling and registration errors mix a
        peg's colour with the plastic around it, and only along that line.
        Likewise ``glare_towards`` (the colour of the light; NaN for a
        feature glare does not touch) with ``glare_fraction``: a broad
        highlight that the brightness trimming cannot remove. And, for every
        class not in ``unshaded``, ``shading_sigma`` (in log of linear
        light) along the line a CIELAB colour moves on when its light is
        scaled: a peg is a dome, and how much of it is in its own shade
        changes with the light's direction, which the flat plastic the
        light is normalised by does not see. ``shading_dims`` are the
        indices where a CIELAB triple (L, a, b) starts.
        """
        floor_arr = np.asarray(floor_sigma, dtype=np.float64)
        d = len(floor_arr)
        names: list[str] = []
        means: list[FloatArray] = []
        covs: list[FloatArray] = []
        counts: list[int] = []
        for name, raw in samples.items():
            arr = np.asarray(raw, dtype=np.float64)
            if arr.size == 0:
                raise ColourModelError(f"class {name!r} has no calibration samples")
            arr = arr.reshape(-1, d)
            med = np.median(arr, axis=0)
            mad = np.median(np.abs(arr - med), axis=0) * 1.4826
            scale = np.maximum(mad, floor_arr)
            keep = np.all(np.abs(arr - med) <= 4 * scale, axis=1)
            inliers = arr[keep] if keep.sum() >= max(1, len(arr) // 2) else arr
            if len(inliers) < len(arr):
                logger.info("colour %s: dropped %d outlying samples", name, len(arr) - len(inliers))
            cov = np.cov(inliers.T, bias=True) if len(inliers) > 1 else np.zeros((d, d))
            names.append(name)
            means.append(np.median(inliers, axis=0))
            covs.append(np.asarray(cov, dtype=np.float64).reshape(d, d))
            counts.append(len(inliers))
        total = sum(counts)
        pooled = sum((c * s for c, s in zip(counts, covs, strict=True)), np.zeros((d, d))) / max(total, 1)
        shrunk: list[FloatArray] = []

        def name_of(i: int) -> str:
            return names[i]

        for c, s, m in zip(counts, covs, means, strict=True):
            cov = (c * s + shrinkage * pooled) / (c + shrinkage) + np.diag(np.square(floor_arr))
            if relative_sigma > 0:
                cov[0, 0] += (relative_sigma * max(float(m[0]), 0.0)) ** 2
            if mix_towards is not None and mix_fraction > 0:
                towards = np.asarray(mix_towards, dtype=np.float64)
                direction = (towards - m) * mix_fraction
                cov = cov + np.outer(direction, direction)
            if shading_sigma > 0 and name_of(len(shrunk)) not in unshaded:
                direction = np.zeros(d)
                for start in shading_dims:
                    lab = m[start : start + 3]
                    direction[start : start + 3] = [(lab[0] + 16.0) / 3.0, lab[1] / 3.0, lab[2] / 3.0]
                direction *= shading_sigma
                cov = cov + np.outer(direction, direction)
            if glare_towards is not None and glare_fraction > 0:
                light = np.asarray(glare_towards, dtype=np.float64)
                direction = np.where(np.isnan(light), 0.0, light - m) * glare_fraction
                cov = cov + np.outer(direction, direction)
            shrunk.append(cov)
        return cls(
            names=tuple(names),
            means=np.array(means, dtype=np.float64),
            covariances=np.array(shrunk, dtype=np.float64),
            counts=tuple(counts),
            reject_alpha=reject_alpha,
            min_posterior=min_posterior,
        )

    @property
    def reject_distance2(self) -> float:
        """Squared Mahalanobis distance beyond which a sample is rejected."""
        return float(self._reject_d2)  # type: ignore[attr-defined]

    def index(self, name: str) -> int:
        """The class index of ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise ColourModelError(f"colour {name!r} is not calibrated (have {', '.join(self.names)})") from None

    def distances2(self, lab: NDArray[Any], *, classes: NDArray[np.bool_] | None = None) -> FloatArray:
        """Squared Mahalanobis distances (n, k) of feature samples (n, d) to each class (or (n, those) of a ``classes`` mask)."""
        x = np.asarray(lab, dtype=np.float64).reshape(-1, self.dims)
        keep = slice(None) if classes is None else classes
        diff = x[None, :, :] - self.means[keep][:, None, :]  # (k, n, d): one batched matmul, not a slow 3-operand einsum
        inv: FloatArray = self._inv[keep]  # type: ignore[attr-defined]
        return np.asarray(np.einsum("knj,knj->nk", np.matmul(diff, inv), diff), dtype=np.float64)

    def classify(self, lab: NDArray[Any], *, allowed: Sequence[bool] | None = None) -> Classification:
        """Classify feature samples (n, d); ``allowed`` masks classes out (False)."""
        return self.classify_distances(self.distances2(lab), allowed=allowed)

    def classify_distances(self, d2: FloatArray, *, allowed: Sequence[bool] | None = None) -> Classification:
        """Classify from squared distances (n, k), e.g. minimised over a censored value."""
        logdet: FloatArray = self._logdet  # type: ignore[attr-defined]
        nll = 0.5 * (d2 + logdet[None, :])
        if allowed is not None:
            mask = np.asarray(allowed, dtype=bool)
            nll = np.where(mask[None, :], nll, np.inf)
        best = np.argmin(nll, axis=1)
        rows = np.arange(len(best))
        shifted = np.exp(-(nll - nll[rows, best][:, None]))
        posterior = 1.0 / np.sum(shifted, axis=1)
        best_d2 = d2[rows, best]
        inside = best_d2 <= self.reject_distance2
        accepted = inside & (posterior >= self.min_posterior)
        # Beyond the rejection radius the confidence falls with the tail
        # probability, so a rejected sample never reports a high confidence.
        plaus = np.where(inside, 1.0, np.exp(-0.5 * (best_d2 - self.reject_distance2)))
        confidence = posterior * plaus
        return Classification(
            best=best.astype(np.intp),
            confidence=confidence,
            accepted=accepted,
            distance2=best_d2,
            posterior=posterior,
        )

    def candidates(
        self, d2: FloatArray, *, allowed: Sequence[bool] | None = None
    ) -> list[tuple[tuple[str, float], ...]]:
        """Per sample (rows of ``d2``), the classes it may belong to, with their posteriors, best first.

        A class is ruled out only when the sample lies beyond the
        ``RULE_OUT_ALPHA`` tail of it, more than ``FAR_FACTOR`` times as far
        (Mahalanobis) as the nearest class, and its posterior is negligible:
        a colour is dropped only when it is plainly not there. A sample
        beyond that tail of every class (a finger, a sleeve, a colour the
        table never learned) rules nothing out: its entry is empty, meaning
        "anything". Classes never learned (``counts`` 0) are never ruled
        out.
        """
        logdet: FloatArray = self._logdet  # type: ignore[attr-defined]
        x = np.asarray(d2, dtype=np.float64).reshape(-1, len(self.names))
        nll = 0.5 * (x + logdet[None, :])
        mask = np.ones(len(self.names), dtype=bool) if allowed is None else np.asarray(allowed, dtype=bool)
        nll = np.where(mask[None, :], nll, np.inf)
        p = np.exp(-(nll - nll.min(axis=1, keepdims=True)))
        p /= p.sum(axis=1, keepdims=True)
        loose = chi2_quantile(RULE_OUT_ALPHA, self.dims)
        unlearned = np.array([c == 0 for c in self.counts], dtype=bool) & mask
        out: list[tuple[tuple[str, float], ...]] = []
        for i in range(len(x)):
            best = int(np.argmin(nll[i]))
            if x[i, best] > loose:
                out.append(())
                continue
            near = x[i] <= max(loose, FAR_FACTOR**2 * x[i, best])
            keep = mask & (near | (p[i] >= MIN_CANDIDATE_POSTERIOR) | unlearned)
            order = sorted(np.flatnonzero(keep), key=lambda k: -p[i, k])
            out.append(tuple((self.names[k], float(p[i, k])) for k in order))
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "classes": [
                {
                    "name": n,
                    "mean_lab": [round(float(v), 4) for v in m],
                    "covariance": [[round(float(v), 5) for v in row] for row in c],
                    "samples": cnt,
                }
                for n, m, c, cnt in zip(self.names, self.means, self.covariances, self.counts, strict=True)
            ],
            "reject_alpha": self.reject_alpha,
            "min_posterior": self.min_posterior,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "colour model") -> ColourModel:
        """Inverse of :meth:`to_dict`; errors name ``where`` and the key."""
        def bad(key: str, why: str) -> ColourModelError:
            return ColourModelError(f"{where}: {key}: {why}")

        if not isinstance(data, Mapping):
            raise ColourModelError(f"{where}: expected an object with \"classes\"")
        classes = data.get("classes")
        if not isinstance(classes, list) or not classes or len(classes) > 64:
            raise bad("classes", "expected a list of 1..64 classes")
        names: list[str] = []
        for i, c in enumerate(classes):
            if not isinstance(c, Mapping):
                raise bad(f"classes[{i}]", "expected an object")
            name = c.get("name")
            if not isinstance(name, str) or not name:
                raise bad(f"classes[{i}].name", "expected a colour name")
            names.append(name)
        if len(set(names)) != len(names):
            raise bad("classes", "class names repeat")
        try:
            means = np.array([c["mean_lab"] for c in classes], dtype=np.float64)
            covs = np.array([c["covariance"] for c in classes], dtype=np.float64)
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise bad("classes", f"malformed: mean_lab and covariance must be numbers, one per feature ({exc!s})") from None
        k = len(names)
        if means.ndim != 2 or means.shape[0] != k or not 1 <= means.shape[1] <= 16:
            raise bad("classes", f"mean_lab must be a list of 1..16 numbers in every class, got shape {means.shape}")
        d = means.shape[1]
        if covs.shape != (k, d, d):
            raise bad("classes", f"covariance must be a {d}x{d} matrix in every class, got shape {covs.shape}")
        if not np.all(np.abs(means) <= _MAX_FEATURE):
            raise bad("classes", f"a mean_lab value is not a number within ±{_MAX_FEATURE:g}")
        if not np.all(np.abs(covs) <= _MAX_FEATURE**2):
            raise bad("classes", f"a covariance value is not a number within ±{_MAX_FEATURE**2:g}")
        if not np.allclose(covs, np.swapaxes(covs, 1, 2), rtol=1e-6, atol=1e-6):
            raise bad("classes", "a covariance matrix is not symmetric")
        if np.any(np.linalg.eigvalsh(covs) <= _MIN_VARIANCE):
            raise bad("classes", "a covariance matrix is not positive definite")
        counts: list[int] = []
        for i, c in enumerate(classes):
            n = c.get("samples", 1)
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise bad(f"classes[{i}].samples", f"expected a count, got {n!r}"[:120])
            counts.append(n)
        alpha = data.get("reject_alpha", 1e-4)
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 1e-12 <= alpha <= 0.5:
            raise bad("reject_alpha", f"expected a probability 1e-12..0.5, got {alpha!r}"[:120])
        post = data.get("min_posterior", 0.99)
        if isinstance(post, bool) or not isinstance(post, int | float) or not 0.5 <= post <= 1:
            raise bad("min_posterior", f"expected a probability 0.5..1, got {post!r}"[:120])
        try:
            return cls(
                tuple(names), means, covs, tuple(counts),
                reject_alpha=float(alpha), min_posterior=float(post),
            )
        except ColourModelError as exc:
            raise ColourModelError(f"{where}: {exc}") from None
