"""Verify Guard webhooks with Python's standard library alone (Python 3.7 or later).

Two signatures come with every delivery, made with the same endpoint secret (docs/webhooks.md):

  Guard-Signature: sha256=<hex HMAC-SHA256(key = the secret's UTF-8 text, message = raw body)>
  webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256(
      key = the bytes the secret's text after "whsec_" decodes to,
      message = "<webhook-id>.<webhook-timestamp>.<raw body>")>   (Standard Webhooks)

During a secret rotation each signature header lists one entry per valid secret, newest first
(`sha256=<hex>, sha256=<hex>`; `v1,<b64> v1,<b64>`): a delivery is genuine when any entry
matches. Every function takes a list of secrets too, for your own rollover: any one may match.

Copy this file into your project. Run it as a script to check a captured delivery:

  python3 guard_webhook.py [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...
"""

import base64
import binascii
import hashlib
import hmac
import json
import re
import sys
import time
from datetime import datetime

__all__ = [
    "DEFAULT_TOLERANCE_SECONDS",
    "ConfigurationError",
    "VerificationError",
    "construct_event",
    "standard_key",
    "verify_guard_signature",
    "verify_standard_webhooks",
]

DEFAULT_TOLERANCE_SECONDS = 300
# Most entries read from one signature header: a forged header cannot make us do unbounded work.
MAX_SIGNATURE_ENTRIES = 8
SECRET_PREFIX = "whsec_"


class VerificationError(Exception):
    """The request is not to be trusted: answer it with a 4xx."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class ConfigurationError(Exception):
    """The receiver's own mistake (no secret, a secret that is not base64): a 5xx, fix it."""


def _secrets(secrets):
    listed = [secrets] if isinstance(secrets, str) else list(secrets or [])
    if not listed or not all(isinstance(s, str) and s for s in listed):
        raise ConfigurationError("the webhook secret is unset or empty: an empty key accepts anyone's signature")
    return listed


def _body_bytes(body):
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise VerificationError("invalid_body", "pass the raw request body as bytes, never re-serialised JSON")


def verify_guard_signature(body, header, secrets):
    """Checks Guard-Signature (one entry, or a rotation's list) against the raw body."""
    keys = [s.encode("utf-8") for s in _secrets(secrets)]
    body = _body_bytes(body)
    if not header:
        raise VerificationError("missing_signature", "the Guard-Signature header is missing")
    got = []
    entries = [e.strip() for e in header.split(",") if e.strip()]
    if len(entries) > MAX_SIGNATURE_ENTRIES:
        raise VerificationError("malformed_signature", "the Guard-Signature header has too many entries")
    for entry in entries:
        if not entry.startswith("sha256="):
            continue  # another scheme: ignored
        if not re.fullmatch(r"[0-9a-fA-F]{64}", entry[7:]):
            raise VerificationError("malformed_signature", "a sha256= entry is not 64 hex digits")
        got.append(bytes.fromhex(entry[7:]))
    if not got:
        raise VerificationError("malformed_signature", 'the Guard-Signature header has no "sha256=" entry')
    for key in keys:
        want = hmac.new(key, body, hashlib.sha256).digest()
        if any(hmac.compare_digest(want, entry) for entry in got):
            return
    raise VerificationError("signature_mismatch", "the Guard-Signature does not match the body and secret")


def standard_key(secret):
    """The Standard Webhooks key: the text after "whsec_", base64-decoded. Secrets are issued in
    standard base64; earlier ones were base64url: either alphabet, padding optional."""
    text = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    text = text.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        key = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ConfigurationError("the webhook secret is not whsec_ followed by base64")
    return key


def _check_time(seconds, now, tolerance, what):
    if seconds < now - tolerance:
        raise VerificationError("timestamp_too_old", "%s is more than %d s old (a replay?)" % (what, tolerance))
    if seconds > now + tolerance:
        raise VerificationError("timestamp_in_future", "%s is more than %d s ahead (check the clock)" % (what, tolerance))


def verify_standard_webhooks(body, webhook_id, webhook_timestamp, webhook_signature, secrets,
                             now=None, tolerance=DEFAULT_TOLERANCE_SECONDS):
    """Checks the Standard Webhooks headers against the raw body, the timestamp within tolerance."""
    keys = [standard_key(s) for s in _secrets(secrets)]
    body = _body_bytes(body)
    if not webhook_signature:
        raise VerificationError("missing_signature", "the webhook-signature header is missing")
    if not webhook_id or not webhook_timestamp:
        raise VerificationError("missing_signature", "the webhook-id or webhook-timestamp header is missing")
    if not re.fullmatch(r"[0-9]{1,12}", webhook_timestamp):
        raise VerificationError("malformed_signature", "the webhook-timestamp header is not integer seconds")
    _check_time(int(webhook_timestamp), time.time() if now is None else now, tolerance, "the webhook-timestamp")
    entries = webhook_signature.split()
    if len(entries) > MAX_SIGNATURE_ENTRIES:
        raise VerificationError("malformed_signature", "the webhook-signature header has too many entries")
    got = []
    for entry in entries:
        if not entry.startswith("v1,"):
            continue  # another version: ignored
        try:
            got.append(base64.b64decode(entry[3:], validate=True))
        except (binascii.Error, ValueError):
            raise VerificationError("malformed_signature", "a v1, entry is not base64") from None
    if not got:
        raise VerificationError("malformed_signature", 'the webhook-signature header has no "v1," entry')
    content = ("%s.%s." % (webhook_id, webhook_timestamp)).encode("utf-8") + body
    for key in keys:
        want = hmac.new(key, content, hashlib.sha256).digest()
        if any(hmac.compare_digest(want, entry) for entry in got):
            return
    raise VerificationError("signature_mismatch", "the webhook-signature does not match the id, timestamp, body and secret")


def construct_event(body, headers, secrets, now=None, tolerance=DEFAULT_TOLERANCE_SECONDS):
    """Verifies one delivery and returns its envelope (a dict).

    `headers` is any mapping with case-insensitive names (http.server's `self.headers`, Flask's
    `request.headers`, Django's `request.headers`) or a dict of lower-case names. Guard-Signature
    is checked when present, else the Standard Webhooks headers; then the envelope's signed
    `timestamp` must be within `tolerance` seconds of now, so a captured request cannot be
    replayed later.
    """
    now = time.time() if now is None else now

    def header(name):
        return headers.get(name) or headers.get(name.lower())

    guard_signature = header("Guard-Signature")
    if guard_signature is None and header("webhook-signature") is not None:
        verify_standard_webhooks(body, header("webhook-id"), header("webhook-timestamp"),
                                 header("webhook-signature"), secrets, now, tolerance)
    else:
        verify_guard_signature(body, guard_signature, secrets)
    try:
        event = json.loads(body.decode("utf-8"))
        sent = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
    except (ValueError, KeyError, TypeError, AttributeError):
        raise VerificationError("invalid_payload", "the body is not a Guard envelope with a timestamp") from None
    if event.get("version") != "v1":
        raise VerificationError("invalid_payload", "the envelope is not version v1")
    _check_time(sent, now, tolerance, "the envelope's timestamp")
    return event


class _Headers(dict):
    def get(self, name, default=None):
        return super().get(name.lower(), default)


def _main(argv):
    now = None
    if argv and argv[0].startswith("--now="):
        now = float(argv.pop(0)[len("--now="):])
    if len(argv) < 4 or argv[0] not in ("guard-signature", "standard-webhooks"):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    scheme, headers_file, body_file, secrets = argv[0], argv[1], argv[2], argv[3:]
    headers = _Headers()
    with open(headers_file, encoding="utf-8") as f:
        for line in f:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
    # Leave out the other scheme's headers, so construct_event checks the one asked for.
    drop = ("guard-signature",) if scheme == "standard-webhooks" else ("webhook-signature", "webhook-id", "webhook-timestamp")
    for name in drop:
        headers.pop(name, None)
    with open(body_file, "rb") as f:
        body = f.read()
    try:
        event = construct_event(body, headers, secrets, now=now)
    except VerificationError as e:
        print("refused (%s): %s" % (e.code, e), file=sys.stderr)
        return 1
    except ConfigurationError as e:
        print("configuration: %s" % e, file=sys.stderr)
        return 2
    data = event.get("data") or {}
    print("verified by %s: %s %s" % (scheme, event.get("event_type"), data.get("signal_id") or data.get("event_id")))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
