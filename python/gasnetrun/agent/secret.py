"""Comparing a secret (the job's cookie) in time that does not depend on where it differs.
hmac.compare_digest does the same, but importing hmac loads OpenSSL (6 ms of every job)."""
from __future__ import annotations


def same_secret(given: bytes, expected: bytes) -> bool:
    """Whether given is expected; every byte is looked at whatever the first difference."""
    if len(given) != len(expected):
        return False
    return int.from_bytes(given, "big") ^ int.from_bytes(expected, "big") == 0
