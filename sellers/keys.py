"""The API key format: `<prefix>.<secret>`, stored as the prefix plus a SHA-256 hash.

A fast hash is right here (DESIGN.md §5): the secret is 256 random bits, so there is
nothing to brute-force, and a slow password hash would cost ~100 ms on every request.
"""

import hashlib
import hmac
import secrets


def generate_key() -> tuple[str, str]:
    """A new key: returns (prefix, raw key). The raw key is shown once and never stored."""
    prefix = secrets.token_hex(6)
    return prefix, f"{prefix}.{secrets.token_urlsafe(32)}"


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def split_key(raw: str) -> str | None:
    """The prefix of a well-formed raw key, else None."""
    prefix, dot, secret = raw.partition(".")
    if not dot or not prefix or not secret or len(prefix) > 16:
        return None
    return prefix


def key_matches(raw: str, secret_hash: str) -> bool:
    return hmac.compare_digest(hash_key(raw), secret_hash)
