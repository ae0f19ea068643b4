<?php
// Verify Guard webhooks with PHP's standard library alone (PHP 8.1 or later: hash, json, date).
//
// Two signatures come with every delivery, made with the same endpoint secret (docs/webhooks.md):
//
//   Guard-Signature: sha256=<hex HMAC-SHA256(key = the secret's UTF-8 text, message = raw body)>
//   webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256(
//       key = the bytes the secret's text after "whsec_" decodes to,
//       message = "<webhook-id>.<webhook-timestamp>.<raw body>")>   (Standard Webhooks)
//
// During a secret rotation each signature header lists one entry per valid secret, newest first
// (`sha256=<hex>, sha256=<hex>`; `v1,<b64> v1,<b64>`): a delivery is genuine when any entry
// matches. Every method takes a list of secrets too, for your own rollover: any one may match.
//
// Copy this file into your project; verify.php beside it checks a captured delivery.

declare(strict_types=1);

namespace GuardWebhook;

/** The request is not to be trusted: answer it with a 4xx. */
final class VerificationError extends \Exception
{
    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}

/** The receiver's own mistake (no secret, a secret that is not base64): a 5xx, fix it. */
final class ConfigurationError extends \Exception
{
}

final class Verifier
{
    public const DEFAULT_TOLERANCE_SECONDS = 300;
    /** Most entries read from one signature header: a forged header cannot make us do unbounded work. */
    private const MAX_SIGNATURE_ENTRIES = 8;
    private const SECRET_PREFIX = 'whsec_';

    /** @var list<string> */
    private array $secrets;

    /**
     * @param string|list<string> $secrets one secret, or several during your own rollover (any may match)
     * @param ?float $now Unix seconds; the real clock when null
     */
    public function __construct(
        string|array $secrets,
        private int $toleranceSeconds = self::DEFAULT_TOLERANCE_SECONDS,
        private ?float $now = null,
    ) {
        $list = is_array($secrets) ? array_values($secrets) : [$secrets];
        if ($list === []) {
            throw new ConfigurationError("the webhook secret is unset: an empty key accepts anyone's signature");
        }
        foreach ($list as $secret) {
            if (!is_string($secret) || $secret === '') {
                throw new ConfigurationError("an empty webhook secret: an empty key accepts anyone's signature");
            }
        }
        $this->secrets = $list;
    }

    /** Checks Guard-Signature (one entry, or a rotation's list) against the raw body. */
    public function verifyGuardSignature(string $body, ?string $header): void
    {
        if ($header === null || $header === '') {
            throw new VerificationError('missing_signature', 'the Guard-Signature header is missing');
        }
        $entries = array_values(array_filter(array_map('trim', explode(',', $header)), fn ($e) => $e !== ''));
        if (count($entries) > self::MAX_SIGNATURE_ENTRIES) {
            throw new VerificationError('malformed_signature', 'the Guard-Signature header has too many entries');
        }
        $got = [];
        foreach ($entries as $entry) {
            if (!str_starts_with($entry, 'sha256=')) {
                continue; // another scheme: ignored
            }
            $hex = substr($entry, 7);
            if (preg_match('/\A[0-9a-fA-F]{64}\z/', $hex) !== 1) {
                throw new VerificationError('malformed_signature', 'a sha256= entry is not 64 hex digits');
            }
            $got[] = strtolower($hex);
        }
        if ($got === []) {
            throw new VerificationError('malformed_signature', 'the Guard-Signature header has no "sha256=" entry');
        }
        foreach ($this->secrets as $secret) {
            $want = hash_hmac('sha256', $body, $secret);
            foreach ($got as $entry) {
                if (hash_equals($want, $entry)) {
                    return;
                }
            }
        }
        throw new VerificationError('signature_mismatch', 'the Guard-Signature does not match the body and secret');
    }

    /**
     * The Standard Webhooks key: the text after "whsec_", base64-decoded. Secrets are issued in
     * standard base64; earlier ones were base64url: either alphabet, padding optional.
     */
    public static function standardKey(string $secret): string
    {
        $text = str_starts_with($secret, self::SECRET_PREFIX) ? substr($secret, strlen(self::SECRET_PREFIX)) : $secret;
        $text = strtr(rtrim($text, '='), '-_', '+/');
        $key = base64_decode($text . str_repeat('=', (4 - strlen($text) % 4) % 4), true);
        if ($key === false || $key === '') {
            throw new ConfigurationError('the webhook secret is not whsec_ followed by base64');
        }
        return $key;
    }

    /** Checks the Standard Webhooks headers against the raw body, the timestamp within tolerance. */
    public function verifyStandardWebhooks(string $body, ?string $id, ?string $timestamp, ?string $signature): void
    {
        $keys = array_map([self::class, 'standardKey'], $this->secrets);
        if ($signature === null || $signature === '') {
            throw new VerificationError('missing_signature', 'the webhook-signature header is missing');
        }
        if ($id === null || $id === '' || $timestamp === null || $timestamp === '') {
            throw new VerificationError('missing_signature', 'the webhook-id or webhook-timestamp header is missing');
        }
        if (preg_match('/\A[0-9]{1,12}\z/', $timestamp) !== 1) {
            throw new VerificationError('malformed_signature', 'the webhook-timestamp header is not integer seconds');
        }
        $this->checkTime((float) $timestamp, 'the webhook-timestamp');
        $entries = preg_split('/ +/', trim($signature), -1, PREG_SPLIT_NO_EMPTY);
        if (count($entries) > self::MAX_SIGNATURE_ENTRIES) {
            throw new VerificationError('malformed_signature', 'the webhook-signature header has too many entries');
        }
        $got = [];
        foreach ($entries as $entry) {
            if (!str_starts_with($entry, 'v1,')) {
                continue; // another version: ignored
            }
            $digest = base64_decode(substr($entry, 3), true);
            if ($digest === false) {
                throw new VerificationError('malformed_signature', 'a v1, entry is not base64');
            }
            $got[] = $digest;
        }
        if ($got === []) {
            throw new VerificationError('malformed_signature', 'the webhook-signature header has no "v1," entry');
        }
        $content = "{$id}.{$timestamp}.{$body}";
        foreach ($keys as $key) {
            $want = hash_hmac('sha256', $content, $key, true);
            foreach ($got as $entry) {
                if (hash_equals($want, $entry)) {
                    return;
                }
            }
        }
        throw new VerificationError(
            'signature_mismatch',
            'the webhook-signature does not match the id, timestamp, body and secret',
        );
    }

    /**
     * Verifies one delivery and returns its envelope (an associative array). $body is the raw
     * request body (file_get_contents('php://input')); $headers maps lower-case header names to
     * values. Guard-Signature is checked when present, else the Standard Webhooks headers; then
     * the envelope's signed `timestamp` must be within the tolerance, so a captured request
     * cannot be replayed later.
     *
     * @param array<string, string> $headers
     * @return array<string, mixed>
     */
    public function constructEvent(string $body, array $headers): array
    {
        $guard = $headers['guard-signature'] ?? null;
        if ($guard === null && isset($headers['webhook-signature'])) {
            $this->verifyStandardWebhooks(
                $body,
                $headers['webhook-id'] ?? null,
                $headers['webhook-timestamp'] ?? null,
                $headers['webhook-signature'],
            );
        } else {
            $this->verifyGuardSignature($body, $guard);
        }
        $event = json_decode($body, true);
        $timestamp = is_array($event) ? ($event['timestamp'] ?? null) : null;
        $iso = '/\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)\z/';
        if (!is_string($timestamp) || preg_match($iso, $timestamp) !== 1) {
            throw new VerificationError('invalid_payload', 'the body is not a Guard envelope with a timestamp');
        }
        $sent = new \DateTimeImmutable($timestamp);
        if (($event['version'] ?? null) !== 'v1') {
            throw new VerificationError('invalid_payload', 'the envelope is not version v1');
        }
        $this->checkTime((float) $sent->format('U.u'), "the envelope's timestamp");
        return $event;
    }

    private function checkTime(float $seconds, string $what): void
    {
        $now = $this->now ?? microtime(true);
        if ($seconds < $now - $this->toleranceSeconds) {
            throw new VerificationError('timestamp_too_old', "{$what} is more than {$this->toleranceSeconds} s old (a replay?)");
        }
        if ($seconds > $now + $this->toleranceSeconds) {
            throw new VerificationError('timestamp_in_future', "{$what} is more than {$this->toleranceSeconds} s ahead (check the clock)");
        }
    }
}
