"""The arbiter's login: scrypt password hashes, the session, CSRF tokens, form bodies.

Accounts live in hub.toml (``[[accounts]] login, password_hash``); only the
hash is stored, as ``scrypt$n$r$p$salt$hash`` (:func:`hash_password`, which
``pegwatch hub --hash-password`` prints). The session is Starlette's signed
cookie (itsdangerous); it holds the login and a CSRF token that every form
sends back and every POST checks, so another page cannot act in the
arbiter's name.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from urllib.parse import parse_qsl

from starlette.requests import Request

from pegwatch.hub.config import Account
from pegwatch.rules.errors import BadInput

__all__ = [
    "FormError",
    "check_csrf",
    "csrf_token",
    "hash_password",
    "logged_in",
    "read_form",
    "verify_password",
]

#: scrypt's cost: 16 MiB and about 50 ms a check, so guessing is slow and a login is not.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
MAX_FORM_BYTES = 64 * 1024
MAX_PASSWORD = 1024


class FormError(BadInput):
    """A form the page cannot take; the message names the field."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$salt$hash`` of ``password`` (a fresh 16-byte salt by default)."""
    if not password or len(password) > MAX_PASSWORD:
        raise FormError(f"a password must be 1 to {MAX_PASSWORD} characters")
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` gives ``stored``; False for a malformed hash, never an exception."""
    try:
        name, n, r, p, salt_b64, digest_b64 = stored.split("$")
        salt = base64.urlsafe_b64decode(salt_b64)
        want = base64.urlsafe_b64decode(digest_b64)
        if name != "scrypt" or len(password) > MAX_PASSWORD:
            return False
        got = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=int(n), r=int(r), p=int(p),
                             dklen=len(want), maxmem=256 * 1024 * 1024)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


#: Checked when no account matches, so a wrong login costs as long as a wrong password.
_DUMMY_HASH = hash_password("pegwatch", salt=b"\0" * 16)


def authenticate(accounts: Sequence[Account], login: str, password: str) -> str | None:
    """The login when the password is right, else None."""
    account = next((a for a in accounts if hmac.compare_digest(a.login.encode(), login.encode())), None)
    ok = verify_password(password, account.password_hash if account else _DUMMY_HASH)
    return account.login if account and ok else None


def logged_in(request: Request) -> str | None:
    value = request.session.get("login")
    return value if isinstance(value, str) else None


def csrf_token(request: Request) -> str:
    """The session's CSRF token, made on first use (also before a login: the login form has one)."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(24)
        request.session["csrf"] = token
    return token


def check_csrf(request: Request, form: Mapping[str, str]) -> bool:
    token = request.session.get("csrf")
    sent = form.get("csrf", "")
    return isinstance(token, str) and bool(sent) and hmac.compare_digest(token.encode(), sent.encode())


async def read_form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (what the page's forms send), at most 64 KiB."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise FormError(f"a form must be sent as application/x-www-form-urlencoded, not {kind[:60]!r}")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormError(f"a form of more than {MAX_FORM_BYTES} bytes")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise FormError("a form that is not UTF-8") from None
    return {k: v for k, v in pairs}
