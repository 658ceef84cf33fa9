"""Issue 29's cheaper paths keep every answer: the certificate's cheaper encoding still reads old
reports, the vectorised scale checks decide exactly as the SymPy sign decision did."""

from __future__ import annotations

import base64
import zlib

import pytest

np = pytest.importorskip("numpy", reason="needs numpy (pip install 'symabsorb[weights]')")

from symabsorb.weights import certify  # noqa: E402


def test_limbs_written_at_any_zlib_level_read_back() -> None:
    limb = np.arange(-600, 600, dtype=np.int64).reshape(30, 40) * 4099
    new = certify._pack(limb)
    old = {**new, "data": base64.b64encode(zlib.compress(limb.astype("<i4").tobytes(), 9)).decode("ascii")}
    assert new["encoding"] == old["encoding"] == "zlib+base64"
    for packed in (new, old):
        assert (certify._unpack(packed) == limb).all()


def test_a_tampered_limb_is_still_refused() -> None:
    limb = np.ones((4, 4), dtype=np.int64)
    packed = certify._pack(limb)
    short = {**packed, "data": base64.b64encode(zlib.compress(b"\0" * 60, 1)).decode("ascii")}
    with pytest.raises(certify.CertificateError):
        certify._unpack(short)
