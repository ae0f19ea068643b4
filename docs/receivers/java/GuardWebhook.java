// Verify Guard webhooks with Java's standard library alone (Java 17 or later).
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
// matches. A GuardWebhook holds a list of secrets too, for your own rollover: any one may match.
//
// Copy this file into your project (add your package line). Run it as a script to check a
// captured delivery:
//
//   java GuardWebhook.java [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public final class GuardWebhook {
    public static final Duration DEFAULT_TOLERANCE = Duration.ofSeconds(300);
    /** Most entries read from one signature header: a forged header cannot make us do unbounded work. */
    private static final int MAX_SIGNATURE_ENTRIES = 8;
    private static final String SECRET_PREFIX = "whsec_";
    private static final Pattern HEX64 = Pattern.compile("[0-9a-fA-F]{64}");
    private static final Pattern SECONDS = Pattern.compile("[0-9]{1,12}");

    /** The request is not to be trusted: answer it with a 4xx. */
    public static final class VerificationException extends Exception {
        /** missing_signature, malformed_signature, signature_mismatch, invalid_payload, timestamp_too_old, timestamp_in_future */
        public final String code;

        VerificationException(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** The receiver's own mistake (no secret, a secret that is not base64): a 5xx, fix it. */
    public static final class ConfigurationException extends RuntimeException {
        ConfigurationException(String message) {
            super(message);
        }
    }

    /**
     * A verified delivery: the envelope's type and signed time, and the raw body for your JSON
     * library (Jackson, Gson) to read the rest from.
     */
    public record Event(String eventType, Instant timestamp, String body) {}

    private final List<String> secrets;
    private final Duration tolerance;
    private final Clock clock;

    /** One secret, or several during your own rollover (any one may match). */
    public GuardWebhook(List<String> secrets) {
        this(secrets, DEFAULT_TOLERANCE, Clock.systemUTC());
    }

    public GuardWebhook(List<String> secrets, Duration tolerance, Clock clock) {
        if (secrets == null || secrets.isEmpty() || secrets.stream().anyMatch(s -> s == null || s.isEmpty()))
            throw new ConfigurationException("the webhook secret is unset or empty: an empty key accepts anyone's signature");
        this.secrets = List.copyOf(secrets);
        this.tolerance = tolerance;
        this.clock = clock;
    }

    private static byte[] hmac(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            for (byte[] part : parts) mac.update(part);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** Checks Guard-Signature (one entry, or a rotation's list) against the raw body. */
    public void verifyGuardSignature(byte[] body, String header) throws VerificationException {
        if (header == null || header.isEmpty())
            throw new VerificationException("missing_signature", "the Guard-Signature header is missing");
        List<String> entries = new ArrayList<>();
        for (String entry : header.split(",")) if (!entry.isBlank()) entries.add(entry.strip());
        if (entries.size() > MAX_SIGNATURE_ENTRIES)
            throw new VerificationException("malformed_signature", "the Guard-Signature header has too many entries");
        List<byte[]> got = new ArrayList<>();
        for (String entry : entries) {
            if (!entry.startsWith("sha256=")) continue; // another scheme: ignored
            String hex = entry.substring(7);
            if (!HEX64.matcher(hex).matches())
                throw new VerificationException("malformed_signature", "a sha256= entry is not 64 hex digits");
            got.add(HexFormat.of().parseHex(hex));
        }
        if (got.isEmpty())
            throw new VerificationException("malformed_signature", "the Guard-Signature header has no \"sha256=\" entry");
        for (String secret : secrets) {
            byte[] want = hmac(secret.getBytes(StandardCharsets.UTF_8), body);
            for (byte[] entry : got) if (MessageDigest.isEqual(want, entry)) return;
        }
        throw new VerificationException("signature_mismatch", "the Guard-Signature does not match the body and secret");
    }

    /**
     * The Standard Webhooks key: the text after "whsec_", base64-decoded. Secrets are issued in
     * standard base64; earlier ones were base64url: either alphabet, padding optional.
     */
    public static byte[] standardKey(String secret) {
        String text = secret.startsWith(SECRET_PREFIX) ? secret.substring(SECRET_PREFIX.length()) : secret;
        text = text.replaceFirst("=+$", "").replace('-', '+').replace('_', '/');
        try {
            byte[] key = java.util.Base64.getDecoder().decode(text);
            if (key.length > 0) return key;
        } catch (IllegalArgumentException e) {
            // reported below
        }
        throw new ConfigurationException("the webhook secret is not whsec_ followed by base64");
    }

    private void checkTime(Instant sent, String what) throws VerificationException {
        Instant now = clock.instant();
        if (sent.isBefore(now.minus(tolerance)))
            throw new VerificationException("timestamp_too_old", what + " is more than " + tolerance.toSeconds() + " s old (a replay?)");
        if (sent.isAfter(now.plus(tolerance)))
            throw new VerificationException("timestamp_in_future", what + " is more than " + tolerance.toSeconds() + " s ahead (check the clock)");
    }

    /** Checks the Standard Webhooks headers against the raw body, the timestamp within the tolerance. */
    public void verifyStandardWebhooks(byte[] body, String id, String timestamp, String signature)
            throws VerificationException {
        List<byte[]> keys = secrets.stream().map(GuardWebhook::standardKey).toList();
        if (signature == null || signature.isEmpty())
            throw new VerificationException("missing_signature", "the webhook-signature header is missing");
        if (id == null || id.isEmpty() || timestamp == null || timestamp.isEmpty())
            throw new VerificationException("missing_signature", "the webhook-id or webhook-timestamp header is missing");
        if (!SECONDS.matcher(timestamp).matches())
            throw new VerificationException("malformed_signature", "the webhook-timestamp header is not integer seconds");
        checkTime(Instant.ofEpochSecond(Long.parseLong(timestamp)), "the webhook-timestamp");
        String[] entries = signature.strip().split(" +");
        if (entries.length > MAX_SIGNATURE_ENTRIES)
            throw new VerificationException("malformed_signature", "the webhook-signature header has too many entries");
        List<byte[]> got = new ArrayList<>();
        for (String entry : entries) {
            if (!entry.startsWith("v1,")) continue; // another version: ignored
            try {
                got.add(java.util.Base64.getDecoder().decode(entry.substring(3)));
            } catch (IllegalArgumentException e) {
                throw new VerificationException("malformed_signature", "a v1, entry is not base64");
            }
        }
        if (got.isEmpty())
            throw new VerificationException("malformed_signature", "the webhook-signature header has no \"v1,\" entry");
        byte[] signed = (id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
        for (byte[] key : keys) {
            byte[] want = hmac(key, signed, body);
            for (byte[] entry : got) if (MessageDigest.isEqual(want, entry)) return;
        }
        throw new VerificationException("signature_mismatch", "the webhook-signature does not match the id, timestamp, body and secret");
    }

    /**
     * Verifies one delivery. {@code body} is the raw request body, exactly as received;
     * {@code header} looks a header up by name, case-insensitively (for the JDK's HttpServer:
     * {@code exchange.getRequestHeaders()::getFirst}; for a servlet: {@code request::getHeader}).
     * Guard-Signature is checked when present, else the Standard Webhooks headers; then the
     * envelope's signed {@code timestamp} must be within the tolerance, so a captured request
     * cannot be replayed later.
     */
    public Event constructEvent(byte[] body, Function<String, String> header) throws VerificationException {
        String guard = header.apply("Guard-Signature");
        if (guard == null && header.apply("webhook-signature") != null)
            verifyStandardWebhooks(body, header.apply("webhook-id"), header.apply("webhook-timestamp"), header.apply("webhook-signature"));
        else verifyGuardSignature(body, guard);
        String text = new String(body, StandardCharsets.UTF_8);
        Map<String, String> envelope = JsonMembers.topLevelStrings(text);
        Instant sent;
        try {
            sent = OffsetDateTime.parse(envelope.getOrDefault("timestamp", "")).toInstant();
        } catch (DateTimeParseException e) {
            throw new VerificationException("invalid_payload", "the body is not a Guard envelope with a timestamp");
        }
        if (!"v1".equals(envelope.get("version")))
            throw new VerificationException("invalid_payload", "the envelope is not version v1");
        checkTime(sent, "the envelope's timestamp");
        return new Event(envelope.get("event_type"), sent, text);
    }

    /**
     * The string members of a JSON object, nested values skipped: enough to check the envelope
     * without a JSON library (the JDK has none). Parse the body with yours once it is verified.
     */
    static final class JsonMembers {
        private final String s;
        private int i;

        private JsonMembers(String s) {
            this.s = s;
        }

        static Map<String, String> topLevelStrings(String json) throws VerificationException {
            JsonMembers p = new JsonMembers(json);
            Map<String, String> out = new HashMap<>();
            try {
                p.expect('{');
                if (!p.consume('}')) {
                    do {
                        p.ws();
                        String name = p.string();
                        p.expect(':');
                        p.ws();
                        if (p.peek() == '"') out.put(name, p.string());
                        else p.skipValue();
                    } while (p.consume(','));
                    p.expect('}');
                }
                p.ws();
                if (p.i != json.length()) throw new IllegalArgumentException("trailing text");
            } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
                throw new VerificationException("invalid_payload", "the body is not a JSON object");
            }
            return out;
        }

        private char peek() {
            return s.charAt(i);
        }

        private void ws() {
            while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
        }

        private boolean consume(char c) {
            ws();
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!consume(c)) throw new IllegalArgumentException("expected " + c);
        }

        private String string() {
            if (s.charAt(i++) != '"') throw new IllegalArgumentException("expected a string");
            StringBuilder b = new StringBuilder();
            for (char c = s.charAt(i++); c != '"'; c = s.charAt(i++)) {
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e); // \" \\ \/
                }
            }
            return b.toString();
        }

        private void skipValue() {
            int depth = 0;
            do {
                char c = s.charAt(i);
                if (c == '"') {
                    string();
                    continue;
                }
                if (c == '{' || c == '[') depth++;
                else if (c == '}' || c == ']') {
                    if (depth == 0) return; // the end of the enclosing object
                    depth--;
                } else if (c == ',' && depth == 0) return;
                i++;
            } while (depth > 0 || (i < s.length() && ",}] \t\r\n".indexOf(s.charAt(i)) < 0));
        }
    }

    /** Checks a captured delivery: exit 0 when genuine, 1 when refused, 2 for a usage mistake. */
    public static void main(String[] args) throws IOException {
        String usage = "java GuardWebhook.java [--now=SECONDS] guard-signature|standard-webhooks HEADERS BODY SECRET...";
        List<String> rest = new ArrayList<>(List.of(args));
        Clock clock = Clock.systemUTC();
        if (!rest.isEmpty() && rest.get(0).startsWith("--now=")) {
            double seconds = Double.parseDouble(rest.remove(0).substring("--now=".length()));
            clock = Clock.fixed(Instant.ofEpochMilli(Math.round(seconds * 1000)), ZoneOffset.UTC);
        }
        if (rest.size() < 4 || !List.of("guard-signature", "standard-webhooks").contains(rest.get(0))) {
            System.err.println(usage);
            System.exit(2);
        }
        String scheme = rest.get(0);
        Map<String, String> headers = new HashMap<>();
        for (String line : Files.readAllLines(Path.of(rest.get(1)), StandardCharsets.UTF_8)) {
            int colon = line.indexOf(':');
            if (colon >= 0) headers.put(line.substring(0, colon).strip().toLowerCase(), line.substring(colon + 1).strip());
        }
        // Leave out the other scheme's headers, so constructEvent checks the one asked for.
        if (scheme.equals("standard-webhooks")) headers.remove("guard-signature");
        else List.of("webhook-signature", "webhook-id", "webhook-timestamp").forEach(headers::remove);
        byte[] body = Files.readAllBytes(Path.of(rest.get(2)));
        try {
            GuardWebhook verifier = new GuardWebhook(rest.subList(3, rest.size()), DEFAULT_TOLERANCE, clock);
            Event event = verifier.constructEvent(body, name -> headers.get(name.toLowerCase()));
            System.out.println("verified by " + scheme + ": " + event.eventType());
        } catch (VerificationException e) {
            System.err.println("refused (" + e.code + "): " + e.getMessage());
            System.exit(1);
        } catch (ConfigurationException e) {
            System.err.println("configuration: " + e.getMessage());
            System.exit(2);
        }
    }
}
