// Package guardwebhook verifies Guard webhooks with Go's standard library alone (Go 1.18 or
// later).
//
// Two signatures come with every delivery, made with the same endpoint secret
// (docs/webhooks.md):
//
//	Guard-Signature: sha256=<hex HMAC-SHA256(key = the secret's UTF-8 text, message = raw body)>
//	webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256(
//	    key = the bytes the secret's text after "whsec_" decodes to,
//	    message = "<webhook-id>.<webhook-timestamp>.<raw body>")>   (Standard Webhooks)
//
// During a secret rotation each signature header lists one entry per valid secret, newest
// first (`sha256=<hex>, sha256=<hex>`; `v1,<b64> v1,<b64>`): a delivery is genuine when any
// entry matches. A Verifier holds a list of secrets too, for your own rollover: any one may
// match.
//
// Copy this package into your module.
package guardwebhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a delivery's signed time may be from the receiver's clock.
const DefaultTolerance = 300 * time.Second

// maxSignatureEntries bounds the entries read from one header: a forged header cannot make a
// receiver do unbounded work.
const maxSignatureEntries = 8

const secretPrefix = "whsec_"

// VerificationError means the request is not to be trusted: answer it with a 4xx.
type VerificationError struct {
	Code    string // missing_signature, malformed_signature, signature_mismatch, invalid_payload, timestamp_too_old, timestamp_in_future
	Message string
}

func (e *VerificationError) Error() string { return e.Code + ": " + e.Message }

func refuse(code, format string, args ...any) error {
	return &VerificationError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrConfiguration wraps the receiver's own mistakes (no secret, a secret that is not base64):
// answer 5xx and fix the configuration; Guard retries.
var ErrConfiguration = errors.New("webhook receiver configuration")

// Event is the V1 envelope of a delivery. Data is left raw: decode it by EventType.
type Event struct {
	EventType  string          `json:"event_type"`
	Version    string          `json:"version"`
	Timestamp  time.Time       `json:"timestamp"`
	TenantID   string          `json:"tenant_id"`
	Data       json.RawMessage `json:"data"`
	ConsoleURL string          `json:"console_url"`
}

// Verifier checks deliveries against one or more secrets (any may match).
type Verifier struct {
	Secrets   []string
	Tolerance time.Duration    // DefaultTolerance when zero
	Now       func() time.Time // time.Now when nil
}

func (v *Verifier) secrets() ([]string, error) {
	if len(v.Secrets) == 0 {
		return nil, fmt.Errorf("%w: no webhook secret: an empty key accepts anyone's signature", ErrConfiguration)
	}
	for _, s := range v.Secrets {
		if s == "" {
			return nil, fmt.Errorf("%w: an empty webhook secret", ErrConfiguration)
		}
	}
	return v.Secrets, nil
}

func (v *Verifier) window() (time.Time, time.Duration) {
	now, tolerance := time.Now(), v.Tolerance
	if v.Now != nil {
		now = v.Now()
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	return now, tolerance
}

func checkTime(sent, now time.Time, tolerance time.Duration, what string) error {
	if sent.Before(now.Add(-tolerance)) {
		return refuse("timestamp_too_old", "%s is more than %v old (a replay?)", what, tolerance)
	}
	if sent.After(now.Add(tolerance)) {
		return refuse("timestamp_in_future", "%s is more than %v ahead (check the clock)", what, tolerance)
	}
	return nil
}

var hex64 = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// VerifyGuardSignature checks Guard-Signature (one entry, or a rotation's list) against the raw body.
func (v *Verifier) VerifyGuardSignature(body []byte, header string) error {
	secrets, err := v.secrets()
	if err != nil {
		return err
	}
	if header == "" {
		return refuse("missing_signature", "the Guard-Signature header is missing")
	}
	var got [][]byte
	entries := 0
	for _, entry := range strings.Split(header, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if entries++; entries > maxSignatureEntries {
			return refuse("malformed_signature", "the Guard-Signature header has too many entries")
		}
		if !strings.HasPrefix(entry, "sha256=") {
			continue // another scheme: ignored
		}
		digest := entry[len("sha256="):]
		if !hex64.MatchString(digest) {
			return refuse("malformed_signature", "a sha256= entry is not 64 hex digits")
		}
		b, _ := hex.DecodeString(digest)
		got = append(got, b)
	}
	if len(got) == 0 {
		return refuse("malformed_signature", `the Guard-Signature header has no "sha256=" entry`)
	}
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		want := mac.Sum(nil)
		for _, entry := range got {
			if hmac.Equal(want, entry) {
				return nil
			}
		}
	}
	return refuse("signature_mismatch", "the Guard-Signature does not match the body and secret")
}

// StandardKey is a secret's Standard Webhooks key: the text after "whsec_", base64-decoded.
// Secrets are issued in standard base64; earlier ones were base64url: either alphabet, padding
// optional.
func StandardKey(secret string) ([]byte, error) {
	text := strings.TrimRight(strings.TrimPrefix(secret, secretPrefix), "=")
	text = strings.NewReplacer("-", "+", "_", "/").Replace(text)
	key, err := base64.RawStdEncoding.DecodeString(text)
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: the webhook secret is not whsec_ followed by base64", ErrConfiguration)
	}
	return key, nil
}

var timestampDigits = regexp.MustCompile(`^[0-9]{1,12}$`)

// VerifyStandardWebhooks checks the Standard Webhooks headers against the raw body, with the
// webhook-timestamp within the tolerance.
func (v *Verifier) VerifyStandardWebhooks(body []byte, id, timestamp, signature string) error {
	secrets, err := v.secrets()
	if err != nil {
		return err
	}
	keys := make([][]byte, 0, len(secrets))
	for _, secret := range secrets {
		key, err := StandardKey(secret)
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	if signature == "" {
		return refuse("missing_signature", "the webhook-signature header is missing")
	}
	if id == "" || timestamp == "" {
		return refuse("missing_signature", "the webhook-id or webhook-timestamp header is missing")
	}
	if !timestampDigits.MatchString(timestamp) {
		return refuse("malformed_signature", "the webhook-timestamp header is not integer seconds")
	}
	seconds, _ := strconv.ParseInt(timestamp, 10, 64)
	now, tolerance := v.window()
	if err := checkTime(time.Unix(seconds, 0), now, tolerance, "the webhook-timestamp"); err != nil {
		return err
	}
	entries := strings.Fields(signature)
	if len(entries) > maxSignatureEntries {
		return refuse("malformed_signature", "the webhook-signature header has too many entries")
	}
	var got [][]byte
	for _, entry := range entries {
		if !strings.HasPrefix(entry, "v1,") {
			continue // another version: ignored
		}
		digest := entry[len("v1,"):]
		b, err := base64.StdEncoding.DecodeString(digest)
		if err != nil {
			return refuse("malformed_signature", "a v1, entry is not base64")
		}
		got = append(got, b)
	}
	if len(got) == 0 {
		return refuse("malformed_signature", `the webhook-signature header has no "v1," entry`)
	}
	content := append([]byte(id+"."+timestamp+"."), body...)
	for _, key := range keys {
		mac := hmac.New(sha256.New, key)
		mac.Write(content)
		want := mac.Sum(nil)
		for _, entry := range got {
			if hmac.Equal(want, entry) {
				return nil
			}
		}
	}
	return refuse("signature_mismatch", "the webhook-signature does not match the id, timestamp, body and secret")
}

// Verify checks one delivery and returns its envelope: Guard-Signature when the request has
// one, else the Standard Webhooks headers; then the envelope's signed timestamp must be within
// the tolerance, so a captured request cannot be replayed later. body is the raw request body,
// exactly as received.
func (v *Verifier) Verify(body []byte, header http.Header) (*Event, error) {
	var err error
	if guard := header.Get("Guard-Signature"); guard == "" && header.Get("Webhook-Signature") != "" {
		err = v.VerifyStandardWebhooks(body, header.Get("Webhook-Id"), header.Get("Webhook-Timestamp"), header.Get("Webhook-Signature"))
	} else {
		err = v.VerifyGuardSignature(body, guard)
	}
	if err != nil {
		return nil, err
	}
	var event Event
	decoder := json.NewDecoder(bytes.NewReader(body))
	if err := decoder.Decode(&event); err != nil || event.Timestamp.IsZero() {
		return nil, refuse("invalid_payload", "the body is not a Guard envelope with a timestamp")
	}
	if event.Version != "v1" {
		return nil, refuse("invalid_payload", "the envelope is not version v1")
	}
	now, tolerance := v.window()
	if err := checkTime(event.Timestamp, now, tolerance, "the envelope's timestamp"); err != nil {
		return nil, err
	}
	return &event, nil
}
